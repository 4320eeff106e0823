package visualflow

import "testing"

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
