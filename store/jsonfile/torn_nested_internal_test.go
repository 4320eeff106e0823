package jsonfile

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// tornAfterNested is a ledger record cut right after its "effect" member
// closed: the nested object decodes whole up to the cut.
const tornAfterNested = `{"run_id": "r1", "step_id": "torn", "node_id": "n", "status": "completed", ` +
	`"effect": {"type": "llm_call", "payload": {"prompt": "hi"}, "result_key": null}`

// tornAfterRunIDObject is a ledger record cut right after a nested object
// that has a run_id member of its own (a child run's result): it decodes
// whole up to the cut but has no step_id, so it is no record either.
const tornAfterRunIDObject = `{"run_id": "r1", "step_id": "torn", "node_id": "n", "status": "completed", ` +
	`"effect": null, "result": {"run_id": "child", "status": "completed"}`

// A torn line whose tear falls right after a nested object closes is
// skipped, not read as a record made of that nested object; when a whole
// record follows on the same line (Python's append after a torn one), that
// record alone is recovered. Seqs follow the records read.
func TestTornLineEndingInANestedObjectIsNoRecord(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		file string
		want []string
	}{
		"torn last line": {
			file: pyLedgerLine("first", "k1", "2026-01-01T09:00:00+00:00") + tornAfterNested,
			want: []string{"first"},
		},
		"torn after a nested object holding a run_id": {
			file: pyLedgerLine("first", "k1", "2026-01-01T09:00:00+00:00") + tornAfterRunIDObject,
			want: []string{"first"},
		},
		"whole record glued after it": {
			file: pyLedgerLine("first", "k1", "2026-01-01T09:00:00+00:00") + tornAfterNested +
				pyLedgerLine("glued", "k2", "2026-01-01T09:00:01+00:00"),
			want: []string{"first", "glued"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeRawFile(t, filepath.Join(dir, "ledger_r1.jsonl"), tc.file)
			s := openInternal(t, dir)
			ctx := t.Context()
			recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			if got := stepIDs(recs); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %q, want %q", got, tc.want)
			}
			if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != int64(len(tc.want)) {
				t.Fatalf("LedgerCount = %d, %v; want %d", n, err, len(tc.want))
			}
			next := &durable.StepRecord{RunID: "r1", StepID: "next", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
			if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{next}); err != nil {
				t.Fatal(err)
			}
			if next.Seq != int64(len(tc.want))+1 {
				t.Fatalf("the next append took seq %d, want %d", next.Seq, len(tc.want)+1)
			}
		})
	}
}

// A command appended right after torn bytes on one line (a writer killed
// mid-line, then Python's append) is listed, so CommandDeleteByRun deletes
// it with its run's other commands; the other runs' commands stay.
func TestCommandDeleteByRunReachesACommandAfterTornBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()
	writeRawFile(t, filepath.Join(dir, "commands.jsonl"),
		cmdLine("c1", "A", 1)+"\n"+`{"command_id": "torn", "run_id": "A", "ty`+cmdLine("c2", "A", 2)+"\n"+cmdLine("c3", "B", 3)+"\n")
	s := openInternal(t, dir)
	listed := func(s *Store) []string {
		t.Helper()
		recs, _, err := s.CommandListAfter(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.CommandID)
		}
		return ids
	}
	if got := listed(s); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("before: %q", got)
	}
	if n, err := s.CommandDeleteByRun(ctx, "A"); err != nil || n != 2 {
		t.Fatalf("CommandDeleteByRun(A) = %d, %v; want 2", n, err)
	}
	if got := listed(s); !slices.Equal(got, []string{"c3"}) {
		t.Fatalf("after the delete: %q", got)
	}
	s.Close()
	if got := listed(openInternal(t, dir)); !slices.Equal(got, []string{"c3"}) {
		t.Fatalf("reopened: %q", got)
	}
}
