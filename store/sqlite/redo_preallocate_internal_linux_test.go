package sqlite

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFullRedoLogIsPreallocatedWithoutHoles: a synchronous=FULL store
// writes the first redoPreallocated bytes of a new redo log with zeros, so
// that each record's fdatasync overwrites blocks the file already has
// instead of allocating them. The file must have those blocks from its
// start (the records go there first), not just its size: a hole, read as
// zeros all the same, would be allocated at the commits' expense.
func TestFullRedoLogIsPreallocatedWithoutHoles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.sqlite3")
	s, err := New(t.Context(), Config{Path: path, Synchronous: "FULL", IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(path + redoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no block count")
	}
	if fi.Size() < redoPreallocated || st.Blocks*512 < redoPreallocated {
		t.Fatalf("redo log of %d bytes with %d bytes allocated; want %d written", fi.Size(), st.Blocks*512, redoPreallocated)
	}
}
