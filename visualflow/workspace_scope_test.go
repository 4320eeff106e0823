package visualflow

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
)

// rvFlow is start → <typ> → end, the node's inputs from the start's vars
// and the listed outputs wired to the end.
func rvFlow(typ string, in, out []string) map[string]any {
	edges := []any{artEdge("start", "exec-out", "n", "exec-in"), artEdge("n", "exec-out", "end", "exec-in")}
	for _, p := range in {
		edges = append(edges, artEdge("start", p, "n", p))
	}
	for _, p := range out {
		edges = append(edges, artEdge("n", p, "end", p))
	}
	return map[string]any{
		"id": "rv_" + typ, "entryNode": "start",
		"nodes": []any{
			map[string]any{"id": "start", "type": "on_flow_start", "data": map[string]any{
				"inputs": []any{}, "outputs": artPins(append([]string{"exec-out"}, in...)...)}},
			map[string]any{"id": "n", "type": typ, "data": map[string]any{
				"inputs": artPins(append([]string{"exec-in"}, in...)...), "outputs": artPins(append([]string{"exec-out"}, out...)...)}},
			map[string]any{"id": "end", "type": "on_flow_end", "data": map[string]any{
				"inputs": artPins(append([]string{"exec-in"}, out...)...), "outputs": []any{}}},
		},
		"edges": edges,
	}
}

// A symlink inside the workspace that points outside it must not let
// read_file read outside the root: the doc comment of resolvePath promises
// "refusing escapes", and Python's policy (spec runtime-model §7.4,
// resolve_no_strict = Path.resolve) resolves symlinks before the
// under-root check.
func TestWorkspaceSymlinkEscapeRead(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil,
		map[string]any{"workspace_root": root, "file_path": "link/secret.txt"})
	if st.Output["success"] != false || !strings.Contains(jsonText(t, st.Output["error"]), "path rejected by workspace policy") {
		t.Errorf("read_file through a symlink out of the workspace: output %s, want a workspace-policy rejection", jsonText(t, st.Output))
	}
}

// Same for write_file: writing through a symlinked folder lands outside the
// workspace root.
func TestWorkspaceSymlinkEscapeWrite(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes"}), nil,
		map[string]any{"workspace_root": root, "file_path": "link/pwned.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(outside, "pwned.txt")); err == nil {
		t.Errorf("write_file wrote %s outside the workspace root (output %s)", filepath.Join(outside, "pwned.txt"), jsonText(t, st.Output))
	}
	if st.Output["success"] != false {
		t.Errorf("output %s, want a workspace-policy rejection", jsonText(t, st.Output))
	}
}

// export_artifact through a symlinked folder also writes outside the root.
func TestWorkspaceSymlinkEscapeExport(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	meta, err := arts.Put(t.Context(), artifact.PutParams{Content: []byte("payload"), ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, rvFlow("export_artifact", []string{"artifact", "file_path"}, []string{"bytes"}), arts,
		map[string]any{"workspace_root": root, "file_path": "link/exported.txt", "artifact": meta.ArtifactID})
	if _, err := os.Stat(filepath.Join(outside, "exported.txt")); err == nil {
		t.Errorf("export_artifact wrote outside the workspace root (output %s)", jsonText(t, st.Output))
	}
}

// read_file (and import_workspace_file) must require a regular file, as
// Python's path.is_file() does ("Not a file"). The Go check is only
// "not a directory", so a FIFO in the workspace blocks the node (and the
// tick, and the runner) forever in open(2); a device such as /dev/zero
// (reachable without a workspace root) is read without end until the
// process runs out of memory.
func TestWorkspaceReadFileNonRegularFile(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan *durable.RunState, 1)
	go func() {
		done <- runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil,
			map[string]any{"workspace_root": root, "file_path": "pipe.txt"})
	}()
	select {
	case st := <-done:
		if st.Output["success"] != false {
			t.Errorf("read_file of a FIFO: output %s, want an error (not a file)", jsonText(t, st.Output))
		}
	case <-time.After(3 * time.Second):
		// Unblock the reader so the test binary can finish.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Errorf("read_file of a FIFO inside the workspace blocked for 3s (open(2) waits for a writer); Python refuses it as 'Not a file'")
	}
}

