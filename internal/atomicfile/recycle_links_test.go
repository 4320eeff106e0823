package atomicfile_test

import (
	"os"
	"path/filepath"
	"runtime"
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
