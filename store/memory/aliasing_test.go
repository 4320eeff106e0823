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

// effectMember returns the value of key in the effect's wire object.
func effectMember(t *testing.T, e *durable.Effect, key string) any {
	t.Helper()
	o, ok := e.JSONValue().(pyjson.Ordered)
	if !ok {
		t.Fatalf("effect wire value is %T", e.JSONValue())
	}
	return wireField(o, key)
}

// TestEffectExtraMembersArePrivate: the unknown members an effect was read
// with (a newer writer's) are the store's own: neither the committer nor a
// reader changing what JSONValue gave it changes later reads, as the
// package doc promises ("a caller's later mutation never leaks into the
// stored state, and every read returns a fresh copy"). Same as
// TestReadValuesArePrivate, for effect members.
func TestEffectExtraMembersArePrivate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	run := &durable.RunState{RunID: "px", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{}}
	rec, err := durable.UnmarshalRecord([]byte(`{"run_id": "px", "step_id": "s1", "node_id": "n",
 "status": "completed", "effect": {"type": "emit_event", "payload": {}, "result_key": null, "meta": {"k": "v", "list": [1]}},
 "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null,
 "attempt": 1, "idempotency_key": "idem"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	read := func() *durable.StepRecord {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "px"})
		if err != nil || len(recs) != 1 {
			t.Fatalf("ledger = %v, %v", recs, err)
		}
		return recs[0]
	}
	text := func() string { return wireText(t, read().JSONValue(true)) }
	want := text()

	// The committer changes its own record after the commit.
	effectMember(t, rec.Effect, "meta").(map[string]any)["k"] = "COMMITTER"
	if got := text(); got != want {
		t.Errorf("the committer's change after the commit leaks into reads:\n got  %s\n want %s", got, want)
	}

	// A reader changes its own copy.
	effectMember(t, read().Effect, "meta").(map[string]any)["list"] = "READER"
	if got := text(); got != want {
		t.Errorf("a reader's change to its copy leaks into later reads:\n got  %s\n want %s", got, want)
	}

	// LedgerFindCompleted hands out the same shared map.
	found, err := s.LedgerFindCompleted(ctx, "px", "idem")
	if err != nil || found == nil {
		t.Fatalf("find = %v, %v", found, err)
	}
	effectMember(t, found.Effect, "meta").(map[string]any)["found"] = "FINDER"
	if got := text(); got != want {
		t.Errorf("a LedgerFindCompleted reader's change leaks into later reads:\n got  %s\n want %s", got, want)
	}
}

// TestValuesBuiltFromCallerMapsAreCopiedAtCommit: durable.RunFromJSON and
// durable.RecordFromJSON keep a non-object output, a non-object effect
// payload and unknown effect members as the caller's own values; the store
// copies them at the commit, so the caller's later change to the maps it
// built from changes nothing read, as in a durable store (SQLite, JSON
// files).
func TestValuesBuiltFromCallerMapsAreCopiedAtCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	output := []any{"first", map[string]any{"k": "v"}}
	run, err := durable.RunFromJSON(map[string]any{
		"run_id": "pm", "workflow_id": "wf", "status": "completed", "current_node": "end",
		"vars": map[string]any{}, "output": output,
		"created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00",
	})
	if err != nil {
		t.Fatal(err)
	}
	payload := []any{"p0"}
	meta := map[string]any{"k": "v"}
	rec, err := durable.RecordFromJSON(map[string]any{
		"run_id": "pm", "step_id": "s1", "node_id": "n", "status": "completed",
		"effect":  map[string]any{"type": "emit_event", "payload": payload, "result_key": nil, "meta": meta},
		"attempt": 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	get := func() (string, string) {
		r, err := s.RunGet(ctx, "pm")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "pm"})
		if err != nil || len(recs) != 1 {
			t.Fatalf("ledger = %v, %v", recs, err)
		}
		return wireText(t, wireField(r.JSONValue(), "output")), wireText(t, recs[0].Effect.JSONValue())
	}
	wantOut, wantEff := get()

	output[0] = "CALLER"
	output[1].(map[string]any)["k"] = "CALLER"
	payload[0] = "CALLER"
	meta["k"] = "CALLER"
	if out, eff := get(); out != wantOut || eff != wantEff {
		t.Errorf("the caller's change to the maps it built from leaks into reads:\n output %s (want %s)\n effect %s (want %s)", out, wantOut, eff, wantEff)
	}
}

// TestForeignAttemptValueIsPrivate: a record another writer wrote with a
// non-integer attempt (a list here) keeps it as read; a reader's change to
// the record's wire object changes no later read of the ledger.
func TestForeignAttemptValueIsPrivate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	rec, err := durable.UnmarshalRecord([]byte(`{"run_id": "pa", "step_id": "s1", "node_id": "n",
 "status": "completed", "effect": null, "result": null, "error": null, "started_at": null, "ended_at": null,
 "actor_id": null, "session_id": null, "attempt": [2, {"k": "v"}], "idempotency_key": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LedgerAppend(ctx, "pa", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	read := func() *durable.StepRecord {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "pa"})
		if err != nil || len(recs) != 1 {
			t.Fatalf("ledger = %v, %v", recs, err)
		}
		return recs[0]
	}
	want := wireText(t, read().JSONValue(true))
	attempt, ok := wireField(read().JSONValue(true), "attempt").([]any)
	if !ok {
		t.Fatalf("attempt reads back as %T", wireField(read().JSONValue(true), "attempt"))
	}
	attempt[0] = "READER"
	attempt[1].(map[string]any)["k"] = "READER"
	if got := wireText(t, read().JSONValue(true)); got != want {
		t.Errorf("a reader's change to its copy leaks into later reads:\n got  %s\n want %s", got, want)
	}
}
