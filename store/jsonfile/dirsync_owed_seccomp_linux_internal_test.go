//go:build linux && amd64

package jsonfile

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/seccomptest"
	"github.com/abstractframework/abstractgateway/store"
)

// dirSyncFailsEnv names the directory the child of
// TestFailedDirectorySyncIsOwed works in; set, the child test runs.
const dirSyncFailsEnv = "JSONFILE_TEST_DIRSYNC_FAILS_DIR"

// TestFailedDirectorySyncIsOwed: every write that renames a file into
// place (writeNew for a new run, replaceFile for a saved one, writeFile)
// syncs the directory after it, and one whose directory sync failed
// leaves the store owing it (dirUnsynced), for the next append to pay, as
// does a failed syncDir. Run in a child process where no file can be
// opened read-only (a seccomp filter on openat), which fails the
// directory's open for its sync and nothing else these writes do. Kills
// the mutations that drop SyncDir from the store's file options (no
// rename would ever be made durable, and nothing else tells) or that
// drop the dirUnsynced.Store(true) of writeNew (jsonfile.go, owed with
// no test until now), replaceFile, writeFile or syncDir.
func TestFailedDirectorySyncIsOwed(t *testing.T) {
	seccomptest.RunChild(t, dirSyncFailsEnv, "TestFailedDirectorySyncIsOwedChild")
}

func TestFailedDirectorySyncIsOwedChild(t *testing.T) {
	dir := seccomptest.ChildDir(t, dirSyncFailsEnv)
	ctx := context.Background()
	s := openInternalSync(t, dir, false)
	saved := &durable.RunState{RunID: "saved", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: saved, Create: true}); err != nil {
		t.Fatal(err)
	}
	if s.dirUnsynced.Load() {
		t.Fatal("precondition: a directory sync owed before the filter")
	}

	seccomptest.FailReadOnlyOpens(t, syscall.EIO)
	if _, err := os.Open(dir); err == nil {
		t.Fatal("precondition: the directory still opens under the filter")
	}

	owed := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s whose directory sync failed succeeded; want its error (the rename may not survive a power loss)", what)
		}
		if !s.dirUnsynced.Load() {
			t.Errorf("%s whose directory sync failed (%v) left no directory sync owed", what, err)
		}
		s.dirUnsynced.Store(false)
	}
	created := &durable.RunState{RunID: "new", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{}}
	err := s.RunCommit(ctx, &store.CommitParams{Run: created, Create: true})
	if _, serr := os.Stat(s.runPath("new")); serr != nil {
		t.Fatalf("precondition: the new run file is not in place (%v, commit: %v)", serr, err)
	}
	owed("RunCommit creating a run", err)
	saved.CurrentNode = "b"
	owed("RunCommit saving a run", s.RunCommit(ctx, &store.CommitParams{Run: saved}))
	owed("writeFile", s.writeFile(filepath.Join(dir, "other.json"), []byte("{}")))
	owed("syncDir", s.syncDir())
}
