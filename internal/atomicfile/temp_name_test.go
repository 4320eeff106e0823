package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// TestTempTargetMatchesWritesTempNames guards the promise of Write's doc
// comment: its temp file is <path>.<32 hex>.tmp. A store that removes the
// temps a killed write left (store/jsonfile) relies on TempTarget naming
// exactly those files and their target: both the names Write draws and
// the one a real Write used (named by its error when the rename fails)
// must be recognised.
func TestTempTargetMatchesWritesTempNames(t *testing.T) {
	t.Parallel()
	for range 50 {
		name := atomicfile.NewTempNameForTest("run_r1.json")
		target, ok := atomicfile.TempTarget(name)
		if !ok || target != "run_r1.json" {
			t.Fatalf("TempTarget(%q) = %q, %v; want run_r1.json, true", name, target, ok)
		}
	}
	// And the name Write really creates: leave a temp behind by making
	// the rename fail (a non-empty directory at the target).
	dir := t.TempDir()
	path := filepath.Join(dir, "run_r1.json")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("{}"), atomicfile.Options{NoSync: true}); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	} else if !strings.Contains(err.Error(), "run_r1.json.") || !strings.Contains(err.Error(), ".tmp") {
		t.Fatalf("Write error %q does not name its temp file", err)
	} else {
		// The error names the temp: "renaming <tmp>: ...".
		msg := err.Error()
		start := strings.Index(msg, "run_r1.json.")
		end := strings.Index(msg[start:], ".tmp") + start + len(".tmp")
		tmp := msg[start:end]
		if target, ok := atomicfile.TempTarget(tmp); !ok || target != "run_r1.json" {
			t.Fatalf("TempTarget(%q) = %q, %v for the temp Write used; want run_r1.json, true", tmp, target, ok)
		}
	}
}

// TestTempTargetRejectsOtherShapes: only <target>.<32 lowercase hex>.tmp
// is a temp of Write (and of Python's JSON stores, whose uuid4().hex is
// the same shape); anything else may be someone else's file.
func TestTempTargetRejectsOtherShapes(t *testing.T) {
	t.Parallel()
	hex32 := "0123456789abcdef0123456789abcdef"
	for _, name := range []string{
		"run_r1.json",
		"run_r1.json.tmp",
		"." + hex32 + ".tmp",                               // no target
		hex32 + ".tmp",                                     // no target, no dot
		"run_r1.json." + hex32[:31] + ".tmp",               // 31 hex
		"run_r1.json." + hex32 + "0.tmp",                   // 33 hex
		"run_r1.json.0123456789ABCDEF0123456789abcdef.tmp", // upper case
		"run_r1.json.0123456789abcdeg0123456789abcdef.tmp", // not hex
		"run_r1.json." + hex32 + ".tmp.bak",
		"run_r1.json_" + hex32 + ".tmp",
		"run_r1.json." + hex32 + ".TMP",
		".spare-0123456789abcdef.tmp",
		".commit-r1.1-2-a.5.tmp",
		"notes.tmp",
	} {
		if target, ok := atomicfile.TempTarget(name); ok {
			t.Errorf("TempTarget(%q) = %q, true; want not a temp name", name, target)
		}
	}
}
