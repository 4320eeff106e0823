package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// defaultMode is the mode a file created with 0o644 gets here (the
// process umask applies to every file created, by os and by atomicfile).
func defaultMode(t *testing.T) os.FileMode {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "ref")
	f, err := os.OpenFile(ref, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	fi, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Options.Perm: 0 means 0o644 (the mode Python's files get), any other
// value is the new file's mode.
func TestWriteUsesMode0644UnlessPermIsGiven(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	def := filepath.Join(dir, "run_def.json")
	if err := atomicfile.Write(def, []byte("x"), atomicfile.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := modeOf(t, def), defaultMode(t); got != want {
		t.Errorf("Write with Perm 0 made mode %v, want %v (0o644 under the umask)", got, want)
	}
	own := filepath.Join(dir, "run_own.json")
	if err := atomicfile.WriteNew(own, []byte("x"), atomicfile.Options{NoSync: true, Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	if got := modeOf(t, own); got != 0o600 {
		t.Errorf("WriteNew with Perm 0o600 made mode %v", got)
	}
}

// A Recycler writes with its Options: a file it creates or replaces has
// the default mode 0o644 when Perm is 0, as with Write.
func TestRecyclerFilesGetTheDefaultMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := unsynced(t, dir)
	path := filepath.Join(dir, "commands_cursor.json")
	want := defaultMode(t)
	for i, content := range []string{"created", "replaced", "replaced again"} {
		if err := r.Replace(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got := modeOf(t, path); got != want {
			t.Errorf("after Replace %d the file has mode %v, want %v", i, got, want)
		}
	}
}
