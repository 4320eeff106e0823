package postgres_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestInvalidUTF8InKeysAndIDs: a Go host's string may hold bytes
// that are not UTF-8 (an actor id, a wait key a workflow builds from a
// host value). The other stores keep such a run (its JSON text writes the
// bytes as U+FFFD, and a read gives them back so); PostgreSQL refuses
// them in the text key columns (SQLSTATE 22021), so every commit of the
// run fails, as NUL did before keys.go escaped it.
func TestInvalidUTF8InKeysAndIDs(t *testing.T) {
	testURL(t)
	t.Parallel()
	pg := openSchema(t, testSchema(t))
	for name, s := range map[string]store.Store{"memory": memory.New(), "postgres": pg} {
		ctx := t.Context()
		r := testRun("run-1")
		r.ActorID = "actor\xff"
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Errorf("%s: create of a run whose actor id is %q: %v", name, r.ActorID, err)
			continue
		}
		r.Status = durable.RunWaiting
		r.Waiting = &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "key\xfe", ResumeToNode: "n",
			Until: durable.NewTime(t0.Add(time.Minute))}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
			t.Errorf("%s: commit of a run waiting on key %q: %v", name, r.Waiting.WaitKey, err)
			continue
		}
		got, err := s.RunGet(ctx, "run-1")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The key as the run reads back: a delivery looks the run up by it.
		if l, err := s.RunList(ctx, &store.RunListParams{WaitKeys: []string{got.Waiting.WaitKey}}); err != nil || len(l) != 1 {
			t.Errorf("%s: RunList by the stored wait key %q = %d runs, %v; want 1", name, got.Waiting.WaitKey, len(l), err)
		}
	}
}

// TestDistinctNonUTF8ConsumersKeepTheirCursors: consumer ids were stored
// with U+FFFD for each byte that is not UTF-8 (keyText), so consumers
// "c-\xff" and "c-\xfe" shared one command_cursors row: one consumer's
// CursorSave moved the other's cursor, which then skipped commands it
// never processed or re-read ones it did. Each keeps its own, as in the
// memory store (store/storetest's Cursors/NonUTF8Consumers).
func TestDistinctNonUTF8ConsumersKeepTheirCursors(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	s := openSchema(t, testSchema(t))
	if err := s.CursorSave(ctx, "c-\xff", 5); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(ctx, "c-\xfe", 9); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CursorLoad(ctx, "c-\xff"); err != nil || got != 5 {
		t.Errorf("CursorLoad(c-\\xff) = %d, %v; want 5 (another consumer's save moved it)", got, err)
	}
}
