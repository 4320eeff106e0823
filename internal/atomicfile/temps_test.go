package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// RemoveStaleTemps removes only regular temps of the named targets that
// are at least StaleTempAge old; a nil logger is allowed.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	const hex = "0123456789abcdef0123456789abcdef"
	old := time.Now().Add(-atomicfile.StaleTempAge - time.Minute)
	put := func(name string, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := put("a_1.json."+hex+".tmp", old)
	kept := []string{
		put("a_2.json."+hex+".tmp", time.Now()),
		put("b.json."+hex+".tmp", old),
		put("a_3.json", old),
	}
	atomicfile.RemoveStaleTemps(dir, []string{"a_?*.json"}, nil)
	if _, err := os.Lstat(gone); !os.IsNotExist(err) {
		t.Errorf("stale temp %s kept (err %v)", filepath.Base(gone), err)
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
