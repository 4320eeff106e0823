package sqlite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// An error should say what is wrong. A database file the process may not
// write (a copied backup, the wrong service user) fails to open, as it
// should, but a store owning its file (the default) reported
// "PRAGMA journal_mode=WAL: disk I/O error (3850)" (SQLITE_IOERR_LOCK: the
// exclusive lock on a descriptor SQLite fell back to opening read-only),
// which reads as a failing disk.

// makeReadOnly makes path unwritable for this process: a mode without
// write bits, or, for root (whom modes do not stop), the immutable
// attribute. It skips the test where neither works.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("cannot make %s read-only as root: chattr: %s %v", path, out, err)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
}

// openFailure returns New's error on cfg, with the database path left
// out (the test's directory name holds words the checks look for).
func openFailure(t *testing.T, cfg sqlite.Config) string {
	t.Helper()
	s, err := sqlite.New(t.Context(), cfg)
	if err == nil {
		_ = s.Close()
		t.Skip("the read-only database opened (the platform let the store write it)")
	}
	t.Logf("New: %v", err)
	return strings.ReplaceAll(err.Error(), filepath.Dir(cfg.Path), "<dir>")
}

// TestReadOnlyDatabaseErrorSaysSo: the error names the read-only file, in
// both modes.
func TestReadOnlyDatabaseErrorSaysSo(t *testing.T) {
	t.Parallel()
	for name, shared := range map[string]bool{"owned": false, "shared": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			writePythonDB(t, path)
			makeReadOnly(t, path)
			msg := openFailure(t, sqlite.Config{Path: path, Shared: shared})
			if !strings.Contains(msg, "the database file <dir>/runtime.sqlite3 is read-only") {
				t.Errorf("opening a read-only database file: %s; want an error that says the file is read-only", msg)
			}
		})
	}
}

// TestReadOnlyDirectoryErrorSaysSo: a writable database in a directory
// where SQLite cannot create its -wal file is named as such.
func TestReadOnlyDirectoryErrorSaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "runtime.sqlite3")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writePythonDB(t, path) // closed: SQLite removed its -wal and -shm
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Fatalf("setup: %s%s left behind", path, suffix)
		}
	}
	makeReadOnly(t, dir)
	msg := openFailure(t, sqlite.Config{Path: path})
	if !strings.Contains(msg, "the directory <dir> is read-only") {
		t.Errorf("opening a database in a read-only directory: %s; want an error that says the directory is read-only", msg)
	}
}
