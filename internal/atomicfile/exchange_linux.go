//go:build linux

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// exchange atomically swaps the files named a and b (fs.ErrNotExist when
// either is missing).
func exchange(a, b string) error { return renameat2(a, b, unix.RENAME_EXCHANGE) }

// renameNoReplace renames a to b unless b exists (fs.ErrExist), in one
// atomic step.
func renameNoReplace(a, b string) error { return renameat2(a, b, unix.RENAME_NOREPLACE) }

// renameat2 renames with flags, reporting a missing name as
// fs.ErrNotExist, an existing target as fs.ErrExist, and flags the file
// system or kernel cannot honour as errExchangeUnsupported.
func renameat2(a, b string, flags uint) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, flags)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return errExchangeUnsupported
	case errors.Is(err, unix.ENOENT):
		err = fs.ErrNotExist
	case errors.Is(err, unix.EEXIST):
		err = fs.ErrExist
	}
	return fmt.Errorf("renameat2 %s %s: %w", a, b, err)
}

// linkedElsewhere reports whether f's file has a name besides the one it
// was opened by.
func linkedElsewhere(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1, nil
}

// openElsewhere reports whether another descriptor, of this process or
// another, has f's file open: Linux grants a write lease only on a file
// no other descriptor holds (fcntl F_SETLEASE), and it is released at
// once. known is false when the kernel or file system grants no lease
// here (leases off, a file another user owns, a network file system):
// then nothing is known. A variable so that a test can answer "not
// known" on a file system that grants leases.
var openElsewhere = func(f *os.File) (open, known bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		if _, lerr = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_WRLCK); lerr == nil {
			_, _ = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK)
		}
	}); err != nil {
		return false, false
	}
	switch {
	case lerr == nil:
		return false, true
	case errors.Is(lerr, unix.EAGAIN), errors.Is(lerr, unix.EBUSY):
		return true, true
	}
	return false, false
}
