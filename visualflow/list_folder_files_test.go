package visualflow

import (
	"os"
	"path/filepath"
	"testing"
)

// listFolderFlow runs list_folder_files with the given pin defaults on dir
// and ends with its files, entries and truncated outputs.
func listFolderFlow(dir string, defaults map[string]any) map[string]any {
	defaults["folder_path"] = dir
	return rsFlow("list_folder", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ls", "list_folder_files", []string{"exec-in:exec", "folder_path:string", "recursive:boolean", "include_directories:boolean", "limit:number", "max_depth:number"},
			[]string{"exec-out:exec", "files:array", "entries:array", "truncated:boolean"},
			map[string]any{"pinDefaults": defaults}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "files:array", "entries:array", "truncated:boolean"}, nil, nil),
	}, "start.exec-out>ls.exec-in", "ls.exec-out>end.exec-in", "ls.files>end.files", "ls.entries>end.entries", "ls.truncated>end.truncated")
}

func writeListedFile(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The walk is os.walk top-down, as Python's: a folder's own files come
// before anything inside its sub-folders, so with limit=1 the top-level
// b.txt is listed, not a/x.txt (which a lexical depth-first walk gives).
func TestListFolderFilesTopLevelFilesFirst(t *testing.T) {
	dir := t.TempDir()
	writeListedFile(t, filepath.Join(dir, "a", "x.txt"))
	writeListedFile(t, filepath.Join(dir, "b.txt"))
	_, st := startRunWith(t, listFolderFlow(dir, map[string]any{"recursive": true, "limit": 1}), CompileOptions{}, map[string]any{})
	files, _ := st.Output["files"].([]any)
	want := filepath.ToSlash(filepath.Join(dir, "b.txt"))
	if len(files) != 1 || files[0] != want {
		t.Fatalf("files = %v, want [%s]", files, want)
	}
}

// A folder deeper than max_depth is neither entered nor listed, even with
// include_directories: under max_depth=1 only a (depth 1) is listed, not
// a/b (depth 2).
func TestListFolderFilesMaxDepthHidesDeeperFolders(t *testing.T) {
	dir := t.TempDir()
	writeListedFile(t, filepath.Join(dir, "a", "b", "c.txt"))
	_, st := startRunWith(t, listFolderFlow(dir, map[string]any{"recursive": true, "include_directories": true, "max_depth": 1}), CompileOptions{}, map[string]any{})
	entries, _ := st.Output["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("entries = %s, want only folder a", jsonText(t, entries))
	}
}

// A folder entry's family is the constant "folder", as Python's.
func TestListFolderFilesFolderFamily(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, st := startRunWith(t, listFolderFlow(dir, map[string]any{"include_directories": true}), CompileOptions{}, map[string]any{})
	entries, _ := st.Output["entries"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["family"] != "folder" {
		t.Fatalf("entries = %s, want one folder entry with family \"folder\"", jsonText(t, entries))
	}
}

// truncated is set once len(entries) reaches limit after an append, as
// Python does: a folder holding exactly limit files reports true.
func TestListFolderFilesTruncatedAtLimit(t *testing.T) {
	dir := t.TempDir()
	writeListedFile(t, filepath.Join(dir, "only.txt"))
	_, st := startRunWith(t, listFolderFlow(dir, map[string]any{"limit": 1}), CompileOptions{}, map[string]any{})
	if st.Output["truncated"] != true {
		t.Fatalf("truncated = %v, want true\n%s", st.Output["truncated"], jsonText(t, st.Output))
	}
}
