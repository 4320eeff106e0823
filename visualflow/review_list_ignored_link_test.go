package visualflow

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A symlink inside the workspace whose target is an ignored path must be
// left out of a listing, as the target itself is: read_file already
// refuses the link (the policy resolves it), but the listing showed the
// link's name, family and the ignored file's size.
func TestReviewListFolderHidesLinksIntoIgnoredPaths(t *testing.T) {
	ws := t.TempDir()
	priv := filepath.Join(ws, "priv")
	if err := os.MkdirAll(priv, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(priv, "key.pem"), []byte("SECRET-KEY"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "ok.txt"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(priv, "key.pem"), filepath.Join(ws, "key-link.pem")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(priv, filepath.Join(ws, "priv-link")); err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"workspace_root": ws, "workspace_ignored_paths": []any{"priv"},
		"folder_path": ".", "recursive": true, "include_directories": true}
	if _, err := readFile(map[string]any{"workspace_root": ws, "workspace_ignored_paths": []any{"priv"}, "file_path": "key-link.pem"}); err == nil {
		t.Fatal("read_file through the link was allowed")
	}
	out, err := listFolder(in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range out.(map[string]any)["entries"].([]any) {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	if slices.Contains(names, "key-link.pem") || slices.Contains(names, "priv-link") {
		t.Errorf("listing shows links into workspace_ignored_paths: %v", names)
	}
	if !slices.Contains(names, "ok.txt") {
		t.Errorf("listing lost ok.txt: %v", names)
	}
}
