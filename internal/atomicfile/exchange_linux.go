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
