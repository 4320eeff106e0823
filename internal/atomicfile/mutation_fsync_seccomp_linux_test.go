//go:build linux && amd64

package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/seccomptest"
)

// fsyncFailsEnv names the directory the child of
// TestWritesAreSyncedBeforeTheRename works in; set, the child test runs.
const fsyncFailsEnv = "ATOMICFILE_TEST_FSYNC_FAILS_DIR"

// TestWritesAreSyncedBeforeTheRename: a Write or a Recycler's Replace
// fsyncs the new content before it takes the target's name, so that a
// power loss never leaves the name on a file whose data never reached
// the disk. Run in a child process whose every fsync fails (a seccomp
// filter), each write fails and leaves the old content in place. Kills
// the mutations that skip the temp file's f.Sync() in write
// (atomicfile.go) or the spare's in Recycler.fill (recycle.go): without
// them the new content is renamed in place and only the directory sync
// fails (ErrUnsynced). Also kills those that drop SyncDir's own fsync
// or lose its error. No other test sees them: a process kill loses
// nothing an fsync would have kept.
func TestWritesAreSyncedBeforeTheRename(t *testing.T) {
	seccomptest.RunChild(t, fsyncFailsEnv, "TestWritesAreSyncedBeforeTheRenameChild")
}

func TestWritesAreSyncedBeforeTheRenameChild(t *testing.T) {
	dir := seccomptest.ChildDir(t, fsyncFailsEnv)
	write := filepath.Join(dir, "write.json")
	replace := filepath.Join(dir, "replace.json")
	for _, p := range []string{write, replace} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := atomicfile.NewRecycler(dir, atomicfile.Options{SyncDir: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()

	seccomptest.FailSyscalls(t, syscall.EIO, syscall.SYS_FSYNC, syscall.SYS_FDATASYNC)
	probe, err := os.CreateTemp(dir, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fsync under the filter: %v, want EIO", err)
	}
	_ = probe.Close()

	err = atomicfile.Write(write, []byte("new"), atomicfile.Options{SyncDir: true})
	checkUnsyncedWrite(t, "Write", write, err)
	err = r.Replace(replace, []byte("new"))
	checkUnsyncedWrite(t, "Recycler.Replace", replace, err)

	// SyncDir reports the failed fsync of the directory: a rename it was
	// to make durable is not (breaks if SyncDir skips the d.Sync() or lets
	// the Close's nil error hide it).
	if err := atomicfile.SyncDir(dir); !errors.Is(err, syscall.EIO) {
		t.Errorf("SyncDir whose fsync failed = %v; want EIO", err)
	}
}

func checkUnsyncedWrite(t *testing.T, what, path string, err error) {
	t.Helper()
	if err == nil || errors.Is(err, atomicfile.ErrUnsynced) {
		t.Errorf("%s whose file fsync failed: err = %v; want a failure before the rename (not ErrUnsynced)", what, err)
	}
	if b, rerr := os.ReadFile(path); rerr != nil || string(b) != "old" {
		t.Errorf("%s whose file fsync failed left %q (%v) at %s; want \"old\": unsynced data took the name", what, b, rerr, filepath.Base(path))
	}
}
