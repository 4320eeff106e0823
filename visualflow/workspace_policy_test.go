package visualflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Workspace policy of the file nodes (spec visualflow §6.10,
// runtime-model §7.4; Python abstractcore utils/workspace_paths.py and
// WorkspaceScope). rvFlow is in workspace_scope_test.go, runArtifactFlow
// in artifactnodes_test.go.

// policyRejected reports whether a file-node run ended with a workspace
// policy rejection.
func policyRejected(t *testing.T, out map[string]any) bool {
	t.Helper()
	return out["success"] == false && strings.Contains(jsonText(t, out["error"]), "path rejected by workspace policy")
}

// A DANGLING symlink inside the workspace whose target lies outside it must
// not let write_file / export_artifact create that target. Python resolves
// the user path with Path.resolve(strict=False) (abstractcore
// utils/workspace_paths.py resolve_no_strict, used by
// resolve_workspace_path), i.e. os.path.realpath, which follows a link even
// when its target does not exist, so "out.txt -> /elsewhere/new.txt" resolves
// to /elsewhere/new.txt and is refused ("path escapes workspace root").
// Otherwise os.WriteFile would follow the link and create the file outside
// the root (a cloned repository carrying such a link could plant files
// anywhere the process can write).
func TestWorkspaceDanglingSymlinkWriteEscape(t *testing.T) {
	t.Run("write_file", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		target := filepath.Join(outside, "planted.txt")
		if err := os.Symlink(target, filepath.Join(root, "out.txt")); err != nil {
			t.Fatal(err)
		}
		st := runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes"}), nil,
			map[string]any{"workspace_root": root, "file_path": "out.txt", "content": "pwned"})
		if _, err := os.Stat(target); err == nil {
			t.Errorf("write_file created %s outside the workspace root through a dangling symlink (output %s)", target, jsonText(t, st.Output))
		}
		if !policyRejected(t, st.Output) {
			t.Errorf("output %s, want a workspace-policy rejection", jsonText(t, st.Output))
		}
	})
	t.Run("export_artifact", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		target := filepath.Join(outside, "planted.bin")
		if err := os.Symlink(target, filepath.Join(root, "export.bin")); err != nil {
			t.Fatal(err)
		}
		arts := artifact.NewMemory()
		meta, err := arts.Put(t.Context(), artifact.PutParams{Content: []byte("payload"), ContentType: "application/octet-stream"})
		if err != nil {
			t.Fatal(err)
		}
		st := runArtifactFlow(t, rvFlow("export_artifact", []string{"artifact", "file_path"}, []string{"bytes"}), arts,
			map[string]any{"workspace_root": root, "file_path": "export.bin", "artifact": meta.ArtifactID})
		if _, err := os.Stat(target); err == nil {
			t.Errorf("export_artifact created %s outside the workspace root through a dangling symlink (output %s)", target, jsonText(t, st.Output))
		}
	})
}

// workspace_ignored_paths is a deny list the file nodes must honour (spec
// visualflow §6.10: the path "is resolved/validated by the host workspace
// policy"; runtime-model §7.4: "any path equal to or under an ignored path
// is refused (Path is blocked by workspace_ignored_paths)"; Python
// compiler._resolve_user_file_path -> WorkspaceScope.from_input_data +
// resolve_user_workspace_path -> _ensure_allowed). The Python gateway puts
// its built-in deny rules (the data folder) into this very key
// (guard_run_vars / apply_workspace_policy): ignoring it would fail open.
func TestWorkspaceIgnoredPathsEnforced(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret", "key.txt"), []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := func(p string) map[string]any {
		return map[string]any{"workspace_root": root, "workspace_ignored_paths": "node_modules\nsecret", "file_path": p}
	}
	st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil, vars("secret/key.txt"))
	if !policyRejected(t, st.Output) {
		t.Errorf("read_file of an ignored path: output %s, want a workspace-policy rejection", jsonText(t, st.Output))
	}
	// The normalised spellings must be refused too.
	st = runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil, vars("./x/../secret//key.txt"))
	if !policyRejected(t, st.Output) {
		t.Errorf("read_file of ./x/../secret//key.txt: output %s, want a workspace-policy rejection", jsonText(t, st.Output))
	}
	v := vars("secret/new.txt")
	v["content"] = "x"
	st = runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes"}), nil, v)
	if _, err := os.Stat(filepath.Join(root, "secret", "new.txt")); err == nil || !policyRejected(t, st.Output) {
		t.Errorf("write_file into an ignored path: output %s, want a workspace-policy rejection and no file", jsonText(t, st.Output))
	}
}

