package visualflow

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Without a workspace scope an "@" handle is not stripped: "@/abs/x.txt"
// is a relative path under the working directory, as Python's
// Path("@/abs/x.txt") is, so it is not found even though /abs/x.txt
// exists. Stripping "@" outside the policy would read /abs/x.txt.
func TestReadFileAtPrefixIsLiteralWithoutWorkspace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, st := startRunWith(t, readFileFlow("@"+p), CompileOptions{}, map[string]any{})
	if want := "File not found: @" + p; st.Output["error"] != want {
		t.Fatalf("output %s, want error %q", jsonText(t, st.Output), want)
	}
}

// Listing a folder through a link (no workspace) walks the link's target,
// so the .abstractignore is looked for above the target, not above the
// link: proj/.abstractignore hides b.log when proj/sub is listed as
// other/lnk. Without resolving the folder the ignore file is never found
// and b.log is listed.
func TestListFolderThroughLinkUsesTargetsAbstractIgnore(t *testing.T) {
	base := listTree(t, map[string]string{
		"proj/.abstractignore": "*.log\n",
		"proj/sub/a.txt":       "a",
		"proj/sub/b.log":       "b",
		"other/":               "",
	})
	lnk := filepath.Join(base, "other", "lnk")
	if err := os.Symlink(filepath.Join(base, "proj", "sub"), lnk); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	got, _ := listRel(t, lnk, map[string]any{"folder_path": lnk})
	if len(got) != 1 || got[0] != "a.txt" {
		t.Fatalf("entries = %v, want [a.txt] (b.log hidden by proj/.abstractignore)", got)
	}
}

// A file entry carries its size in bytes (size_bytes); folder entries do
// not.
func TestListFolderFileEntriesCarrySize(t *testing.T) {
	dir := listTree(t, map[string]string{"a.txt": "hello", "sub/": ""})
	_, out := listRel(t, dir, map[string]any{"folder_path": dir, "include_directories": true})
	seen := 0
	for _, e := range out["entries"].([]any) {
		m := e.(map[string]any)
		size, has := m["size_bytes"]
		switch m["name"] {
		case "a.txt":
			seen++
			if size != int64(5) {
				t.Errorf("a.txt size_bytes = %#v, want int64(5)", size)
			}
		case "sub":
			seen++
			if has {
				t.Errorf("folder entry has size_bytes %v", size)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("entries = %s; want a.txt and sub listed", jsonText(t, out["entries"]))
	}
}

// A FIFO of unknown suffix is listed without being opened (which would
// block the listing) and classified as an empty file is: its size is 0,
// and an empty file of unknown suffix is text (the size check comes
// before the regular-file check).
func TestListFolderFIFOOfUnknownSuffixIsText(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.zzz"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan any, 1)
	go func() {
		out, err := listFolder(map[string]any{"folder_path": dir})
		if err != nil {
			out = err
		}
		done <- out
	}()
	select {
	case out := <-done:
		m, ok := out.(map[string]any)
		if !ok {
			t.Fatalf("list_folder_files: %v", out)
		}
		entries := m["entries"].([]any)
		if len(entries) != 1 || entries[0].(map[string]any)["family"] != "text" {
			t.Fatalf("entries = %s, want one pipe.zzz entry of family text", jsonText(t, entries))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("list_folder_files blocked on a FIFO")
	}
}
