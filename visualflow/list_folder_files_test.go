package visualflow

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listFolderFlow runs list_folder_files with the given pin defaults on dir
// and ends with its files, entries and truncated outputs.
func listFolderFlow(dir string, defaults map[string]any) map[string]any {
	defaults["folder_path"] = dir
	return rsFlow("list_folder", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ls", "list_folder_files", []string{"exec-in:exec", "folder_path:string", "family:string", "recursive:boolean", "include_directories:boolean", "limit:number", "max_depth:number"},
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

// listTree creates the files (slash paths; a name ending in "/" is an
// empty folder) under a new temp folder and returns it.
func listTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// listRel runs list_folder_files on in and returns its entries' paths
// relative to base (folders with a trailing "/"), and the output.
func listRel(t *testing.T, base string, in map[string]any) ([]string, map[string]any) {
	t.Helper()
	v, err := listFolder(in)
	if err != nil {
		t.Fatalf("list_folder_files: %v", err)
	}
	out := v.(map[string]any)
	var got []string
	for _, e := range out["entries"].([]any) {
		m := e.(map[string]any)
		p := m["path"].(string)
		if rel, err := filepath.Rel(filepath.ToSlash(base), p); err == nil {
			p = filepath.ToSlash(rel)
		}
		if m["kind"] == "folder" {
			p += "/"
		}
		got = append(got, p)
	}
	return got, out
}

// Every file entry carries the reference's family of its name, and the
// family input keeps only that family: archive, json and code test the
// suffix sets (so "code" also keeps .json files), the other families
// compare the entry's family; the filter is trimmed and lower-cased, "" or
// null mean any, and an unknown family keeps nothing.
func TestListFolderFilesFamilyFilter(t *testing.T) {
	dir := listTree(t, map[string]string{
		"a.png": "x", "b.py": "x", "c.json": "{}", "d.txt": "x", "e.zip": "x", "f.mp4": "x",
		"g.mp3": "x", "h.pdf": "x", "i.bin": "\x00\x01", "j.md": "x", "k.unknown": "plain",
	})
	all := []string{"a.png", "b.py", "c.json", "d.txt", "e.zip", "f.mp4", "g.mp3", "h.pdf", "i.bin", "j.md", "k.unknown"}
	for _, tc := range []struct {
		family any
		want   []string
	}{
		{nil, all},
		{"", all},
		{"any", all},
		{"image", []string{"a.png"}},
		{" IMAGE ", []string{"a.png"}},
		{"code", []string{"b.py", "c.json", "j.md"}},
		{"json", []string{"c.json"}},
		{"text", []string{"d.txt", "k.unknown"}},
		{"archive", []string{"e.zip"}},
		{"video", []string{"f.mp4"}},
		{"audio", []string{"g.mp3"}},
		{"document", []string{"h.pdf", "i.bin"}},
		{"other", nil},
		{"folder", nil},
		{"pictures", nil},
	} {
		got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "family": tc.family})
		if !slices.Equal(got, tc.want) {
			t.Errorf("family %q: listed %v, want %v", tc.family, got, tc.want)
		}
	}
	_, out := listRel(t, dir, map[string]any{"folder_path": dir})
	fams := map[string]any{}
	for _, e := range out["entries"].([]any) {
		m := e.(map[string]any)
		fams[m["name"].(string)] = m["family"]
	}
	want := map[string]any{"a.png": "image", "b.py": "code", "c.json": "json", "d.txt": "text", "e.zip": "archive",
		"f.mp4": "video", "g.mp3": "audio", "h.pdf": "document", "i.bin": "document", "j.md": "code", "k.unknown": "text"}
	if !maps.Equal(fams, want) {
		t.Errorf("entry families = %v, want %v", fams, want)
	}
}

