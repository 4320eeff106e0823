package visualflow

import (
	"os"
	"path/filepath"
	"testing"
)

// A .json file saved with a UTF-8 byte-order mark: Python reads it with
// encoding="utf-8" (the BOM stays as U+FEFF) and json.loads refuses it,
// so read_file fails with ValueError(f"Invalid JSON in '{file_path}': {e}")
// where e is "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1
// column 1 (char 0)" (executor.py _create_read_file_handler; spec §6.10
// ".json files must parse"). A non-.json file with a BOM before "{" does
// not look like JSON (str.lstrip keeps U+FEFF) and comes back as text,
// BOM included.
func TestReadFileBOM(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "bom.json"), []byte("\xef\xbb\xbf{\"a\": 1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bom.txt"), []byte("\xef\xbb\xbf{\"a\": 1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readFile(map[string]any{"workspace_root": root, "file_path": "bom.json"})
	want := "Invalid JSON in 'bom.json': Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"
	if err == nil || err.Error() != want {
		t.Errorf("read_file bom.json: %v, want %q", err, want)
	}
	out, err := readFile(map[string]any{"workspace_root": root, "file_path": "bom.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.(map[string]any)["content"]; c != "\ufeff{\"a\": 1}" {
		t.Errorf("read_file bom.txt content %#v, want the text with its BOM", c)
	}
}

// write_file to a non-.json target with an object: json.dumps(indent=2,
// ensure_ascii=False) with no trailing newline, and bytes is the UTF-8
// length (executor.py _create_write_file_handler; spec §6.10).
func TestWriteFileObjectToText(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out, err := writeFile(map[string]any{"workspace_root": root, "file_path": "o.txt", "content": map[string]any{"é": 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "o.txt"))
	if string(b) != "{\n  \"é\": 1.5\n}" {
		t.Errorf("written %q", b)
	}
	if m := out.(map[string]any); m["bytes"] != int64(15) || m["file_path"] != "o.txt" {
		t.Errorf("output %v, want bytes 15, file_path o.txt", out)
	}
}
