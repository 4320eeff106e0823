package visualflow

import (
	"os"
	"path/filepath"
	"testing"
)

// workspace_ignored_paths given as text is split into lines as Python's
// str.splitlines does (spec runtime-model §7.4 "newline-separated text"):
// a lone "\r", "\v", "\f", U+2028 ... end a line too. Splitting on "\n"
// only read "a\rsecret" as one path that names nothing, so neither entry
// was blocked: the deny list failed open.
func TestReviewIgnoredPathsTextSplitAsPythonSplitlines(t *testing.T) {
	for _, sep := range []string{"\r", "\v", "\f", "\x1c", "\u0085", "\u2028", "\u2029"} {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws, "secret"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "secret", "k.txt"), []byte("KEY"), 0o644); err != nil {
			t.Fatal(err)
		}
		in := map[string]any{"workspace_root": ws, "workspace_ignored_paths": "other" + sep + "secret",
			"file_path": "secret/k.txt"}
		if out, err := readFile(in); err == nil {
			t.Errorf("separator %q: read_file of an ignored path succeeded: %v", sep, out)
		}
	}
}