// An unknown workspace_access_mode is an error in Python
// (workspace_scoped_tools._normalize_access_mode raises "Invalid
// workspace_access_mode", so every file node fails with "<node> path
// rejected by workspace policy: ..."; spec runtime-model §7.4 "Any other
// value → error"): a host asking for a mode this runtime does not know
// (say "read_only") gets a node that fails closed, not one that writes.
func TestWorkspaceInvalidAccessModeRejected(t *testing.T) {
	root := t.TempDir()
	st := runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes"}), nil,
		map[string]any{"workspace_root": root, "workspace_access_mode": "read_only", "file_path": "a.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err == nil || !policyRejected(t, st.Output) {
		t.Errorf("write_file with workspace_access_mode=read_only: output %s, want a workspace-policy rejection (invalid mode) and no file", jsonText(t, st.Output))
	}
}

// Relative user paths are normalised as Python's resolve_workspace_path
// (abstractcore utils/workspace_paths.py; spec runtime-model §7.4
// "Relative: normalise \ → /, drop leading ./ ... a first segment equal to
// the workspace folder's own name is dropped when no such child exists";
// a leading "@" is stripped), so a flow reads and writes the same files as
// on the Python runtime.
func TestWorkspaceRelativePathNormalisedAsPython(t *testing.T) {
	newRoot := func(t *testing.T) string {
		root := filepath.Join(t.TempDir(), "ws")
		if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}
	t.Run("backslash", func(t *testing.T) {
		root := newRoot(t)
		st := runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes", "file_path"}), nil,
			map[string]any{"workspace_root": root, "file_path": `sub\note.txt`, "content": "x"})
		if _, err := os.Stat(filepath.Join(root, "sub", "note.txt")); err != nil || st.Output["file_path"] != "sub/note.txt" {
			t.Errorf(`write_file "sub\note.txt": output %s, want sub/note.txt written (Python normalises \ to /)`, jsonText(t, st.Output))
		}
	})
	t.Run("at_prefix", func(t *testing.T) {
		root := newRoot(t)
		st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content", "file_path"}), nil,
			map[string]any{"workspace_root": root, "file_path": "@notes.txt"})
		if st.Output["content"] != "hello" || st.Output["file_path"] != "notes.txt" {
			t.Errorf(`read_file "@notes.txt": output %s, want notes.txt read (Python strips a leading @)`, jsonText(t, st.Output))
		}
	})
	t.Run("root_name_prefix", func(t *testing.T) {
		root := newRoot(t)
		st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content", "file_path"}), nil,
			map[string]any{"workspace_root": root, "file_path": "ws/notes.txt"})
		if st.Output["content"] != "hello" || st.Output["file_path"] != "notes.txt" {
			t.Errorf(`read_file "ws/notes.txt" under root .../ws: output %s, want notes.txt read (Python drops a redundant root-name segment)`, jsonText(t, st.Output))
		}
	})
}

// A workspace root that is itself a symlink: Python resolves the root
// (WorkspaceScope.from_input_data: root = resolve_no_strict(root)) and the
// absolute user path, then compares resolved paths, so an absolute path
// spelt through the real folder (or through the link when the root is the
// real folder) is inside the workspace: a host whose temp folder is a
// symlink (macOS /tmp -> /private/tmp) must not see its own paths refused.
func TestWorkspaceSymlinkedRootAbsolutePath(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "f.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ root, path string }{
		{link, filepath.Join(real, "f.txt")},
		{real, filepath.Join(link, "f.txt")},
	} {
		st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content", "file_path"}), nil,
			map[string]any{"workspace_root": c.root, "file_path": c.path})
		if st.Output["content"] != "hello" || st.Output["file_path"] != "f.txt" {
			t.Errorf("root %s, read_file %s: output %s, want f.txt read (both resolve inside the workspace)", c.root, c.path, jsonText(t, st.Output))
		}
	}
}

