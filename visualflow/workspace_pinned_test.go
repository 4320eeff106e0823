package visualflow

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// workspaceWith makes a workspace root named "ws" holding the given files
// (slash-separated paths relative to it, with their contents).
func workspaceWith(t *testing.T, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A first segment equal to the root's own name is dropped only when the
// root has no such child (runtime-model §7.4): under root .../ws holding
// a folder ws, "ws/a.txt" is that folder's file, not the root's a.txt.
func TestWorkspaceRootNameSegmentKeptWhenChildExists(t *testing.T) {
	root := workspaceWith(t, map[string]string{"ws/a.txt": "child", "a.txt": "top"})
	out, err := readFile(map[string]any{"workspace_root": root, "file_path": "ws/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if m["content"] != "child" || m["file_path"] != "ws/a.txt" {
		t.Fatalf("output %v, want content \"child\" from ws/a.txt", m)
	}
}

// Allowed folders whose names collide all get digest-suffixed mount names,
// the first one too, as Python's build_workspace_mounts (needs_digest when
// a slug groups more than one path): neither /a/data nor /b/data is
// mounted as plain "data".
func TestWorkspaceMountsCollidingNamesAllDigested(t *testing.T) {
	digest := func(p string) string {
		sum := sha256.Sum256([]byte(p))
		return hex.EncodeToString(sum[:])[:8]
	}
	got := workspaceMounts([]string{"/b/data", "/a/data"})
	want := map[string]string{"data_" + digest("/a/data"): "/a/data", "data_" + digest("/b/data"): "/b/data"}
	if !maps.Equal(got, want) {
		t.Fatalf("workspaceMounts = %v, want %v", got, want)
	}
}