// The extension filter applies before the family one; both must pass.
func TestListFolderFilesExtensionsWithFamily(t *testing.T) {
	dir := listTree(t, map[string]string{"a.PY": "x", "b.json": "{}", "c.png": "x", ".env": "X=1", "prod.env": "X=1"})
	for _, tc := range []struct {
		family, exts any
		want         []string
	}{
		{"code", "py,json", []string{"a.PY", "b.json"}},
		{"code", ".JSON", []string{"b.json"}},
		{"code", []any{"png"}, nil},
		{"image", "png\n.py", []string{"c.png"}},
		// ".env" has no suffix (Python's Path.suffix), so neither the
		// "env" extension nor the code family (which holds env) takes it.
		{"any", "env", []string{"prod.env"}},
		{"code", nil, []string{"a.PY", "b.json", "prod.env"}},
	} {
		got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "family": tc.family, "extensions": tc.exts})
		if !slices.Equal(got, tc.want) {
			t.Errorf("family %q extensions %q: listed %v, want %v", tc.family, tc.exts, got, tc.want)
		}
	}
}

// The .abstractignore rules (AbstractCore's subset of gitignore) hide
// entries of a recursive listing; each case lists the tree with folders.
func TestListFolderFilesAbstractIgnoreRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ignore string // .abstractignore of the listed folder; "-" for none
		files  []string
		want   []string
	}{
		{"name matches at any depth", "secret.txt", []string{"secret.txt", "sub/secret.txt", "sub/ok.txt"},
			[]string{"sub/", "sub/ok.txt"}},
		{"glob on the name", "*.log", []string{"a.log", "b.txt", "sub/c.log"}, []string{"sub/", "b.txt"}},
		{"leading slash anchors to the root", "/top.txt", []string{"top.txt", "sub/top.txt"},
			[]string{"sub/", "sub/top.txt"}},
		{"a slash matches the relative path, star crossing folders", "docs/*.md",
			[]string{"docs/a.md", "docs/x/b.md", "docs/c.txt", "other/docs/d.md"},
			[]string{"docs/", "other/", "docs/x/", "docs/c.txt", "other/docs/", "other/docs/d.md"}},
		{"double star is a single star", "**/b.md", []string{"b.md", "x/b.md", "x/y/b.md"}, []string{"x/", "b.md", "x/y/"}},
		{"trailing slash matches folders only, at any depth", "cache/", []string{"cache/a.txt", "sub/cache/b.txt", "sub/file/cache"},
			[]string{"sub/", "sub/file/", "sub/file/cache"}},
		{"negation re-includes, last match wins", "*.txt\n!keep.txt\n", []string{"a.txt", "keep.txt", "sub/keep.txt"},
			[]string{"sub/", "keep.txt", "sub/keep.txt"}},
		{"comments, blank lines and spaces", "# a.txt\n\n   b.txt   \n", []string{"a.txt", "b.txt"}, []string{"a.txt"}},
		{"question mark and classes", "?.txt\n[xy]1.md\n[!a]2.md\n", []string{"a.txt", "ab.txt", "x1.md", "z1.md", "a2.md", "b2.md"},
			[]string{"a2.md", "ab.txt", "z1.md"}},
		{"case-sensitive", "*.LOG", []string{"a.log", "b.LOG"}, []string{"a.log"}},
		{"built-in rules without a file", "-", []string{".git/HEAD", "node_modules/x.js", "build/out.o", "run.d/x.json", "src/a.go", "src/dist/b.js"},
			[]string{"src/", "src/a.go"}},
		{"built-in folder rules re-included", "!build/\n", []string{"build/out.o", "dist/x.js"}, []string{"build/", "build/out.o"}},
		{"an ignored folder is not entered", "skip/\n!skip/inner.txt\n!inner.txt\n", []string{"skip/inner.txt", "a.txt"},
			[]string{"a.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range tc.files {
				files[f] = "x"
			}
			if tc.ignore != "-" {
				files[".abstractignore"] = tc.ignore
			}
			dir := listTree(t, files)
			got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "recursive": true, "include_directories": true})
			got = slices.DeleteFunc(got, func(p string) bool { return p == ".abstractignore" })
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed %v, want %v", got, tc.want)
			}
		})
	}
}

