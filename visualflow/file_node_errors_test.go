package visualflow

import (
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// readFileFlow runs read_file with file_path as its pin default.
func readFileFlow(filePath string) map[string]any {
	return rsFlow("read_file_error", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("rf", "read_file", []string{"exec-in:exec", "file_path:string"}, []string{"exec-out:exec", "content:any"},
			map[string]any{"pinDefaults": map[string]any{"file_path": filePath}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>rf.exec-in", "rf.exec-out>end.exec-in")
}

// A missing file is reported with the path the flow gave (trimmed), as
// Python's "File not found: {file_path}", not the resolved absolute path.
func TestReadFileMissingNamesGivenPath(t *testing.T) {
	_, st := startRunWith(t, readFileFlow(" surely_missing_file.txt "), CompileOptions{}, map[string]any{})
	if want := "File not found: surely_missing_file.txt"; st.Output["error"] != want {
		t.Fatalf("error = %v, want %q", st.Output["error"], want)
	}
}

// An empty path names the node and its path pin, as Python's first check
// in each file handler does.
func TestFileNodesEmptyPathMessage(t *testing.T) {
	_, st := startRunWith(t, readFileFlow("  "), CompileOptions{}, map[string]any{})
	if want := "read_file requires a non-empty 'file_path' input."; st.Output["error"] != want {
		t.Fatalf("error = %v, want %q", st.Output["error"], want)
	}
}

// list_folder_files names its own path pin, folder_path, as Python's
// ValueError does: a message built with a fixed 'file_path' would point
// the user at a pin the node does not have.
func TestListFolderEmptyPathNamesFolderPathPin(t *testing.T) {
	t.Parallel()
	out := runFileNodeFlow(t, t.TempDir(), "list_folder_files", map[string]any{"folder_path": " "}, "folder_path")
	if want := "list_folder_files requires a non-empty 'folder_path' input."; out["error"] != want {
		t.Fatalf("error = %v, want %q", out["error"], want)
	}
}

// runFileNodeFlow runs start → typ → end in a workspace rooted at root.
func runFileNodeFlow(t *testing.T, root, typ string, vars map[string]any, in ...string) map[string]any {
	t.Helper()
	vars["workspace_root"] = root
	st := runArtifactFlow(t, singleNodeFlow(typ, in...), artifact.NewMemory(), vars)
	return st.Output
}

// Invalid JSON in a .json file is Python's
// ValueError(f"Invalid JSON in '{file_path}': {e}"): the path as the flow
// gave it, quoted, and the JSONDecodeError text (offsets in characters).
func TestReadFileInvalidJSONErrorText(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "data.json"), []byte(`{"é": 1 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runFileNodeFlow(t, root, "read_file", map[string]any{"file_path": "data.json"}, "file_path")
	want := `Invalid JSON in 'data.json': Expecting ',' delimiter: line 1 column 9 (char 8)`
	if out["success"] != false || out["error"] != want {
		t.Errorf("output %v, want error %q", out, want)
	}
	if err := os.WriteFile(filepath.Join(root, "two.json"), []byte("{\"a\": 1,\n \"b\" 2}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = runFileNodeFlow(t, root, "read_file", map[string]any{"file_path": "two.json"}, "file_path")
	want = `Invalid JSON in 'two.json': Expecting ':' delimiter: line 2 column 6 (char 14)`
	if out["error"] != want {
		t.Errorf("error %v, want %q", out["error"], want)
	}
}

// A file that is not UTF-8 is Python's
// ValueError(f"Cannot read '{file_path}' as UTF-8: {e}") with the
// UnicodeDecodeError text.
func TestReadFileNotUTF8ErrorText(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "bad.txt"), []byte("abc\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runFileNodeFlow(t, root, "read_file", map[string]any{"file_path": "bad.txt"}, "file_path")
	want := "Cannot read 'bad.txt' as UTF-8: 'utf-8' codec can't decode byte 0xff in position 3: invalid start byte"
	if out["success"] != false || out["error"] != want {
		t.Errorf("output %v, want error %q", out, want)
	}
}

// A string that does not parse, written to a .json file, is Python's
// ValueError(f"write_file JSON content must be valid JSON: {e}"); nothing
// is written.
func TestWriteFileInvalidJSONErrorText(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out := runFileNodeFlow(t, root, "write_file", map[string]any{"file_path": "out.json", "content": "not json"}, "file_path", "content")
	want := "write_file JSON content must be valid JSON: Expecting value: line 1 column 1 (char 0)"
	if out["success"] != false || out["error"] != want {
		t.Errorf("output %v, want error %q", out, want)
	}
	if _, err := os.Stat(filepath.Join(root, "out.json")); err == nil {
		t.Errorf("out.json written despite the error")
	}
}

// Without a workspace, a path is Path(file_path).expanduser(): for
// "~name/…" with no such user pathlib raises RuntimeError("Could not
// determine home directory."), so the node fails instead of reading
// $HOME/name/….
func TestReadFileTildeUnknownUserFails(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, "zz_no_such_user"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "zz_no_such_user", "x.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := runArtifactFlow(t, singleNodeFlow("read_file", "file_path"), nil, map[string]any{"file_path": "~zz_no_such_user/x.txt"})
	if st.Output["success"] != false || st.Output["error"] != "Could not determine home directory." {
		t.Errorf("output %v, want the error \"Could not determine home directory.\"", st.Output)
	}
}

// expandHome is posixpath.expanduser as pathlib uses it: "~" and "~/…" at
// $HOME (trailing slashes dropped), "~name/…" at that user's home.
func TestExpandHomeAsPathlib(t *testing.T) {
	t.Setenv("HOME", "/home/someone/")
	for in, want := range map[string]string{
		"~":        "/home/someone",
		"~/a/b":    "/home/someone/a/b",
		"a/~/b":    "a/~/b",
		"/abs/x":   "/abs/x",
		"~nobody_": "",
	} {
		got, err := expandHome(in)
		if want == "" {
			if err == nil {
				t.Errorf("expandHome(%q) = %q, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("expandHome(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	t.Setenv("HOME", "/")
	if got, _ := expandHome("~"); got != "/" {
		t.Errorf("expandHome(~) with HOME=/ = %q, want /", got)
	}
	if u, err := user.Current(); err == nil && u.Username != "" && u.HomeDir != "" {
		if got, err := expandHome("~" + u.Username + "/x"); err != nil || got != filepath.Join(u.HomeDir, "x") {
			t.Errorf("expandHome(~%s/x) = %q, %v; want under %q", u.Username, got, err, u.HomeDir)
		}
	}
}
