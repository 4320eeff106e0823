package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// TestCache_ForeignRecordValuesArePrivate: the values a record from
// another writer keeps as read (an effect's unknown members, an attempt
// that is a list) are the hot ledger's as much as the reader's: a reader
// changing what a read returned changes nothing the cache serves, whether
// the cache took the records at the commit (a running run) or from the
// ledger read that returned them (a waiting run's ledger, read from disk).
func TestCache_ForeignRecordValuesArePrivate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "runtime.sqlite3"))
	for _, status := range []durable.RunStatus{durable.RunRunning, durable.RunWaiting} {
		id := "r-" + string(status)
		run := &durable.RunState{RunID: id, WorkflowID: "wf", Status: status, Vars: map[string]any{}}
		if status == durable.RunWaiting {
			run.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:" + id}
		}
		rec, err := durable.UnmarshalRecord([]byte(`{"run_id": "` + id + `", "step_id": "s1", "node_id": "n",
 "status": "completed", "effect": {"type": "emit_event", "payload": {}, "result_key": null, "meta": {"k": "v"}},
 "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null,
 "attempt": [2, {"k": "v"}], "idempotency_key": null}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
			t.Fatal(err)
		}
		read := func() *durable.StepRecord {
			recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			if err != nil || len(recs) != 1 {
				t.Fatalf("%s: ledger = %v, %v", id, recs, err)
			}
			return recs[0]
		}
		text := func(r *durable.StepRecord) string {
			b, err := durable.MarshalRecord(r, pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		first := read()
		want := text(first)
		for _, kv := range first.JSONValue(true) {
			switch kv.Key {
			case "effect":
				for _, m := range kv.Value.(pyjson.Ordered) {
					if m.Key == "meta" {
						m.Value.(map[string]any)["k"] = "READER"
					}
				}
			case "attempt":
				kv.Value.([]any)[1].(map[string]any)["k"] = "READER"
			}
		}
		if got := text(read()); got != want {
			t.Errorf("%s: a reader's change to its copy leaks into later reads:\n got  %s\n want %s", id, got, want)
		}
	}
}
