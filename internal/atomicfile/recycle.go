package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// SparePattern matches the names of a Recycler's spare files (hidden, so
// that no reader of the directory takes them for data).
const SparePattern = ".spare-*.tmp"

// Recycler replaces existing files atomically without creating a file for
// each write. Write creates a temp file and renames it over the target,
// and creating a file is the dearest step of that on some file systems
// (about 300 µs on the ext4 of docs/benchmarks.md, against ~15 µs for a
// rename). Replace instead writes a spare file and atomically exchanges it
// with the target (renameat2 RENAME_EXCHANGE); the spare then holds the
// old content and is reused by the next Replace. Readers that open the
// path see the old or the new file, never a mix, as with Write. A
// displaced file that a reader still has open (another process reading
// the old state, a backup copying it: Linux tells through a write lease,
// which it grants only on a file nobody else holds), or that another link
// names (a hard-linked copy of the directory), is never written again: it
// is unlinked and left to them. Where leases are not granted (a network
// file system, leases turned off) displaced files are not reused at all.
//
// Spares live in the directory while the Recycler is open (one per
// concurrent Replace, usually one) and are removed by Close; spares left
// by a crash are removed by the next NewRecycler. Where the exchange is
// not available (not Linux, or a file system without it) Replace falls
// back to Write.
type Recycler struct {
	dir         string
	opts        Options
	mu          sync.Mutex
	spares      []string // spare paths not in use
	unsupported atomic.Bool
	// noLease is set once a displaced file could not be checked for
	// readers (openElsewhere did not know): displaced files are then
	// removed instead of kept as spares.
	noLease atomic.Bool
}

// NewRecycler returns a Recycler for files of dir written with opts; with
// clean (the caller owns dir) it removes the spares a previous process
// left there.
func NewRecycler(dir string, opts Options, clean bool) (*Recycler, error) {
	if clean {
		left, err := Glob(dir, SparePattern)
		if err != nil {
			return nil, fmt.Errorf("listing spare files in %s: %w", dir, err)
		}
		for _, p := range left {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("removing leftover spare file: %w", err)
			}
		}
	}
	return &Recycler{dir: dir, opts: opts}, nil
}

// Replace atomically replaces the existing file at path (in the
// Recycler's directory) with data. A missing path is created (the
// filled spare is renamed to it). An error wrapping ErrUnsynced means
// the new content is in place but its directory sync failed; on any
// other error path is unchanged.
func (r *Recycler) Replace(path string, data []byte) error {
	if r.unsupported.Load() {
		return Write(path, data, r.opts)
	}
	// An exchange would also swap a directory or a symlink into the
	// spare's place; only a regular file is replaced this way.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return Write(path, data, r.opts)
	}
	spare, err := r.filledSpare(data)
	if errors.Is(err, fs.ErrNotExist) {
		// Removed behind our back (another process opening the
		// directory removes spares it finds): write the usual way.
		return Write(path, data, r.opts)
	}
	if err != nil {
		return err
	}
	displaced := ""
	switch err := exchange(spare, path); {
	case err == nil:
		// The spare now holds the old content; it is overwritten next
		// time, once the exchange is durable (below).
		displaced = spare
	case errors.Is(err, fs.ErrNotExist):
		// No file to replace: the filled spare becomes it.
		if err := rename(spare, path); err != nil {
			r.discard(spare)
			return Write(path, data, r.opts)
		}
	case errors.Is(err, errExchangeUnsupported):
		r.unsupported.Store(true)
		r.discard(spare)
		return Write(path, data, r.opts)
	default:
		r.discard(spare)
		return fmt.Errorf("exchanging %s into place: %w", path, err)
	}
	if r.opts.SyncDir && !r.opts.NoSync {
		if err := syncDirectory(r.dir); err != nil {
			if displaced != "" {
				// Not known to be durable: after a power loss the path
				// could still name the displaced file, which must then
				// never be written again.
				r.discard(displaced)
			}
			return fmt.Errorf("%w: %w", ErrUnsynced, err)
		}
	}
	if displaced != "" {
		r.give(displaced)
	}
	return nil
}

// filledSpare takes a spare and makes it hold data; on error no spare is
// kept. A spare whose displaced content another name still links is left
// to that name, and one this process may not write (a displaced file of
// another user, or made read-only) is dropped, for another spare; a
// fresh spare that cannot be written either (a umask leaving files
// unwritable) is the error.
func (r *Recycler) filledSpare(data []byte) (string, error) {
	for {
		spare, pooled, err := r.take()
		if err != nil {
			return "", err
		}
		err = r.fill(spare, data, pooled)
		if err == nil {
			return spare, nil
		}
		r.discard(spare)
		if !errors.Is(err, errSpareLinked) && !errors.Is(err, errSpareOpen) && !(pooled && errors.Is(err, fs.ErrPermission)) {
			return "", err
		}
	}
}

// fill makes spare hold exactly data (synced unless NoSync); displaced
// tells it is a file a Replace displaced, not a fresh one.
func (r *Recycler) fill(spare string, data []byte, displaced bool) (err error) {
	f, err := OpenFile(spare, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening spare file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing spare file: %w", cerr)
		}
	}()
	if shared, err := linkedElsewhere(f); err != nil {
		return fmt.Errorf("reading spare file: %w", err)
	} else if shared {
		return errSpareLinked
	}
	if displaced {
		// A reader that opened it under its old name may still be
		// reading it (no one opens a fresh spare: no one knows its name).
		if open, known := openElsewhere(f); open || !known {
			if !known {
				r.noLease.Store(true)
			}
			return errSpareOpen
		}
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("writing spare file: %w", err)
	}
	if err := f.Truncate(int64(len(data))); err != nil { // drop a longer old content's tail
		return fmt.Errorf("truncating spare file: %w", err)
	}
	if !r.opts.NoSync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing spare file: %w", err)
		}
	}
	return nil
}

// take returns an unused spare, creating one when none is free; pooled
// tells it is a displaced file.
func (r *Recycler) take() (spare string, pooled bool, err error) {
	r.mu.Lock()
	if n := len(r.spares); n > 0 {
		p := r.spares[n-1]
		r.spares = r.spares[:n-1]
		r.mu.Unlock()
		return p, true, nil
	}
	r.mu.Unlock()
	p := r.newSpareName()
	perm := r.opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	f, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", false, fmt.Errorf("creating spare file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("creating spare file: %w", err)
	}
	return p, false, nil
}

// newSpareName returns a fresh path matching SparePattern.
func (r *Recycler) newSpareName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(r.dir, ".spare-"+hex.EncodeToString(b[:])+".tmp")
}

func (r *Recycler) give(p string) {
	if r.noLease.Load() {
		r.discard(p) // cannot be checked for readers before reuse
		return
	}
	r.mu.Lock()
	r.spares = append(r.spares, p)
	r.mu.Unlock()
}

func (r *Recycler) discard(p string) { _ = os.Remove(p) }

// Close removes the spare files. Replace must not run concurrently.
func (r *Recycler) Close() error {
	r.mu.Lock()
	spares := r.spares
	r.spares = nil
	r.mu.Unlock()
	var errs []error
	for _, p := range spares {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// errSpareLinked reports a spare that another name links to.
var errSpareLinked = errors.New("spare file has another link")

// errSpareOpen reports a displaced file that a reader may still have open.
var errSpareOpen = errors.New("spare file may be open elsewhere")

// errExchangeUnsupported reports that the platform or file system cannot
// exchange two names atomically.
var errExchangeUnsupported = errors.New("atomic exchange not supported")
