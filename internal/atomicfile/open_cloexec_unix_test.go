//go:build unix

package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// OpenFile's descriptors are close-on-exec, as os.OpenFile's are: a
// child process the gateway starts (a sandboxed code run, a Python peer)
// must not inherit the data directory's open files. Breaks if OpenFile
// drops O_CLOEXEC.
func TestOpenFileIsCloseOnExec(t *testing.T) {
	t.Parallel()
	f, err := atomicfile.OpenFile(filepath.Join(t.TempDir(), "run.json"), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("descriptor flags %#x; want FD_CLOEXEC", flags)
	}
}
