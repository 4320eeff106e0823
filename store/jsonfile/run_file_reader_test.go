package jsonfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A process that opened run_A.json (a Python gateway without a runner, a
// backup) and reads it after saves of A and then of B reads a whole state
// of run A, as spec §4.3's temp file and rename promise: the run file it
// holds is not rewritten as a spare for B's save.
func TestReaderOfARunFileReadsThatRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	a, b := taggedRun("A", "a1"), taggedRun("B", "b1")
	for _, r := range []*durable.RunState{a, b} {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		reader, err := os.Open(filepath.Join(dir, "run_A.json"))
		if err != nil {
			t.Fatal(err)
		}
		a.Vars["tag"] = "a-next"
		if err := s.RunCommit(ctx, &store.CommitParams{Run: a}); err != nil {
			t.Fatal(err)
		}
		b.Vars["tag"] = "b-" + strings.Repeat("x", 64*(round+1))
		if err := s.RunCommit(ctx, &store.CommitParams{Run: b}); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(reader)
		reader.Close()
		if err != nil {
			t.Fatal(err)
		}
		r, err := durable.UnmarshalRun(data)
		if err != nil {
			t.Fatalf("round %d: what a reader of run_A.json read does not decode: %v\n%s", round, err, data)
		}
		if r.RunID != "A" {
			t.Fatalf("round %d: a reader of run_A.json read the state of run %q (tag %v)", round, r.RunID, r.Vars["tag"])
		}
	}
}
