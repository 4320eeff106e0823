package visualflow

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// read_file parses a file whose extension is .json in any case: "n.JSON"
// holding 42 reads as the number 42, not the text "42" (spec §6.10).
func TestReadFileJSONExtensionCaseInsensitive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "n.JSON")
	if err := os.WriteFile(p, []byte("42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := readFile(map[string]any{"file_path": p})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(map[string]any)["content"]; got != int64(42) {
		t.Fatalf("content = %#v, want int64(42)", got)
	}
}

// read_file of a non-.json file sniffs JSON after leading whitespace: a
// text file holding "\n  {...}" reads as the parsed object (spec §6.10).
func TestReadFileSniffsJSONAfterLeadingWhitespace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(p, []byte("\n  {\"a\": 1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := readFile(map[string]any{"file_path": p})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := out.(map[string]any)["content"].(map[string]any)
	if !ok || m["a"] != int64(1) {
		t.Fatalf("content = %#v, want the object {\"a\": 1}", out.(map[string]any)["content"])
	}
}

// write_file to a .json target writes the value with indent 2 and a
// trailing newline, and bytes counts that newline (spec §6.10).
func TestWriteFileJSONTrailingNewline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.json")
	out, err := writeFile(map[string]any{"file_path": p, "content": map[string]any{"a": int64(1)}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const want = "{\n  \"a\": 1\n}\n"
	if string(data) != want || out.(map[string]any)["bytes"] != int64(len(want)) {
		t.Fatalf("file = %q, bytes = %v; want %q, %d", data, out.(map[string]any)["bytes"], want, len(want))
	}
}

// write_file with null content to a non-JSON target writes an empty file,
// not "None" (spec §6.10: null → "").
func TestWriteFileNullContentIsEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.txt")
	out, err := writeFile(map[string]any{"file_path": p, "content": nil})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 0 || out.(map[string]any)["bytes"] != int64(0) {
		t.Fatalf("file = %q, bytes = %v; want an empty file", data, out.(map[string]any)["bytes"])
	}
}

// list_folder_files clamps limit to 1..5000, not to the default 500: a
// limit of 501 over 501 files lists all of them (spec §6.10).
func TestListFolderLimitAboveDefault(t *testing.T) {
	dir := t.TempDir()
	for i := range 501 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := listFolder(map[string]any{"folder_path": dir, "limit": int64(501)})
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if m["count"] != int64(501) {
		t.Fatalf("count = %v, want 501", m["count"])
	}
}

// limit is clamped to 5000 at most (spec §6.10 "clamped to 1..5000"): a
// larger limit lists the first 5000 entries and reports truncated, so
// one node cannot walk an unbounded tree into the run's vars.
func TestListFolderLimitClampedAt5000(t *testing.T) {
	dir := t.TempDir()
	for i := range 5001 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := listFolder(map[string]any{"folder_path": dir, "limit": int64(10000)})
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if m["count"] != int64(5000) || m["truncated"] != true {
		t.Fatalf("count = %v, truncated = %v, want 5000 and true", m["count"], m["truncated"])
	}
}

// The PDF nodes, which need a host PDF engine this runtime lacks, fail
// naming their node type (read_pdf, write_pdf), not the node id, so that
// the error says which capability is missing whatever the node is called.
func TestPDFNodesFailNamingTheirType(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"read_pdf", "write_pdf"} {
		out := runFileNodeFlow(t, t.TempDir(), typ, map[string]any{"file_path": "doc.pdf"}, "file_path")
		want := typ + " requires a host capability (PDF engine) that is not configured"
		if out["success"] != false || out["error"] != want {
			t.Errorf("%s: output %v, want error %q", typ, out, want)
		}
	}
}

// A recursive list_folder_files does not enter a symlink to a folder, as
// Python's os.walk (followlinks=False): real/x.txt is listed once, never
// as lnk/x.txt.
func TestListFolderDoesNotFollowFolderLinks(t *testing.T) {
	dir := t.TempDir()
	writeListedFile(t, filepath.Join(dir, "real", "x.txt"))
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "lnk")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	out, err := listFolder(map[string]any{"folder_path": dir, "recursive": true})
	if err != nil {
		t.Fatal(err)
	}
	files := out.(map[string]any)["files"].([]any)
	if want := filepath.ToSlash(filepath.Join(dir, "real", "x.txt")); len(files) != 1 || files[0] != want {
		t.Fatalf("files = %v, want [%s]", files, want)
	}
}
