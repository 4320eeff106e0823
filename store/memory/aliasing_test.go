package memory_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func wireField(o pyjson.Ordered, key string) any {
	for _, kv := range o {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func wireText(t *testing.T, v any) string {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadValuesArePrivate: values a Python run or record
// keeps aside because they are not objects (a run's output list, kept in
// RunState.outputRead; an effect payload list, in Effect.payloadRead) are
// copied by frozen.NewStoredRun/NewStoredRecord with the struct, not deep:
// the frozen copy, the committer's object and every thawed read share one
// list, which JSONValue hands out. The package doc promises that "a
// caller's later mutation never leaks into the stored state, and every
// read returns a fresh copy".
func TestReadValuesArePrivate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	run, err := durable.UnmarshalRun([]byte(`{"run_id": "py1", "workflow_id": "wf", "status": "completed",
 "current_node": "end", "vars": {}, "waiting": null, "output": ["first", {"k": "v"}], "error": null,
 "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00",
 "actor_id": null, "session_id": null, "parent_run_id": null}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := durable.UnmarshalRecord([]byte(`{"run_id": "py1", "step_id": "s1", "node_id": "n",
 "status": "completed", "effect": {"type": "emit_event", "payload": ["p0", {"k": "v"}], "result_key": null},
 "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null,
 "attempt": 1, "idempotency_key": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	get := func() (string, string) {
		r, err := s.RunGet(ctx, "py1")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "py1"})
		if err != nil || len(recs) != 1 {
			t.Fatalf("ledger = %v, %v", recs, err)
		}
		return wireText(t, wireField(r.JSONValue(), "output")), wireText(t, recs[0].Effect.JSONValue())
	}
	wantOut, wantEff := get()

	// The committer changes its own objects after the commit.
	wireField(run.JSONValue(), "output").([]any)[0] = "COMMITTER"
	rec.Effect.JSONValue().(pyjson.Ordered)[1].Value.([]any)[0] = "COMMITTER"
	if out, eff := get(); out != wantOut || eff != wantEff {
		t.Errorf("the committer's change after the commit leaks into reads:\n output %s (want %s)\n effect %s (want %s)", out, wantOut, eff, wantEff)
	}

	// A reader changes its own copies.
	r, _ := s.RunGet(ctx, "py1")
	wireField(r.JSONValue(), "output").([]any)[1].(map[string]any)["k"] = "READER"
	recs, _ := s.LedgerList(ctx, &store.LedgerListParams{RunID: "py1"})
	recs[0].Effect.JSONValue().(pyjson.Ordered)[1].Value.([]any)[1].(map[string]any)["k"] = "READER"
	if out, eff := get(); out != wantOut || eff != wantEff {
		t.Errorf("a reader's change to its copy leaks into later reads:\n output %s (want %s)\n effect %s (want %s)", out, wantOut, eff, wantEff)
	}
}
