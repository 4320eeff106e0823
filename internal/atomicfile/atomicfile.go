// Package atomicfile replaces files so that a reader, or a process
// restarted after a crash, sees either the old content or the new one,
// never a torn mix.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options tunes Write.
type Options struct {
	// NoSync skips every fsync: the replacement survives a process crash
	// but not a power loss (what the Python runtime's JSON store does).
	NoSync bool
	// SyncDir also fsyncs the directory after the rename, so the new
	// directory entry itself survives a power loss. Ignored with NoSync.
	SyncDir bool
	// Perm is the file mode of a new file; 0 means 0o644.
	Perm os.FileMode
}

// Write writes data to a temporary file next to path
// (<path>.<32 hex>.tmp, the Python runtime's naming), syncs it, and
// renames it over path. The temporary file is removed on any error. An
// error wrapping ErrUnsynced means the file is in place but the directory
// sync after the rename failed; on any other error path is unchanged.
func Write(path string, data []byte, opts Options) error {
	return write(path, data, opts, false)
}

// WriteNew is Write for a file that must not exist yet: it fails with an
// error wrapping fs.ErrExist, and leaves the existing file alone, if path
// exists. On Linux the check and the rename are one atomic step.
func WriteNew(path string, data []byte, opts Options) error {
	return write(path, data, opts, true)
}

func write(path string, data []byte, opts Options, noReplace bool) (err error) {
	tmp := tempName(path)
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	f, err := OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("creating temp file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close() // a no-op (os.ErrClosed) once closed below
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if !opts.NoSync {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", tmp, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if noReplace {
		err = renameNew(tmp, path)
	} else {
		err = rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	if opts.SyncDir && !opts.NoSync {
		if err := syncDirectory(filepath.Dir(path)); err != nil {
			return fmt.Errorf("%w: %w", ErrUnsynced, err)
		}
	}
	return nil
}

// tempSuffixHex is the number of lowercase hex digits in the random part
// of a temp file's name (16 random bytes).
const tempSuffixHex = 32

// tempName returns a fresh temp file name for path: path + "." + 32
// lowercase hex digits + ".tmp". The Python runtime's temps have the same
// shape (its suffix is a uuid4 in hex), so the two cannot be told apart.
func tempName(path string) string {
	var b [tempSuffixHex / 2]byte
	_, _ = rand.Read(b[:])
	return path + "." + hex.EncodeToString(b[:]) + ".tmp"
}

// TempTarget reports whether name (a base name) has the shape of a temp
// file Write or WriteNew creates, <target>.<32 lowercase hex>.tmp, and
// returns its target's name. A temp left by a process killed before its
// rename is garbage; but the Python runtime names its temps the same way,
// so a match may also be another live process's write in progress.
func TempTarget(name string) (target string, ok bool) {
	stem, ok := strings.CutSuffix(name, ".tmp")
	if !ok || len(stem) < tempSuffixHex+2 {
		return "", false
	}
	i := len(stem) - tempSuffixHex
	if stem[i-1] != '.' {
		return "", false
	}
	for _, c := range []byte(stem[i:]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return stem[:i-1], true
}

// renameNew renames tmp to path unless path exists.
func renameNew(tmp, path string) error {
	if err := renameNoReplace(tmp, path); !errors.Is(err, errExchangeUnsupported) {
		return err
	}
	// Not atomic here: another writer could create path in between.
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %w", path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return rename(tmp, path)
}

// syncDirectory is SyncDir as this package's writers call it: a variable,
// so that a test can fail the sync that follows a rename.
var syncDirectory = SyncDir

// SyncDir fsyncs a directory, making renames and new files in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening %s for sync: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
