package visualflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A relative path whose ".." follows a symlink must be resolved the way the
// OS (and Python) resolve it: link first, then "..".
//
// Reference: abstractruntime/utils/workspace_paths.py resolve_workspace_path
// joins `root / Path(rel_part)` (pathlib keeps ".." segments) and calls
// resolve_no_strict = Path.resolve(strict=False) (realpath), so
// "dirlink/../x.txt" with dirlink -> <outside>/inner resolves to
// <outside>/x.txt and is refused ("path escapes workspace root").
// Ours built filepath.Join(root, rel) first, which cancelled "dirlink/.."
// as text before the link was followed, so it read <root>/x.txt: another
// file than the one the path names, where the absolute spelling of the
// same path was refused. (Not an escape: that file is inside the root.)
func TestRelativeDotDotAfterSymlinkFollowsTheLinkFirst(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, filepath.Join(outside, "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "x.txt"), []byte("INSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "inner"), filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	// The absolute spelling is refused.
	if _, err := readFile(map[string]any{"workspace_root": root, "file_path": root + "/dirlink/../x.txt"}); err == nil || !strings.Contains(err.Error(), "rejected by workspace policy") {
		t.Fatalf("absolute dirlink/../x.txt: err %v, want a workspace-policy rejection", err)
	}
	// The relative spelling must be too (Python: "Path escapes workspace_root").
	out, err := readFile(map[string]any{"workspace_root": root, "file_path": "dirlink/../x.txt"})
	if err == nil || !strings.Contains(err.Error(), "rejected by workspace policy") {
		t.Errorf("relative dirlink/../x.txt: output %v, err %v; want a workspace-policy rejection (the path names %s)", out, err, filepath.Join(outside, "x.txt"))
	}
	// Same for a write: it must not land on <root>/y.txt.
	if _, err := writeFile(map[string]any{"workspace_root": root, "file_path": "dirlink/../y.txt", "content": "W"}); err == nil {
		t.Errorf("write_file dirlink/../y.txt succeeded; want a workspace-policy rejection")
	}
}

// The workspace root is created when missing.
//
// Reference: workspace_scoped_tools.py WorkspaceScope.from_input_data does
// `root.mkdir(parents=True, exist_ok=True)` (spec runtime-model §7.4 "Root:
// ... created if missing"), so list_folder_files "." on a fresh run
// workspace lists an empty folder. Ours never created it, so the node
// failed with "Folder not found: .".
func TestWorkspaceRootCreatedWhenMissing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "fresh", "ws")
	out, err := listFolder(map[string]any{"workspace_root": root, "folder_path": "."})
	if err != nil {
		t.Fatalf("list_folder_files . on a missing root: %v; want an empty listing (root created)", err)
	}
	if m, _ := out.(map[string]any); m["count"] != int64(0) {
		t.Errorf("output %v, want count 0", out)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		t.Errorf("workspace root not created: %v", err)
	}
}
