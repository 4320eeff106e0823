//go:build unix

package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// TestJSONFollowsTheUmaskAsPythonsDoes: in a group-shared data dir (umask
// 002) Python's JsonSnapshotStore makes its directory 0777 and its files
// 0666 under the umask (0775, 0664), so another member of the group may
// write them; ours must too.
func TestJSONFollowsTheUmaskAsPythonsDoes(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "snapshots")
	s, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), &durable.Snapshot{SnapshotID: "s1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		dir:                                    0o775,
		filepath.Join(dir, "snapshot_s1.json"): 0o664,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v under umask 002, want %v (as Python's mkdir and open give)", path, got, want)
		}
	}
}
