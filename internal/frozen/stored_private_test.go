package frozen

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

func wireText(t *testing.T, v any) string {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStoredRecordEffectExtraIsACopy: the unknown members an effect was
// read with are the frozen record's own: a change through the caller's
// record or a thawed copy leaves what the store (memory, the SQLite hot
// ledger cache) returns afterwards as it was. The package doc: "The frozen
// copy isolates its keeper from the callers".
func TestStoredRecordEffectExtraIsACopy(t *testing.T) {
	t.Parallel()
	rec, err := durable.UnmarshalRecord([]byte(`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "completed",
 "effect": {"type": "emit_event", "payload": {}, "result_key": null, "meta": {"k": "v"}},
 "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null,
 "attempt": 1, "idempotency_key": null}`))
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewStoredRecord(rec, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := wireText(t, f.Thaw().JSONValue(true))
	meta := func(r *durable.StepRecord) map[string]any {
		for _, kv := range r.Effect.JSONValue().(pyjson.Ordered) {
			if kv.Key == "meta" {
				return kv.Value.(map[string]any)
			}
		}
		t.Fatal("no meta member")
		return nil
	}
	meta(rec)["k"] = "CALLER"
	meta(f.Thaw())["t"] = "THAWED"
	if got := wireText(t, f.Thaw().JSONValue(true)); got != want {
		t.Errorf("the frozen record changed with the caller's and a thawed copy's effect:\n got  %s\n want %s", got, want)
	}
}

// TestStoredRunOutputReadIsACopy: a run built by durable.RunFromJSON with
// an output that is not an object keeps the caller's value; the frozen run
// (memory store, JSON store's run cache) does not change with the caller's
// later change to that list.
func TestStoredRunOutputReadIsACopy(t *testing.T) {
	t.Parallel()
	output := []any{"first", map[string]any{"k": "v"}}
	run, err := durable.RunFromJSON(map[string]any{
		"run_id": "r", "workflow_id": "wf", "status": "completed", "vars": map[string]any{}, "output": output,
		"created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00",
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewStoredRun(run)
	if err != nil {
		t.Fatal(err)
	}
	want := wireText(t, f.Thaw().JSONValue())
	output[1].(map[string]any)["k"] = "CALLER"
	if got := wireText(t, f.Thaw().JSONValue()); got != want {
		t.Errorf("the frozen run changed with the caller's output list:\n got  %s\n want %s", got, want)
	}
}