// The nearest .abstractignore above the listed folder applies, relative to
// its own folder; one inside the listed tree is not read.
func TestListFolderFilesAbstractIgnoreFromAncestor(t *testing.T) {
	dir := listTree(t, map[string]string{
		".abstractignore":           "/sub/a.txt\nsub/deep/\n",
		"sub/a.txt":                 "x",
		"sub/b.txt":                 "x",
		"sub/deep/c.txt":            "x",
		"sub/inner/.abstractignore": "d.txt\n",
		"sub/inner/d.txt":           "x",
	})
	sub := filepath.Join(dir, "sub")
	got, _ := listRel(t, sub, map[string]any{"folder_path": sub, "recursive": true})
	want := []string{"b.txt", "inner/.abstractignore", "inner/d.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}

// limit counts only the entries left after the ignore rules, so truncated
// reports whether limit entries were listed.
func TestListFolderFilesLimitCountsAfterIgnores(t *testing.T) {
	dir := listTree(t, map[string]string{".abstractignore": "*.log\n.abstractignore\n", "a.log": "x", "b.log": "x", "c.txt": "x", "d.txt": "x"})
	for _, tc := range []struct {
		limit     int
		want      []string
		truncated bool
	}{
		{1, []string{"c.txt"}, true},
		{2, []string{"c.txt", "d.txt"}, true},
		{3, []string{"c.txt", "d.txt"}, false},
	} {
		got, out := listRel(t, dir, map[string]any{"folder_path": dir, "limit": tc.limit})
		if !slices.Equal(got, tc.want) || out["truncated"] != tc.truncated || out["count"] != int64(len(tc.want)) {
			t.Errorf("limit %d: listed %v truncated %v count %v, want %v %v", tc.limit, got, out["truncated"], out["count"], tc.want, tc.truncated)
		}
	}
}

// Ignore rules also hold for a non-recursive listing and under max_depth.
func TestListFolderFilesIgnoresWithDepth(t *testing.T) {
	dir := listTree(t, map[string]string{".abstractignore": ".abstractignore\n*.tmp\nhidden/\n",
		"a.txt": "x", "a.tmp": "x", "hidden/x.txt": "x", "sub/b.txt": "x", "sub/b.tmp": "x", "sub/deep/c.txt": "x"})
	got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "include_directories": true})
	if want := []string{"sub/", "a.txt"}; !slices.Equal(got, want) {
		t.Errorf("non-recursive: listed %v, want %v", got, want)
	}
	got, _ = listRel(t, dir, map[string]any{"folder_path": dir, "recursive": true, "include_directories": true, "max_depth": 1})
	if want := []string{"sub/", "a.txt", "sub/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("max_depth 1: listed %v, want %v", got, want)
	}
}

// Under a workspace scope both the workspace's ignored paths and the
// .abstractignore at the workspace root apply; paths stay virtual.
func TestListFolderFilesWorkspaceIgnoresCombine(t *testing.T) {
	root := listTree(t, map[string]string{".abstractignore": "*.secret\n", "data/a.txt": "x", "data/b.secret": "x",
		"data/private/c.txt": "x", "data/pub/d.txt": "x"})
	v, err := listFolder(map[string]any{"folder_path": "data", "recursive": true, "workspace_root": root,
		"workspace_ignored_paths": []any{"data/private"}})
	if err != nil {
		t.Fatal(err)
	}
	files := v.(map[string]any)["files"]
	if want := []any{"data/a.txt", "data/pub/d.txt"}; !slices.Equal(files.([]any), want) {
		t.Errorf("files = %v, want %v", files, want)
	}
}