// list_folder_files max_depth as Python's handler: at a folder of depth d
// (root 0) its child folders are entered while d+1 <= max_depth, so
// max_depth=1 lists the root's files and those of its immediate
// subfolders (Go's walk stops one level earlier: it lists sub but never
// enters it).
func TestWorkspaceListMaxDepthAsPython(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"top.txt", "sub/a.txt", "sub/deep/b.txt"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := runArtifactFlow(t, rvFlow("list_folder_files",
		[]string{"folder_path", "recursive", "max_depth", "include_directories"}, []string{"files", "entries"}), nil,
		map[string]any{"workspace_root": root, "folder_path": ".", "recursive": true, "max_depth": 1, "include_directories": true})
	files := map[string]bool{}
	for _, f := range st.Output["files"].([]any) {
		files[f.(string)] = true
	}
	if !files["top.txt"] || !files["sub/a.txt"] || files["sub/deep/b.txt"] {
		t.Errorf("files = %v, want top.txt and sub/a.txt (Python: max_depth=1 enters the root's subfolders)", st.Output["files"])
	}
}

// read_file decodes text as Python's Path.read_text does (universal
// newlines): "\r\n" and lone "\r" read as "\n".
func TestWorkspaceReadFileUniversalNewlines(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "win.txt"), []byte("line1\r\nline2\rline3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil,
		map[string]any{"workspace_root": root, "file_path": "win.txt"})
	if got := st.Output["content"]; got != "line1\nline2\nline3\n" {
		t.Errorf("content = %q, want %q (Python read_text translates newlines)", got, "line1\nline2\nline3\n")
	}
}

// workspace_root expands "~" (spec runtime-model §7.4 "Root: expand ~"):
// "~/ws" is the ws folder of the home directory, not a folder named "~"
// under the process's working directory.
func TestWorkspaceRootTildeExpanded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cwd := t.TempDir()
	t.Chdir(cwd)
	st := runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes", "file_path"}), nil,
		map[string]any{"workspace_root": "~/ws", "file_path": "a.txt", "content": "hi"})
	if _, err := os.Stat(filepath.Join(home, "ws", "a.txt")); err != nil {
		_, litErr := os.Stat(filepath.Join(cwd, "~", "ws", "a.txt"))
		t.Errorf("write_file with workspace_root ~/ws: not written under $HOME/ws (%v); written to cwd/~/ws: %v; output %s",
			err, litErr == nil, jsonText(t, st.Output))
	}
}

// The run's workspace scope must not depend on what the previous node put
// on the bus. runFunction once added the workspace keys only when the base
// input was an object; after a node whose result is a scalar or a list (a
// code node returning a string, a loop body ...) the file node ran with no
// scope at all, and an absolute path anywhere on the host was read.
func TestWorkspaceScopeKeptAfterScalarBus(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "p", "type": "string"}]}},
	    {"id": "code", "type": "code", "data": {"codeBody": "return 'just a string'",
	      "inputs": [{"id": "exec-in", "type": "execution"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	    {"id": "rf", "type": "read_file", "data": {
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "file_path", "type": "string"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "content", "type": "any"}]}},
	    {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "content", "type": "any"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	    {"source": "code", "sourceHandle": "exec-out", "target": "rf", "targetHandle": "exec-in"},
	    {"source": "start", "sourceHandle": "p", "target": "rf", "targetHandle": "file_path"},
	    {"source": "rf", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
	    {"source": "rf", "sourceHandle": "content", "target": "end", "targetHandle": "content"}
	  ]}`, map[string]any{"workspace_root": root, "p": secret})
	if st.Output["content"] == "TOP SECRET" || st.Output["success"] != false {
		t.Errorf("read_file of %s outside workspace_root %s after a scalar bus: output %s, want a workspace-policy rejection",
			secret, root, jsonText(t, st.Output))
	}
}

// §6.10: a file node's base input gets the run's workspace keys only when
// not already present: a workspace_root on the bus wins over the var.
func TestFileNodeKeepsWorkspaceRootFromItsInput(t *testing.T) {
	varRoot, busRoot := t.TempDir(), t.TempDir()
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("code", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"codeBody": "return {'workspace_root': " + strconv.Quote(busRoot) + "}"}),
		rsNode("wf", "write_file", []string{"exec-in:exec", "file_path:string", "content:string"}, []string{"exec-out:exec", "file_path:string"},
			map[string]any{"pinDefaults": map[string]any{"file_path": "f.txt", "content": "x"}}),
	}, "start.exec-out>code.exec-in", "code.exec-out>wf.exec-in")
	st := runFlow(t, flow, map[string]any{"workspace_root": varRoot})
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("status %s (%s), output %s", st.Status, st.Error, jsonText(t, st.Output))
	}
	if _, err := os.Stat(filepath.Join(busRoot, "f.txt")); err != nil {
		_, errVar := os.Stat(filepath.Join(varRoot, "f.txt"))
		t.Fatalf("f.txt not written under the bus's workspace_root (%v); under the var's: %v", err, errVar == nil)
	}
}
