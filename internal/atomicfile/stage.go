package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Stage writes data to a file named name in the Recycler's directory,
// ready for Promote, and returns its path. Staging lets a caller make a
// replacement recoverable: the new content is complete and durable under
// a name the caller chose before the caller writes anything that depends
// on it, so a process that opens the directory after a crash finds it by
// that name and can put it in place itself (the JSON store stages a run's
// terminal state before appending its ledger records). The file comes
// from the spare pool, so staging creates no file once the pool has one;
// unless NoSync, the file and its name are synced before Stage returns.
// An existing file of that name is replaced.
func (r *Recycler) Stage(name string, data []byte) (string, error) {
	staged := filepath.Join(r.dir, name)
	if filepath.Dir(staged) != filepath.Clean(r.dir) {
		return "", fmt.Errorf("staging %q: not a file name in %s", name, r.dir)
	}
	spare, err := r.filledSpare(data)
	if err != nil {
		return "", err
	}
	if err := rename(spare, staged); err != nil {
		r.discard(spare)
		return "", fmt.Errorf("staging %s: %w", name, err)
	}
	if err := r.syncDir(); err != nil {
		r.discard(staged)
		return "", err
	}
	return staged, nil
}

// ErrUnsynced reports that a file was put in place but the directory sync
// that makes it survive a power loss failed.
var ErrUnsynced = errors.New("in place, but the directory sync failed")

// Promote atomically replaces the file at path with the staged file and
// consumes the staged name when it succeeds. Where the exchange works the
// displaced file becomes a spare again; elsewhere the staged file is
// renamed over path. On an error path is unchanged and the staged file is
// left under its name, for the caller to Unstage once it has undone what
// depends on it (so that a crash in between leaves the staged name for the
// next open to judge); unless the error wraps ErrUnsynced: then path holds
// the new content but may not keep it through a power loss, and nothing
// is left under the staged name.
func (r *Recycler) Promote(staged, path string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("promoting %s: %s is not a regular file", filepath.Base(staged), path)
	}
	if !r.unsupported.Load() {
		switch err := exchange(staged, path); {
		case err == nil:
			if err := r.syncDir(); err != nil {
				// Not known to be durable: the displaced content may come
				// back under path after a power loss, so it is never
				// written again.
				r.discard(staged)
				return fmt.Errorf("%w: %w", ErrUnsynced, err)
			}
			r.Unstage(staged) // the displaced content, now under the staged name
			return nil
		case errors.Is(err, errExchangeUnsupported):
			r.unsupported.Store(true)
		case errors.Is(err, fs.ErrNotExist):
			// No file at path (or the staged one is gone): rename below.
		default:
			return fmt.Errorf("exchanging %s into place: %w", path, err)
		}
	}
	if err := rename(staged, path); err != nil {
		return fmt.Errorf("renaming %s into place: %w", path, err)
	}
	if err := r.syncDir(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsynced, err)
	}
	return nil
}

// Unstage gives a staged file back to the spare pool (it is renamed to a
// spare name, or removed when that fails).
func (r *Recycler) Unstage(staged string) {
	spare := r.newSpareName()
	if err := rename(staged, spare); err != nil {
		r.discard(staged)
		return
	}
	r.give(spare)
}

// syncDir syncs the directory when the options ask for it.
func (r *Recycler) syncDir() error {
	if r.opts.SyncDir && !r.opts.NoSync {
		return syncDirectory(r.dir)
	}
	return nil
}
