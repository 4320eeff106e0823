package jsonfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/store"
)

// Package doc: "the store removes its spares when it closes". Replacing
// a run file leaves a spare in the directory; Close must take it away so
// that the directory holds only the Python layout.
func TestCloseRemovesTheSpareFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	r := taggedRun("r1", "a")
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"b", "c"} {
		r.Vars["tag"] = tag
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := atomicfile.Glob(dir, atomicfile.SparePattern); len(left) == 0 {
		t.Skip("no spare file was made (no atomic exchange here)")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := atomicfile.Glob(dir, atomicfile.SparePattern); len(left) != 0 {
		t.Errorf("spare files left after Close: %v", left)
	}
}

// A New that fails after taking the directory lock (here commands.jsonl
// cannot be read) releases it: once the cause is gone, the directory
// opens, instead of failing with ErrDirInUse until the process ends.
func TestFailedOpenReleasesTheDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, commandsFile)
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err := New(Config{Dir: dir, NoSync: true}); err == nil {
		_ = s.Close()
		t.Fatal("New succeeded with a directory in place of commands.jsonl")
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatalf("New after the failed one: %v (lock not released?)", err)
	}
	_ = s.Close()
}
