package atomicfile_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// stagedIn opens a Recycler on dir, closed when the test ends, and stages
// data under .commit-x.tmp.
func stagedIn(t *testing.T, dir string, opts atomicfile.Options, data string) (*atomicfile.Recycler, string) {
	t.Helper()
	r, err := atomicfile.NewRecycler(dir, opts, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	staged, err := r.Stage(".commit-x.tmp", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return r, staged
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStagePromote: a staged file holds its content under the chosen
// name until Promote puts it in place; the name is then gone and the
// displaced file is a spare again, so a second round creates no file.
func TestStagePromote(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, staged := stagedIn(t, dir, atomicfile.Options{SyncDir: true}, "new content")
	if got := readFile(t, staged); got != "new content" || filepath.Base(staged) != ".commit-x.tmp" {
		t.Fatalf("staged %s holds %q", staged, got)
	}
	if got := readFile(t, path); got != "old" {
		t.Fatalf("staging changed the target: %q", got)
	}
	if err := r.Promote(staged, path); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "new content" {
		t.Fatalf("after Promote the target holds %q", got)
	}
	if _, err := os.Lstat(staged); !os.IsNotExist(err) {
		t.Fatalf("the staged name is still there after Promote (%v)", err)
	}
	spares := func() []string {
		var out []string
		for _, n := range names(t, dir) {
			if strings.HasPrefix(n, ".spare-") {
				out = append(out, n)
			}
		}
		return out
	}
	first := spares()
	if len(first) != 1 {
		t.Fatalf("spares after one Promote: %v, want the displaced file alone", first)
	}
	if got := readFile(t, filepath.Join(dir, first[0])); got != "old" {
		t.Fatalf("the spare holds %q, want the displaced content", got)
	}
	staged, err := r.Stage(".commit-y.tmp", []byte("v3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Promote(staged, path); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "v3" {
		t.Fatalf("after the second Promote the target holds %q", got)
	}
	if again := spares(); len(again) != 1 {
		t.Fatalf("spares after two rounds: %v, want one reused spare", again)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"run.json"}) {
		t.Fatalf("after Close the directory holds %v", got)
	}
}

// TestPromoteMissingTarget: with nothing at the path, the staged file
// becomes it.
func TestPromoteMissingTarget(t *testing.T) {
	dir := t.TempDir()
	r, staged := stagedIn(t, dir, atomicfile.Options{}, "data")
	path := filepath.Join(dir, "new.json")
	if err := r.Promote(staged, path); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "data" {
		t.Fatalf("target holds %q", got)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"new.json"}) {
		t.Fatalf("directory holds %v", got)
	}
}

// TestPromoteOntoDirectoryFails: a directory at the path is never swapped
// out; the error names it and the staged file is left under its name for
// the caller to Unstage.
func TestPromoteOntoDirectoryFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	r, staged := stagedIn(t, dir, atomicfile.Options{}, "data")
	err := r.Promote(staged, path)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Promote onto a directory: %v", err)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		t.Fatalf("the directory was replaced (%v)", err)
	}
	if got := readFile(t, staged); got != "data" {
		t.Fatalf("the staged name holds %q after a failed Promote, want its data", got)
	}
}

// TestUnstageReusesTheFile: an abandoned staged file goes back to the
// pool, so the next Stage creates no file.
func TestUnstageReusesTheFile(t *testing.T) {
	dir := t.TempDir()
	r, staged := stagedIn(t, dir, atomicfile.Options{}, "data")
	fi1, _ := os.Stat(staged)
	r.Unstage(staged)
	if _, err := os.Lstat(staged); !os.IsNotExist(err) {
		t.Fatalf("the staged name is still there (%v)", err)
	}
	staged, err := r.Stage(".commit-y.tmp", []byte("other"))
	if err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(staged)
	if !os.SameFile(fi1, fi2) {
		t.Error("the second Stage made a new file instead of reusing the unstaged one")
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want the staged file alone", got)
	}
}

// TestStageRefusesAPath: the name is a file name of the directory.
func TestStageRefusesAPath(t *testing.T) {
	dir := t.TempDir()
	r, err := atomicfile.NewRecycler(dir, atomicfile.Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Stage("../escape.tmp", []byte("x")); err == nil {
		t.Fatal("Stage accepted a name outside the directory")
	}
	if _, err := r.Stage("sub/x.tmp", []byte("x")); err == nil {
		t.Fatal("Stage accepted a name in a subdirectory")
	}
}
