package history_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// A turn's stats count records whose effect type or status is padded: Python's
// _extract_repl_stats_from_ledger (history_bundle.py) compares
// str(effect.type).strip() (and _enum_str(status).strip()), so the records
// paddedTurnDir writes (" llm_call ", " tool_calls ") count; executed, the
// turn's stats are
//
//	{"duration_ms": 3000, "llm_calls": 1, "tool_calls": 1,
//	 "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}, "tok_s": 2.3333333333333335}
//
// Comparing the type unstripped gave llm_calls 0, tool_calls 0, usage all
// 0, tok_s null, while the timeline of the same bundle strips it
// ("effect_type": "llm_call"/"tool_calls") on both sides.
func TestTurnStatsCountPaddedEffectTypes(t *testing.T) {
	b := paddedTurnExport(t)
	turns, _ := b["session"].(map[string]any)["turns"].([]any)
	if len(turns) != 1 {
		t.Fatalf("turns = %v", turns)
	}
	stats := turns[0].(map[string]any)["stats"].(map[string]any)
	got, _ := json.Marshal(stats)
	want := `{"duration_ms":3000,"llm_calls":1,"tok_s":2.3333333333333335,"tool_calls":1,"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}`
	if string(got) != want {
		t.Errorf("stats = %s\nPython: %s", got, want)
	}
}

// paddedTurnDir writes the run p1 (session s1, a chat turn) and its two
// ledger lines, in Python's JsonFileRunStore/JsonlLedgerStore layout, and
// exports p1 with include_session.
//
//	run_p1.json: {"run_id": "p1", "workflow_id": "chatflow", "status": "completed", "current_node": "n",
//	  "vars": {"context": {"messages": []}}, "created_at": "2026-01-02T00:00:00+00:00", "session_id": "s1", ...}
//	ledger_p1.jsonl:
//	  1: status "completed", effect {"type": " llm_call ", "payload": {}}, result {"usage": {"input_tokens": 3, "output_tokens": 4}},
//	     started_at "2026-01-02T00:00:01+00:00", ended_at "2026-01-02T00:00:02+00:00"
//	  2: status "completed", effect {"type": " tool_calls ", "payload": {"tool_calls": [{"name": "t"}]}},
//	     started_at "2026-01-02T00:00:04" (naive), ended_at "2026-01-02T00:00:05+00:00"
func paddedTurnExport(t *testing.T) map[string]any {
	t.Helper()
	run := `{"run_id": "p1", "workflow_id": "chatflow", "status": "completed", "current_node": "n", "vars": {"context": {"messages": []}}, "waiting": null, "output": null, "error": null, "created_at": "2026-01-02T00:00:00+00:00", "updated_at": "2026-01-02T00:00:00+00:00", "actor_id": null, "session_id": "s1", "parent_run_id": null}`
	led := `{"step_id": "a", "run_id": "p1", "node_id": "llm", "status": "completed", "effect": {"type": " llm_call ", "payload": {}, "result_key": null}, "result": {"usage": {"input_tokens": 3, "output_tokens": 4}}, "error": null, "started_at": "2026-01-02T00:00:01+00:00", "ended_at": "2026-01-02T00:00:02+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}
{"step_id": "b", "run_id": "p1", "node_id": "tools", "status": "completed", "effect": {"type": " tool_calls ", "payload": {"tool_calls": [{"name": "t"}]}, "result_key": null}, "result": null, "error": null, "started_at": "2026-01-02T00:00:04", "ended_at": "2026-01-02T00:00:05+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}
`
	return exportPythonRun(t, run, led)
}

// exportPythonRun writes run p1's file and ledger as Python's JSON stores
// write them, and exports p1 with its session from a JSON store on them.
func exportPythonRun(t *testing.T, run, ledger string) map[string]any {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run_p1.json"), []byte(run), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ledger_p1.jsonl"), []byte(ledger), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, "p1", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
