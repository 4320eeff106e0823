//go:build unix

package jsonfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lockWaits are the pauses before each new attempt to lock a directory
// held by someone else (~300 ms in all): a process that forks (to run a
// command) shares the lock with the child until the child execs, so a
// store closed and reopened meanwhile may find it held for a moment.
var lockWaits = []time.Duration{1, 2, 5, 10, 20, 40, 80, 150}

// lockDir takes an exclusive advisory lock (flock) on the lock file of
// dir, held until the returned file is closed: the kernel drops it when
// the process ends, however it ends. A directory the process may not
// write to is not locked (nil file).
func lockDir(dir string) (*os.File, error) {
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		// A directory this process cannot write to is only read here:
		// there is nothing to protect (every write fails anyway).
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w", path, err)
	}
	for i := 0; ; i++ {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || i == len(lockWaits) {
			break
		}
		time.Sleep(lockWaits[i] * time.Millisecond)
	}
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s (its lock file %s is held, by this process or another)", ErrDirInUse, dir, path)
	case err != nil:
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
