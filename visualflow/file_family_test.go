package visualflow

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// nameSuffix is Python's Path(name).suffix lower-cased without its dot.
func TestFileSuffixIsPythonPathSuffix(t *testing.T) {
	for name, want := range map[string]string{
		".env": "", "prod.env": "env", "a.tar.gz": "gz", "file.": "", "a..b": "b",
		"dir/x.PY": "py", ".a.b": "b", "noext": "", "dir.d/": "d",
		"x.İNI": "i\u0307ni", // Python's full lower-case mapping
	} {
		if got := nameSuffix(name); got != want {
			t.Errorf("nameSuffix(%q) = %q, want %q", name, got, want)
		}
	}
}

// A file's family comes from its suffix, any case, in the reference's
// order (archive, json, code, then the media table); an unknown suffix is
// judged by the content: empty or NUL-free is text, else a document.
func TestFileFamilyBySuffixThenContent(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"photo.JPG", "x", "image"}, {"a.jpeg", "x", "image"}, {"i.webp", "x", "image"}, {"i.ico", "x", "image"}, {"t.TIF", "x", "image"},
		{"clip.mov", "x", "video"}, {"c.MKV", "x", "video"}, {"c.m4v", "x", "video"}, {"c.mpeg", "x", "video"},
		{"s.mp3", "x", "audio"}, {"s.FLAC", "x", "audio"}, {"s.m4a", "x", "audio"},
		{"r.pdf", "x", "document"}, {"r.DOCX", "x", "document"}, {"r.xlsx", "x", "document"}, {"r.rtf", "x", "document"},
		{"n.txt", "x", "text"}, {"n.csv", "x", "text"}, {"n.rst", "x", "text"}, {"n.svelte", "x", "text"}, {"n.LOG", "x", "text"}, {"n.ipynb", "x", "text"},
		{"m.py", "x", "code"}, {"m.GO", "x", "code"}, {"readme.md", "x", "code"}, {"p.html", "x", "code"}, {"c.yaml", "x", "code"}, {"prod.env", "x", "code"},
		{"d.json", "x", "json"}, {"d.JSONL", "x", "json"}, {"d.ndjson", "x", "json"},
		{"a.zip", "x", "archive"}, {"a.tar.gz", "x", "archive"}, {"a.7z", "x", "archive"}, {"a.TGZ", "x", "archive"},
		{"blob.bin", "ab\x00cd", "document"}, {"notes.xyz", "plain \xe9 latin-1", "text"}, {"empty.dat", "", "text"}, {".bashrc", "export A=1", "text"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := fileFamily(p); got != tc.want {
			t.Errorf("fileFamily(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := fileFamily(filepath.Join(dir, "missing.xyz")); got != "document" {
		t.Errorf("fileFamily(missing) = %q, want document", got)
	}
}

// read_artifact's content_family is the same table over the artifact's
// name; an unknown suffix is a document (the reference's sniff finds no
// such file), whatever the content type.
func TestArtifactFamilyIsNameBased(t *testing.T) {
	for name, want := range map[string]string{
		"notes.txt": "text", "data.JSON": "json", "page.md": "code", "img.png": "image", "blob.bin": "document",
		"0123abcd": "document", "": "document", "docs/report.pdf": "document", "a.tar.gz": "archive",
	} {
		if got := artifactFamily(name); got != want {
			t.Errorf("artifactFamily(%q) = %q, want %q", name, got, want)
		}
	}
}

// Differential: the suffix the family is read from (Path(name).suffix
// lowered, dot removed) for odd names.
func TestFileSuffixMatchesPythonOnRandomNames(t *testing.T) {
	r := rand.New(rand.NewSource(99))
	alpha := []string{"a", ".", ".", "P", "Y", "x", " ", "é", "İ", "K", "ẞ", "Σ", "gz", "tar"}
	names := []string{"a.tar.gz", "A.PY", ".env", "x.", "..", "...", "a..b", ".a.b", "noext", "x.İNI", "x.JSON", "x.K"}
	for range 3000 {
		n := randGlobString(r, alpha, 6)
		if n == "" || n == "." || n == ".." {
			continue
		}
		names = append(names, n)
	}
	var got struct {
		Suffix []string `json:"suffix"`
	}
	runIgnoreReferencePy(t, map[string]any{"glob": []any{}, "rules": []any{}, "suffix": names}, &got)
	bad := 0
	for i, n := range names {
		if ours := nameSuffix(n); ours != got.Suffix[i] {
			bad++
			if bad <= 15 {
				t.Errorf("suffix of %q: python %q, ours %q", n, got.Suffix[i], ours)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d/%d suffix mismatches", bad, len(names))
	}
}
