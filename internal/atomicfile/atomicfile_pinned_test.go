package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// TestRemoveStaleTempsKeepsYoungAndNonRegular: a temp younger than
// StaleTempAge (a write that may still be live) is kept, and so is an old
// directory of a temp's name: only regular files are leftovers of a write.
func TestRemoveStaleTempsKeepsYoungAndNonRegular(t *testing.T) {
	dir := t.TempDir()
	const hex = "0123456789abcdef0123456789abcdef"
	old := time.Now().Add(-atomicfile.StaleTempAge - time.Minute)
	young := time.Now().Add(-atomicfile.StaleTempAge / 2)
	file := filepath.Join(dir, "a.json."+hex+".tmp")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "b.json."+hex+".tmp")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, young, young); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(sub, old, old); err != nil {
		t.Fatal(err)
	}
	atomicfile.RemoveStaleTemps(dir, []string{"*.json"}, nil)
	for _, p := range []string{file, sub} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