// A relative workspace_root is joined to the workspace base dir: env
// ABSTRACT_WORKSPACE_BASE_DIR, else ABSTRACTFLOW_WORKSPACE_BASE_DIR, else
// the process cwd (spec runtime-model §7.4 "Root: ... a relative root is
// joined to the base dir"; Python workspace_scoped_tools.py
// resolve_workspace_base_dir / WorkspaceScope.from_input_data), not in the
// server's working directory.
func TestWorkspaceRelativeRootUsesBaseDirEnv(t *testing.T) {
	base := t.TempDir()
	t.Setenv("ABSTRACT_WORKSPACE_BASE_DIR", base)
	t.Chdir(t.TempDir()) // a wrong write lands here, not in the package dir
	st := runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes", "file_path"}), nil,
		map[string]any{"workspace_root": "ws", "file_path": "a.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(base, "ws", "a.txt")); err != nil {
		t.Errorf("write_file with workspace_root=\"ws\" and ABSTRACT_WORKSPACE_BASE_DIR=%s: %v (output %s); want the file under the base dir", base, err, jsonText(t, st.Output))
	}
}

// Ignored paths also hide from listings (neither listed nor entered) and
// refuse exports; a JSON array (or a string holding one) is read like the
// newline-separated form, and an unreadable list fails closed rather than
// being guessed at.
func TestWorkspaceIgnoredPathsListExportAndParsing(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a.txt", "secret/key.txt", "sub/b.txt"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, ignored := range []any{[]any{"secret"}, `["secret"]`, []any{filepath.Join(root, "secret")}} {
		st := runArtifactFlow(t, rvFlow("list_folder_files", []string{"folder_path", "recursive", "include_directories"}, []string{"files", "entries"}), nil,
			map[string]any{"workspace_root": root, "workspace_ignored_paths": ignored, "folder_path": ".", "recursive": true, "include_directories": true})
		if got := jsonText(t, st.Output); strings.Contains(got, "secret") || !strings.Contains(got, "sub/b.txt") {
			t.Errorf("ignored %v: listing %s, want sub/b.txt and nothing of secret", ignored, got)
		}
	}
	arts := artifact.NewMemory()
	meta, err := arts.Put(t.Context(), artifact.PutParams{Content: []byte("payload"), ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, rvFlow("export_artifact", []string{"artifact", "file_path"}, []string{"bytes"}), arts,
		map[string]any{"workspace_root": root, "workspace_ignored_paths": "secret", "file_path": "secret/out.txt", "artifact": meta.ArtifactID})
	if _, err := os.Stat(filepath.Join(root, "secret", "out.txt")); err == nil || !policyRejected(t, st.Output) {
		t.Errorf("export_artifact into an ignored path: output %s, want a rejection and no file", jsonText(t, st.Output))
	}
	for _, bad := range []any{`["secret"`, []any{"secret", 3.0}, map[string]any{"x": "secret"}} {
		st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil,
			map[string]any{"workspace_root": root, "workspace_ignored_paths": bad, "file_path": "a.txt"})
		if !policyRejected(t, st.Output) {
			t.Errorf("workspace_ignored_paths %#v: output %s, want a workspace-policy rejection (fail closed)", bad, jsonText(t, st.Output))
		}
	}
}

