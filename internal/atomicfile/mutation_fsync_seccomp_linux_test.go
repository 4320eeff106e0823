//go:build linux && amd64

package atomicfile_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
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
	if os.Getenv(fsyncFailsEnv) != "" {
		t.Skip("the child runs TestWritesAreSyncedBeforeTheRenameChild")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWritesAreSyncedBeforeTheRenameChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fsyncFailsEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP: TestWritesAreSyncedBeforeTheRenameChild") {
		t.Skipf("child skipped:\n%s", out)
	}
}

func TestWritesAreSyncedBeforeTheRenameChild(t *testing.T) {
	dir := os.Getenv(fsyncFailsEnv)
	if dir == "" {
		t.Skip("run by TestWritesAreSyncedBeforeTheRename")
	}
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

	failEveryFsync(t)
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

// failEveryFsync installs, in every thread of the process, a seccomp
// filter under which fsync and fdatasync fail with EIO.
func failEveryFsync(t *testing.T) {
	t.Helper()
	const (
		ldAbsW      = 0x20 // BPF_LD | BPF_W | BPF_ABS
		jeqK        = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
		retK        = 0x06 // BPF_RET | BPF_K
		archX86_64  = 0xC000003E
		retAllow    = 0x7fff0000
		retErrno    = 0x00050000
		sysSeccomp  = 317
		setFilter   = 1 // SECCOMP_SET_MODE_FILTER
		flagTSync   = 1 // SECCOMP_FILTER_FLAG_TSYNC
		noNewPrivs  = 38
		offsetNr    = 0
		offsetArch  = 4
		sysFsync    = 74
		sysFdatasyn = 75
	)
	filter := []syscall.SockFilter{
		{Code: ldAbsW, K: offsetArch},
		{Code: jeqK, Jt: 0, Jf: 3, K: archX86_64},
		{Code: ldAbsW, K: offsetNr},
		{Code: jeqK, Jt: 2, Jf: 0, K: sysFsync},
		{Code: jeqK, Jt: 1, Jf: 0, K: sysFdatasyn},
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
