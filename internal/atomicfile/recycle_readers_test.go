package atomicfile_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// A reader that opened run_a.json before a Replace of it keeps reading a
// whole old state of run a, whatever is replaced next: the file it holds
// is not reused as a spare while it is open. With no reader, the displaced
// file is reused, which is what the Recycler is for.
func TestRecyclerLeavesAFileAReaderHoldsAlone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exchange (and so the recycling) is Linux-only")
	}
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "run_a.json"), filepath.Join(dir, "run_b.json")
	const oldA = `{"run_id": "a", "v": 1}`
	for path, content := range map[string]string{a: oldA, b: `{"run_id": "b", "v": 1}`} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := unsynced(t, dir)

	// No reader: the file run_a.json was is run_b.json's next one.
	oldInode := inodeOf(t, a)
	if err := r.Replace(a, []byte(`{"run_id": "a", "v": 2}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(b, []byte(`{"run_id": "b", "v": 2}`)); err != nil {
		t.Fatal(err)
	}
	if got := inodeOf(t, b); got != oldInode {
		t.Fatalf("the displaced file was not reused (inode %d, run_b.json now %d): does this file system grant leases?", oldInode, got)
	}

	// A reader holds run_a.json across two Replaces.
	reader, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	held := inodeOf(t, a)
	if err := r.Replace(a, []byte(`{"run_id": "a", "v": 3}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(b, []byte(`{"run_id": "b", "v": 3, "longer": "than run a's old state"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(reader)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"run_id": "a", "v": 2}` {
		t.Fatalf("a reader of run_a.json read %q after the next Replace of another file", got)
	}
	if inodeOf(t, b) == held {
		t.Fatal("the file a reader held became run_b.json")
	}
	for path, want := range map[string]string{a: `{"run_id": "a", "v": 3}`, b: `{"run_id": "b", "v": 3, "longer": "than run a's old state"}`} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Fatalf("%s holds %q, want %q", filepath.Base(path), got, want)
		}
	}
}
