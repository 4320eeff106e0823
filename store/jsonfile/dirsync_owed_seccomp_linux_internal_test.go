//go:build linux && amd64

package jsonfile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/abstractframework/abstractgateway/durable"
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
	if os.Getenv(dirSyncFailsEnv) != "" {
		t.Skip("the child runs TestFailedDirectorySyncIsOwedChild")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailedDirectorySyncIsOwedChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), dirSyncFailsEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP: TestFailedDirectorySyncIsOwedChild") {
		t.Skipf("child skipped:\n%s", out)
	}
}

func TestFailedDirectorySyncIsOwedChild(t *testing.T) {
	dir := os.Getenv(dirSyncFailsEnv)
	if dir == "" {
		t.Skip("run by TestFailedDirectorySyncIsOwed")
	}
	ctx := context.Background()
	s := openInternalSync(t, dir, false)
	saved := &durable.RunState{RunID: "saved", WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a", Vars: map[string]any{}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: saved, Create: true}); err != nil {
		t.Fatal(err)
	}
	if s.dirUnsynced.Load() {
		t.Fatal("precondition: a directory sync owed before the filter")
	}

	failReadOnlyOpens(t)
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

// failReadOnlyOpens installs, in every thread of the process, a seccomp
// filter under which an openat with O_RDONLY access fails with EIO.
func failReadOnlyOpens(t *testing.T) {
	t.Helper()
	const (
		ldAbsW     = 0x20 // BPF_LD | BPF_W | BPF_ABS
		andK       = 0x54 // BPF_ALU | BPF_AND | BPF_K
		jeqK       = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
		retK       = 0x06 // BPF_RET | BPF_K
		archX86_64 = 0xC000003E
		retAllow   = 0x7fff0000
		retErrno   = 0x00050000
		sysSeccomp = 317
		setFilter  = 1 // SECCOMP_SET_MODE_FILTER
		flagTSync  = 1 // SECCOMP_FILTER_FLAG_TSYNC
		noNewPrivs = 38
		offsetNr   = 0
		offsetArch = 4
		offsetArg2 = 32 // args[2], low word (little-endian)
		sysOpenat  = 257
	)
	filter := []syscall.SockFilter{
		{Code: ldAbsW, K: offsetArch},
		{Code: jeqK, Jt: 0, Jf: 5, K: archX86_64},
		{Code: ldAbsW, K: offsetNr},
		{Code: jeqK, Jt: 0, Jf: 3, K: sysOpenat},
		{Code: ldAbsW, K: offsetArg2},
		{Code: andK, K: syscall.O_ACCMODE},
		{Code: jeqK, Jt: 1, Jf: 0, K: syscall.O_RDONLY},
		{Code: retK, K: retAllow},
		{Code: retK, K: retErrno | uint32(syscall.EIO)},
	}
	prog := syscall.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, noNewPrivs, 1, 0); e != 0 {
		t.Skipf("prctl(PR_SET_NO_NEW_PRIVS): %v", e)
	}
	if _, _, e := syscall.RawSyscall(sysSeccomp, setFilter, flagTSync, uintptr(unsafe.Pointer(&prog))); e != 0 {
		t.Skipf("seccomp filter unavailable: %v", e)
	}
}
