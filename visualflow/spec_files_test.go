package visualflow

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Spec §6.10 list_folder_files: "limit default 500 clamped to 1..5000":
// without a limit 501 files list 500 (truncated), and a limit of 0 or
// below lists one entry.
func TestSpec610_ListFolderLimitDefaultAndLowerClamp(t *testing.T) {
	dir := t.TempDir()
	for i := range 501 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		limit     any
		wantCount int64
	}{{nil, 500}, {int64(0), 1}, {int64(-3), 1}} {
		in := map[string]any{"folder_path": dir}
		if c.limit != nil {
			in["limit"] = c.limit
		}
		out, err := listFolder(in)
		if err != nil {
			t.Fatal(err)
		}
		m := out.(map[string]any)
		if m["count"] != c.wantCount || m["truncated"] != true {
			t.Errorf("limit %v: count %v truncated %v, want %d and true", c.limit, m["count"], m["truncated"], c.wantCount)
		}
	}
}

// Spec §6.10 write_file: a .json target's string content must be valid
// JSON (else error) and is written as the parsed value pretty-printed
// with a trailing newline; other targets write str() of a scalar.
func TestSpec610_WriteFileStringJSONAndScalarContent(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		content any
		want    string
	}{
		{"a.json", `{"k":[1,2]}`, "{\n  \"k\": [\n    1,\n    2\n  ]\n}\n"},
		{"b.txt", true, "True"},
		{"c.txt", 1.0, "1.0"},
		{"d.txt", "raw {", "raw {"},
	} {
		p := filepath.Join(dir, "sub", c.name)
		out, err := writeFile(map[string]any{"file_path": p, "content": c.content})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != c.want || out.(map[string]any)["bytes"] != int64(len(c.want)) {
			t.Errorf("%s: file %q bytes %v, want %q", c.name, data, out.(map[string]any)["bytes"], c.want)
		}
	}
	if _, err := writeFile(map[string]any{"file_path": filepath.Join(dir, "bad.json"), "content": "not json"}); err == nil {
		t.Error("write_file of invalid JSON text to a .json target: no error")
	}
}
