//go:build linux

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Where a displaced file cannot be checked for readers (no write lease
// granted: leases off, a network file system), "displaced files are not
// reused at all": once a check comes back unknown, the file is dropped
// and so is every file displaced after it. Breaks if an unknown answer is
// taken for "nobody has it open" (recycle.go: open || !known), so that a
// reader's file is rewritten with another file's content, or if the
// Recycler does not remember it (noLease), so that it keeps pooling files
// it cannot check. Not parallel: openElsewhere is package state.
func TestRecyclerDropsDisplacedFilesWhenLeasesAreUnknown(t *testing.T) {
	real := openElsewhere
	t.Cleanup(func() { openElsewhere = real })
	checked := 0
	openElsewhere = func(*os.File) (open, known bool) { checked++; return false, false }

	dir := t.TempDir()
	a, b := filepath.Join(dir, "run_a.json"), filepath.Join(dir, "run_b.json")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewRecycler(dir, Options{NoSync: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if err := r.Replace(a, []byte("a v2")); err != nil {
		t.Fatal(err)
	}
	if r.unsupported.Load() {
		t.Skip("no RENAME_EXCHANGE on this file system: nothing is recycled")
	}
	// A reader holds run_b.json across the next two Replaces.
	reader, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := r.Replace(b, []byte("b v2")); err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("a displaced file was reused without a check for readers")
	}
	if err := r.Replace(a, []byte("a v3, longer")); err != nil {
		t.Fatal(err)
	}
	wantContent(t, a, "a v3, longer")
	wantContent(t, b, "b v2")
	if got, err := io.ReadAll(reader); err != nil || string(got) != "old" {
		t.Fatalf("a reader of run_b.json read %q (%v) after a Replace of run_a.json; want its old content", got, err)
	}
	wantNoSpares(t, r)
}
