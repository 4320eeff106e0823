package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRedoAppendWhoseSyncFailedIsNotReplayed: a FULL commit whose redo
// record was written but not synced is reported failed (RunCommit: on any
// error nothing is written), so a later open must not replay it. The
// record was whole in the file with a valid checksum; it is now unwritten,
// and the next append takes its place and its LSN.
func TestRedoAppendWhoseSyncFailedIsNotReplayed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db"+redoSuffix)
	r, err := openRedoFile(path, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if _, err := r.append([]byte("first")); err != nil {
		t.Fatal(err)
	}
	r.syncData = func(*os.File) error { return errors.New("EIO") }
	if _, err := r.append([]byte("failed")); err == nil {
		t.Fatal("append whose sync failed succeeded")
	}
	scan := func() []string {
		var got []string
		if _, err := redoScan(path, func(_ int64, p []byte) error { got = append(got, string(p)); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := scan(); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("a reopen would replay %q, want only the acknowledged record", got)
	}
	r.syncData = fdatasync
	if lsn, err := r.append([]byte("third")); err != nil || lsn != 2 {
		t.Fatalf("append after the failure = LSN %d, %v; want 2", lsn, err)
	}
	if got := scan(); !slices.Equal(got, []string{"first", "third"}) {
		t.Fatalf("records = %q, want first and third", got)
	}
}
