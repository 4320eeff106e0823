package atomicfile_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// The file a Replace displaces becomes the spare that the next Replace,
// of any other file, rewrites in place. A hard link to the old file (a
// `cp -al` snapshot of the data dir) then held another file's content.
// A displaced file with another link is now left to it.
func TestRecyclerLeavesHardLinkedFilesAlone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exchange (and so the recycling) is Linux-only")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "run_a.json"), filepath.Join(dir, "run_b.json")
	const oldA = `{"run_id": "a", "v": 1}`
	if err := os.WriteFile(a, []byte(oldA), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(`{"run_id": "b", "v": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A hard-link backup of run_a.json.
	backup := filepath.Join(t.TempDir(), "backup_run_a.json")
	if err := os.Link(a, backup); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}

	r, err := atomicfile.NewRecycler(dir, atomicfile.Options{NoSync: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Replace(a, []byte(`{"run_id": "a", "v": 2}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(b, []byte(`{"run_id": "b", "v": 2}`)); err != nil {
		t.Fatal(err)
	}

	if got, _ := os.ReadFile(backup); string(got) != oldA {
		t.Errorf("a hard link to the old run_a.json now holds %q; want %q", got, oldA)
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