// A symlink loop inside the workspace is refused, not followed forever;
// a dangling link that stays inside the root may be written through.
func TestWorkspaceSymlinkLoopAndInsideDangling(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/new.txt", filepath.Join(root, "in.txt")); err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil,
		map[string]any{"workspace_root": root, "file_path": "a/x.txt"})
	if !policyRejected(t, st.Output) {
		t.Errorf("read_file through a link loop: output %s, want a workspace-policy rejection", jsonText(t, st.Output))
	}
	st = runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes", "file_path"}), nil,
		map[string]any{"workspace_root": root, "file_path": "in.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(root, "real", "new.txt")); err != nil || st.Output["file_path"] != "real/new.txt" {
		t.Errorf("write_file through an in-root dangling link: %v, output %s; want real/new.txt written", err, jsonText(t, st.Output))
	}
}

// The access modes: workspace_only refuses absolute paths outside the root
// even when allowed paths are given; workspace_or_allowed also accepts the
// allowed folders, absolutely or through their mount name; and
// all_except_ignored accepts any absolute path that is not ignored.
// Relative paths never escape their root in any mode.
func TestWorkspaceAccessModes(t *testing.T) {
	root, other := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "Shared Docs")
	for _, d := range []string{root, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "f.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(mode, path string, extra map[string]any) map[string]any {
		vars := map[string]any{"workspace_root": root, "workspace_access_mode": mode,
			"workspace_allowed_paths": []any{other}, "file_path": path}
		for k, v := range extra {
			vars[k] = v
		}
		return runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content", "file_path"}), nil, vars).Output
	}
	abs := filepath.Join(other, "f.txt")
	if out := read("workspace_only", abs, nil); !policyRejected(t, out) {
		t.Errorf("workspace_only, %s: output %s, want a rejection", abs, jsonText(t, out))
	}
	for _, p := range []string{abs, "shared-docs/f.txt"} {
		if out := read("Workspace_Or_Allowed", p, nil); out["content"] != "hello" || out["file_path"] != "shared-docs/f.txt" {
			t.Errorf("workspace_or_allowed, %s: output %s, want shared-docs/f.txt read", p, jsonText(t, out))
		}
	}
	if out := read("workspace_or_allowed", "shared-docs/../../x", nil); !policyRejected(t, out) {
		t.Errorf("workspace_or_allowed, escape from a mount: output %s, want a rejection", jsonText(t, out))
	}
	if out := read("all_except_ignored", abs, map[string]any{"workspace_allowed_paths": nil}); out["content"] != "hello" || out["file_path"] != abs {
		t.Errorf("all_except_ignored, %s: output %s, want it read and reported absolute", abs, jsonText(t, out))
	}
	if out := read("all_except_ignored", abs, map[string]any{"workspace_ignored_paths": other}); !policyRejected(t, out) {
		t.Errorf("all_except_ignored, ignored %s: output %s, want a rejection", abs, jsonText(t, out))
	}
	if out := read("all_except_ignored", "../x", nil); !policyRejected(t, out) {
		t.Errorf("all_except_ignored, ../x: output %s, want a rejection", jsonText(t, out))
	}
}

// ABSTRACTFLOW_WORKSPACE_BASE_DIR is the fallback base dir, and a root that
// is an existing file is refused.
func TestWorkspaceRootFallbackBaseDirAndFileRoot(t *testing.T) {
	base := t.TempDir()
	t.Setenv("ABSTRACT_WORKSPACE_BASE_DIR", "")
	t.Setenv("ABSTRACTFLOW_WORKSPACE_BASE_DIR", base)
	t.Chdir(t.TempDir())
	runArtifactFlow(t, rvFlow("write_file", []string{"file_path", "content"}, []string{"bytes"}), nil,
		map[string]any{"workspace_root": "ws", "file_path": "a.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(base, "ws", "a.txt")); err != nil {
		t.Errorf("ABSTRACTFLOW_WORKSPACE_BASE_DIR fallback: %v", err)
	}
	st := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content"}), nil,
		map[string]any{"workspace_root": filepath.Join(base, "ws", "a.txt"), "file_path": "b.txt"})
	if !policyRejected(t, st.Output) {
		t.Errorf("workspace_root naming a file: output %s, want a workspace-policy rejection", jsonText(t, st.Output))
	}
}
