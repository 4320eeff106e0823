package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
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

// TestFullCommitFailsWhenTheRedoLogCannotBeSynced guards the fdatasync of
// each redo append with synchronous=FULL: the commit is durable only
// once that sync succeeds, so a failed sync is the commit's error. The
// log's file is swapped for /dev/null, where writes succeed and
// fdatasync fails (EINVAL); a NORMAL store, which does not sync, commits.
func TestFullCommitFailsWhenTheRedoLogCannotBeSynced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on fdatasync of /dev/null failing")
	}
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) {
			g := newRedoRig(t, sync)
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			g.s.redo.mu.Lock()
			_ = g.s.redo.file.f.Close()
			g.s.redo.file.f = null // closed by the store's Close
			g.s.redo.mu.Unlock()
			r := redoRun(strings.Repeat("s", 32))
			err = g.s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true, RandomID: true})
			switch {
			case sync == "FULL" && (err == nil || !strings.Contains(err.Error(), "syncing the redo log")):
				t.Fatalf("FULL commit whose redo record could not be synced: %v, want a sync error", err)
			case sync == "NORMAL" && err != nil:
				t.Fatalf("NORMAL commit (no sync) failed: %v", err)
			}
		})
	}
}