// A link is matched by the path it resolves to: one leading out of the
// ignore root is matched by its absolute target, so a link into some
// "build" folder is hidden by the built-in "build/" rule.
func TestListFolderFilesIgnoreMatchesLinkTarget(t *testing.T) {
	dir := listTree(t, map[string]string{"a.txt": "x"})
	outside := listTree(t, map[string]string{"build/out.txt": "x", "ok/x.txt": "x"})
	for name, target := range map[string]string{"tobuild": "build", "took": "ok", "outfile": "build/out.txt"} {
		if err := os.Symlink(filepath.Join(outside, target), filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "include_directories": true})
	if want := []string{"took/", "a.txt"}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}

// The family pin works end to end through a flow.
func TestListFolderFilesFamilyPinInFlow(t *testing.T) {
	dir := listTree(t, map[string]string{"a.png": "x", "b.txt": "x"})
	flow := listFolderFlow(dir, map[string]any{"family": "image"})
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	files, _ := st.Output["files"].([]any)
	if want := filepath.ToSlash(filepath.Join(dir, "a.png")); len(files) != 1 || files[0] != want {
		t.Fatalf("files = %v, want [%s]", files, want)
	}
}

// The handler (AbstractRuntime visualflow_compiler/visual/executor.py,
// _create_list_folder_files_handler) reads limit and max_depth with
// Python's int(x) inside try/except: int(True) is 1 and int("2.5") raises
// (so the default 500 applies), int("1e0") too. So limit true lists one file,
// limit "2.5" lists all three, and max_depth true is a depth of 1.
func TestListFolderFilesLimitAndDepthReadAsPythonInt(t *testing.T) {
	dir := listTree(t, map[string]string{"a.txt": "x", "b.txt": "x", "c.txt": "x", "s/t/u.txt": "x"})
	for _, tc := range []struct {
		in   map[string]any
		want int
	}{
		{map[string]any{"limit": true}, 1},
		{map[string]any{"limit": "2.5"}, 3},
		{map[string]any{"limit": "1e0"}, 3},
		// max_depth 1: s/ is listed, s/t/ (depth 2) is neither listed nor entered.
		{map[string]any{"recursive": true, "max_depth": true, "include_directories": true}, 4},
	} {
		in := map[string]any{"folder_path": dir}
		for k, v := range tc.in {
			in[k] = v
		}
		got, _ := listRel(t, dir, in)
		if len(got) != tc.want {
			t.Errorf("%v: listed %v (%d entries), Python lists %d", tc.in, got, len(got), tc.want)
		}
	}
}

// _parse_extensions (same file) takes str(item or "") of each list item
// and str(value) of a non-list, non-None value, so extensions [7] or 7
// keep only files with suffix "7".
func TestListFolderFilesNonStringExtensions(t *testing.T) {
	dir := listTree(t, map[string]string{"a.txt": "x", "b.7": "x"})
	for _, exts := range []any{[]any{int64(7)}, int64(7)} {
		got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "extensions": exts})
		want := []string{"b.7"}
		if !slices.Equal(got, want) {
			t.Errorf("extensions %#v: listed %v, Python lists %v", exts, got, want)
		}
	}
}

// guess_file_family / file_matches_filters lower the suffix with Python's
// str.lower(), the full case mapping: "İ" (U+0130) becomes "i" + U+0307, so
// "notes.İNI" has suffix "i̇ni", no table knows it, and the content decides
// (text here), and the extension filter "ini" does not keep the file.
func TestListFolderFilesSuffixFullLowercase(t *testing.T) {
	dir := listTree(t, map[string]string{"notes.İNI": "plain"})
	_, out := listRel(t, dir, map[string]any{"folder_path": dir})
	es := out["entries"].([]any)
	if len(es) != 1 || es[0].(map[string]any)["family"] != "text" {
		t.Errorf("entries %v: Python's family is text", es)
	}
	if got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "extensions": "ini"}); len(got) != 0 {
		t.Errorf("extensions ini listed %v; Python's suffix is %q", got, "i\u0307ni")
	}
}
