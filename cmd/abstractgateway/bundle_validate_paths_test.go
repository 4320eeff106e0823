package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `bundle validate released/ staging/` (or two files of the same name in
// two folders) prints each result under the file's base name only: with
// greet.flow valid in one folder and broken in the other, the output is
// "ok   greet.flow" and "FAIL greet.flow: ..." and nothing tells which
// file is broken. A FAIL line must name the file as given (its path), so
// the one to fix can be found.
func TestValidateNamesTheFailingFileByItsPath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	good := filepath.Join(root, "released")
	bad := filepath.Join(root, "staging")
	for _, d := range []string{good, bad} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	built := packGreet(t, t.TempDir())
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(good, "greet.flow"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "greet.flow"), []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := call(t, "validate", good, bad)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "FAIL ") && !strings.Contains(line, filepath.Join("staging", "greet.flow")) {
			t.Fatalf("FAIL line does not say which greet.flow is broken (staging/, not released/):\n%s", out)
		}
	}
}
