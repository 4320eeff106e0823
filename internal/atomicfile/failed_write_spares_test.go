package atomicfile_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// wantNoSpareFiles fails when dir holds a spare file: one a failed write
// filled and then lost track of stays on disk until the next open.
func wantNoSpareFiles(t *testing.T, what, dir string) {
	t.Helper()
	left, err := atomicfile.Glob(dir, atomicfile.SparePattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%s left spare files %v; want none", what, left)
	}
}

// A Stage whose rename fails (a non-empty directory holds the name) and a
// Replace whose exchange fails (the path is under a regular file, ENOTDIR)
// fail without leaving the spare they filled on disk. Breaks if either
// forgets to discard the spare on that path: Close removes only pooled
// spares, so it would stay until a later NewRecycler.
func TestFailedStageOrReplaceLeavesNoSpare(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exchange (and so the spares) is Linux-only")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "busy", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := unsynced(t, dir)
	if _, err := r.Stage("busy", []byte("data")); err == nil {
		t.Fatal("Stage over a non-empty directory succeeded")
	}
	wantNoSpareFiles(t, "a failed Stage", dir)
	if err := r.Replace(filepath.Join(dir, "file", "x.json"), []byte("data")); err == nil {
		t.Fatal("Replace under a regular file succeeded")
	}
	wantNoSpareFiles(t, "a failed Replace", dir)
}

// Promote refuses a symlink at the path, as it refuses a directory: an
// exchange would move the link itself under the staged name and put the
// new content beside, not through, it. Breaks if only directories are
// refused.
func TestPromoteOntoSymlinkFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	if err := os.WriteFile(target, []byte("target"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.json")
	if err := os.Symlink("target.json", path); err != nil {
		t.Skipf("symlinks unsupported here: %v", err)
	}
	r, staged := stagedIn(t, dir, atomicfile.Options{}, "data")
	if err := r.Promote(staged, path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Promote onto a symlink: %v; want not a regular file", err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced (%v)", err)
	}
	if got := readFile(t, target); got != "target" {
		t.Fatalf("the symlink's target holds %q; want it untouched", got)
	}
	if got := readFile(t, staged); got != "data" {
		t.Fatalf("the staged name holds %q after a failed Promote, want its data", got)
	}
}
