package visualflow

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An .abstractignore that is not valid UTF-8 contributes no rules, as in
// Python (its read_text fails): a file it names is still listed.
func TestAbstractIgnoreNonUTF8FileHasNoRules(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".abstractignore"), []byte("secret.txt\n\xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeListedFile(t, filepath.Join(dir, "secret.txt"))
	out, err := listFolder(map[string]any{"folder_path": dir})
	if err != nil {
		t.Fatal(err)
	}
	files := out.(map[string]any)["files"].([]any)
	if !slices.Contains(files, any(filepath.ToSlash(filepath.Join(dir, "secret.txt")))) {
		t.Fatalf("files = %v, want secret.txt listed", files)
	}
}
