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
// write to is not locked: nil file, readOnly true.
func lockDir(dir string) (f *os.File, readOnly bool, err error) {
	if syscall.Access(dir, 2 /* W_OK */) != nil {
		// A directory this process cannot write to (its permissions, a
		// read-only mount) is only read here: there is nothing to
		// protect, every write fails anyway.
		return nil, true, nil
	}
	path := lockPath(dir)
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		// flock needs no write access: a lock file another user created
		// (0644) in a directory this one may write is locked read-only,
		// or two writers would share the directory.
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("opening the lock file %s: %w", path, err)
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
		return nil, false, fmt.Errorf("%w: %s (its lock file %s is held, by this process or another)", ErrDirInUse, dir, path)
	case err != nil:
		_ = f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, false, nil
}
