package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// A symlink at the path is replaced by a regular file, as Write's rename
// does; it must never be swapped into the spare's place, where the next
// Replace (of any file) would write through it into the link's target.
func TestRecyclerNeverWritesThroughASymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious.json")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "run_link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unsupported here: %v", err)
	}
	other := filepath.Join(dir, "run_other.json")
	if err := os.WriteFile(other, []byte("other v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := unsynced(t, dir)
	if err := r.Replace(link, []byte("link v2")); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"other v2", "other v3"} {
		if err := r.Replace(other, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "precious" {
		t.Errorf("the symlink's target now holds %q; want it untouched", got)
	}
	if got, _ := os.ReadFile(link); string(got) != "link v2" {
		t.Errorf("the replaced path holds %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the replaced path is not a regular file: %v, %v", fi, err)
	}
}

// A spare found linked elsewhere is left to that link: its name leaves
// the directory at once, so that Close leaves only the data files.
func TestRecyclerLeavesNoLinkedSpareBehind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exchange (and so the recycling) is Linux-only")
	}
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "run_a.json"), filepath.Join(dir, "run_b.json")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("v1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(a, filepath.Join(t.TempDir(), "backup")); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	r, err := atomicfile.NewRecycler(dir, atomicfile.Options{NoSync: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b} { // the second finds the spare linked
		if err := r.Replace(p, []byte("v2")); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"run_a.json", "run_b.json"}) {
		t.Errorf("directory after Close: %v, want only the two data files", got)
	}
}

// Glob takes filepath.Match syntax and, like filepath.Glob, reports a
// malformed pattern instead of listing nothing.
func TestGlobReportsABadPattern(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run_a.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := atomicfile.Glob(dir, "run_[.json")
	if !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("Glob with a bad pattern = %q, %v; want filepath.ErrBadPattern", got, err)
	}
}
