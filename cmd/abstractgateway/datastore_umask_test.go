package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDataDirIsCreatedGroupWritableUnderTheUmask: a data dir the command
// creates gets 0777 under the umask, as Python's mkdir gives, so a
// group-shared data dir stays writable by the group's other members.
// Would break if it were created 0755. Not parallel: it sets the umask
// of the process.
func TestDataDirIsCreatedGroupWritableUnderTheUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "new", "data")
	for _, kind := range []storeKind{storeSQLite, storeJSON} {
		d := filepath.Join(dir, string(kind))
		ds, err := openDataStore(context.Background(), d, kind)
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o775 {
			t.Errorf("%s data dir created with mode %o under umask 002, want 775", kind, got)
		}
	}
}
