package visualflow

import (
	"os"
	"path/filepath"
	"testing"
)

// list_folder_files on a path that exists but is a regular file.
//
// Python original (AbstractRuntime visualflow_compiler/visual/executor.py,
// _create_list_folder_files_handler) separates the two cases:
//
//	if not folder.exists(): raise FileNotFoundError(f"Folder not found: {folder_path}")
//	if not folder.is_dir(): raise ValueError(f"Not a folder: {folder_path}")
//
// (the same pattern as read_file's "File not found" / "Not a file").
func TestListFolderOnFileSaysNotAFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := listFolder(map[string]any{"workspace_root": root, "folder_path": "a.txt"})
	if err == nil || err.Error() != "Not a folder: a.txt" {
		t.Errorf("list_folder_files on a file: error %v, want %q", err, "Not a folder: a.txt")
	}
}

// The virtual path of the workspace root itself.
//
// Spec §6.10: "outputs report the *virtual* (workspace-relative) path".
// Python (AbstractCore utils/workspace_paths.py resolve_workspace_path,
// _normalize_rel) turns the root's relative path "." into "":
//
//	rel = path.as_posix(); return "" if rel in {"", "."} else rel
//
// so list_folder_files with folder_path "." (or "./", "sub/..") reports
// folder_path "" (its entries are "a.txt").
func TestListFolderRootVirtualPathIsEmpty(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "./", "sub/.."} {
		out, err := listFolder(map[string]any{"workspace_root": root, "folder_path": p})
		if err != nil {
			t.Fatalf("list_folder_files %q: %v", p, err)
		}
		m := out.(map[string]any)
		if m["folder_path"] != "" {
			t.Errorf("list_folder_files %q: folder_path %q, want \"\" (Python's virtual path of the root)", p, m["folder_path"])
		}
	}
}

// Without a workspace_root, ".." in a relative path is left to the file
// system, which applies it after following links.
//
// Spec §6.10: "without a scope, `~` is expanded, relative paths are
// resolved against the process working directory, and the absolute path
// is reported". Python (executor.py _resolve_user_file_path):
//
//	path = Path(file_path).expanduser()
//	if not path.is_absolute(): path = Path.cwd() / path
//	return path, str(path)
//
// pathlib keeps ".." segments, so the OS resolves them after following
// links: "lnk/../x.txt" with lnk -> real/sub is real/x.txt, and the
// reported path is "<cwd>/lnk/../x.txt" (cleaning it as text would read
// <cwd>/x.txt, another file).
// (Checked with python3 3.11: Path.cwd()/Path('lnk/../x.txt') reads REAL.)
func TestReadFileUnscopedDotDotThroughLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real", "x.txt"), []byte("REAL"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.txt"), []byte("TOP"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(dir, "lnk")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	t.Chdir(dir)
	// Python's Path.cwd() is getcwd(2): the real path of the folder.
	cwd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := readFile(map[string]any{"file_path": "lnk/../x.txt"})
	if err != nil {
		t.Fatalf("read_file lnk/../x.txt: %v", err)
	}
	m := out.(map[string]any)
	if m["content"] != "REAL" {
		t.Errorf("read_file lnk/../x.txt read %q, want %q (the OS resolves .. after the link)", m["content"], "REAL")
	}
	if want := cwd + "/lnk/../x.txt"; m["file_path"] != want {
		t.Errorf("file_path %q, want %q (Python reports str(Path.cwd() / path), .. kept)", m["file_path"], want)
	}
}

// A missing folder before ".." makes the path not exist for Python (stat
// of "<cwd>/nodir/../a.txt" is ENOENT), so read_file fails "File not
// found: nodir/../a.txt" rather than reading <cwd>/a.txt.
func TestReadFileUnscopedMissingDirDotDot(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out, err := readFile(map[string]any{"file_path": "nodir/../a.txt"})
	if err == nil || err.Error() != "File not found: nodir/../a.txt" {
		t.Errorf("read_file nodir/../a.txt: %v, %v; want error %q", out, err, "File not found: nodir/../a.txt")
	}
}

// A falsy non-string workspace_access_mode is the default mode.
//
// Python (workspace_scoped_tools.py _normalize_access_mode) reads
// str(raw or "").strip().lower() and treats "" as "workspace_only", so
// 0, [] or {} (e.g. an unset number/array pin that reached the run vars)
// select the default mode. Spec runtime-model §7.4 / docs list only
// unknown *modes* as failing.
func TestWorkspaceAccessModeFalsyIsDefault(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []any{int64(0), 0.0, []any{}, map[string]any{}} {
		out, err := readFile(map[string]any{"workspace_root": root, "workspace_access_mode": mode, "file_path": "a.txt"})
		if err != nil {
			t.Errorf("workspace_access_mode %#v: %v; want the default workspace_only", mode, err)
			continue
		}
		if c := out.(map[string]any)["content"]; c != "x" {
			t.Errorf("workspace_access_mode %#v: content %v", mode, c)
		}
	}
}
