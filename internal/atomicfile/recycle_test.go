package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestRecyclerReplacesWithoutCreatingFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run_x.json")
	r, err := atomicfile.NewRecycler(dir, atomicfile.Options{SyncDir: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	contents := []string{"first, long content", "short", "", "a third, longer than the second"}
	for i, content := range contents {
		if err := r.Replace(path, []byte(content)); err != nil {
			t.Fatalf("replace %d: %v", i, err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Fatalf("replace %d: content %q, want %q", i, got, content)
		}
	}
	spares, _ := filepath.Glob(filepath.Join(dir, atomicfile.SparePattern))
	if runtime.GOOS == "linux" {
		// The spare holds the content the last Replace displaced.
		if len(spares) != 1 {
			t.Fatalf("%d spare files, want 1: %v", len(spares), names(t, dir))
		}
		if got, _ := os.ReadFile(spares[0]); string(got) != contents[len(contents)-2] {
			t.Fatalf("spare holds %q, want the displaced %q", got, contents[len(contents)-2])
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"run_x.json"}) {
		t.Fatalf("directory after Close: %v", got)
	}
}

// unsynced returns a Recycler of dir without fsyncs, closed with the test.
func unsynced(t *testing.T, dir string) *atomicfile.Recycler {
	t.Helper()
	r, err := atomicfile.NewRecycler(dir, atomicfile.Options{NoSync: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestRecyclerCreatesAMissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := unsynced(t, dir)
	path := filepath.Join(dir, "commands_cursor.json")
	if err := r.Replace(path, []byte(`{"cursor": 1}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"cursor": 1}` {
		t.Fatalf("content %q", got)
	}
}

func TestRecyclerRefusesToSwapADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := unsynced(t, dir)
	target := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(target, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(target, []byte("x")); err == nil {
		t.Fatal("Replace of a directory succeeded")
	}
	if fi, err := os.Stat(filepath.Join(target, "keep")); err != nil || !fi.IsDir() {
		t.Fatalf("the directory was moved: %v", err)
	}
}

func TestNewRecyclerRemovesLeftoverSpares(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	left := filepath.Join(dir, ".spare-0123456789abcdef.tmp")
	if err := os.WriteFile(left, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run_a.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	unsynced(t, dir)
	if got := names(t, dir); !slices.Equal(got, []string{"run_a.json"}) || strings.Contains(strings.Join(got, ","), "spare") {
		t.Fatalf("directory after NewRecycler: %v", got)
	}
}

// A spare removed behind the Recycler's back (a second process opening
// the directory removes the spares it finds) does not fail the write.
func TestRecyclerSurvivesARemovedSpare(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("spares are only used where the exchange exists (Linux)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "run_x.json")
	r := unsynced(t, dir)
	for _, content := range []string{"one", "two"} { // the second Replace leaves a spare
		if err := r.Replace(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	unsynced(t, dir) // removes the spare
	if err := r.Replace(path, []byte("three")); err != nil {
		t.Fatalf("Replace after its spare was removed: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "three" {
		t.Fatalf("content %q", got)
	}
}

// A directory whose own name holds pattern characters is read literally:
// filepath.Glob over the joined path listed nothing in "data[1]" and
// failed in "x[y", so spares left there were never removed.
func TestGlobReadsTheDirectoryLiterally(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"data[1]", "x[y", `a\b*`} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"run_a.json", "run_b.json", "other.json"} {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := atomicfile.Glob(dir, "run_*.json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := []string{filepath.Join(dir, "run_a.json"), filepath.Join(dir, "run_b.json")}
		if !slices.Equal(got, want) {
			t.Errorf("Glob(%q) = %q, want %q", name, got, want)
		}
	}
	if got, err := atomicfile.Glob(filepath.Join(t.TempDir(), "missing"), "*"); err != nil || got != nil {
		t.Errorf("Glob(missing dir) = %q, %v; want nothing", got, err)
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
