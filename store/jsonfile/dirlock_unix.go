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

// lockDir takes exclusive advisory locks (flock) on the lock files of
// dir, held until the returned files are closed (last first): the kernel
// drops them when the process ends, however it ends. The first is the
// store's own lock file, which keeps out another store; the second is
// gateway_runner.lock, which a Python gateway runner holds for its whole
// life (spec gateway-api §8.2): holding it keeps out a Python runner
// started after us, and finding it held keeps us out of a directory a
// live Python runner is ticking (both would run the same runs' effects).
// A directory the process may not write to is not locked: no files,
// readOnly true.
func lockDir(dir string) (locks []*os.File, readOnly bool, err error) {
	if syscall.Access(dir, 2 /* W_OK */) != nil {
		// A directory this process cannot write to (its permissions, a
		// read-only mount) is only read here: there is nothing to
		// protect, every write fails anyway.
		return nil, true, nil
	}
	path := lockPath(dir)
	// 0644: the store's lock file has always been made so; flockFile
	// copes with one it may not write.
	own, _, err := flockFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, false, fmt.Errorf("%w: %s (its lock file %s is held, by this process or another)", ErrDirInUse, dir, path)
	}
	if err != nil {
		return nil, false, err
	}
	path = runnerLockPath(dir)
	// Append mode and 0666 under the umask, as Python's open(path, "a"):
	// the file is Python's, which never truncates it.
	runner, writable, err := flockFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		_ = own.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, fmt.Errorf("%w: %s (its runner lock file %s is held, likely by a Python gateway runner working on it)", ErrDirInUse, dir, path)
		}
		return nil, false, err
	}
	if writable {
		// The line a Python runner writes on taking the lock, so the file
		// tells who held it last. Only informative: a failed write (full
		// disk) leaves the lock held all the same.
		_, _ = fmt.Fprintf(runner, "pid=%d\n", os.Getpid())
	}
	return []*os.File{own, runner}, false, nil
}

// flockFile opens path with flag and perm and takes a non-blocking
// exclusive flock on it, trying again for a moment (lockWaits) while it
// is held. flock needs no write access: a lock file another user created
// (0644) in a directory this one may write is locked read-only (writable
// false), or two writers would share the directory. A lock held when the
// tries run out is an error wrapping syscall.EWOULDBLOCK.
func flockFile(path string, flag int, perm fs.FileMode) (f *os.File, writable bool, err error) {
	f, err = os.OpenFile(path, flag, perm)
	writable = err == nil
	if errors.Is(err, fs.ErrPermission) {
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
	if err != nil {
		_ = f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, writable, nil
}

// unlockFile releases f's flock before it is closed. Closing alone is not
// enough: a child this process forked and that has not exec'd yet holds a
// copy of the descriptor, and with it the lock, so a Python runner started
// right after Close would be refused. LOCK_UN acts on the open file
// description, whoever else holds it.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
