package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	msqlite "modernc.org/sqlite"
)

// SQLite result codes (sqlite3.h) of the failures an unwritable file
// causes. An owning store opens with locking_mode=EXCLUSIVE: on a file it
// may only read, SQLite opens it read-only and the exclusive lock then
// fails as SQLITE_IOERR_LOCK, "disk I/O error (3850)", which reads as a
// failing disk; a shared store gets SQLITE_READONLY at its first write.
const (
	sqlitePerm      = 3
	sqliteReadOnly  = 8 // and its extended codes: 8 | n<<8
	sqliteCantOpen  = 14
	sqliteIOErrLock = 10 | 15<<8
)

// readOnlyHint adds to err, a failure to open the database at path, what
// the store may not write when that is why: the database file, its -wal
// or -shm file, or the directory SQLite creates them in. Other errors, and
// these when every file is writable, are returned as they are.
func readOnlyHint(path string, err error) error {
	var serr *msqlite.Error
	if !errors.As(err, &serr) {
		return err
	}
	switch code := serr.Code(); {
	case code == sqliteIOErrLock, code&0xff == sqliteReadOnly, code&0xff == sqliteCantOpen, code&0xff == sqlitePerm:
	default:
		return err
	}
	if cause := unwritable(path); cause != "" {
		return fmt.Errorf("%w (%s; the store must be able to write the database file, its -wal and -shm files and their directory)", err, cause)
	}
	return err
}

// unwritable tells which of the files SQLite writes for the database at
// path this process may not write, or "".
func unwritable(path string) string {
	for _, f := range []struct{ name, what string }{
		{path, "the database file"},
		{path + "-wal", "the database's -wal file"},
		{path + "-shm", "the database's -shm file"},
	} {
		if _, err := os.Stat(f.name); err != nil {
			continue // missing: created in the directory, checked below
		}
		if err := checkWritable(f.name); err != nil {
			return fmt.Sprintf("%s %s is read-only for this process: %v", f.what, f.name, err)
		}
	}
	dir := filepath.Dir(path)
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := checkWritable(dir); err != nil {
			return fmt.Sprintf("the directory %s is read-only for this process, so SQLite cannot create %s%s there: %v",
				dir, filepath.Base(path), suffix, err)
		}
	}
	return ""
}
