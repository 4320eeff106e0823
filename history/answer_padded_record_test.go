package history_test

import "testing"

// Spec §6.2 (session turns: "`answer` from the run output or the
// ledger"); Python history_bundle.py _extract_flow_end_output_from_ledger
// reads a record's status as _enum_str(rec["status"]).strip() and its
// effect type as str(effect["type"] or "").strip() before comparing them
// with "completed" / "answer_user", so an ANSWER_USER record written with
// a padded status or effect type (another writer's ledger, as
// paddedTurnExport in turn_stats_padded_test.go reads) still gives the
// turn's answer, as the stats and the timeline of the same bundle strip
// both. Executed on these files, Python exports the turn with "answer":
// "from the ledger".
func TestSessionAnswerFromPaddedAnswerUserRecord(t *testing.T) {
	for _, tc := range []struct{ name, status, effectType string }{
		{"padded effect type", "completed", " answer_user "},
		{"padded status", " completed ", "answer_user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := `{"run_id": "p1", "workflow_id": "chatflow", "status": "completed", "current_node": "n", "vars": {"prompt": "hi"}, "waiting": null, "output": null, "error": null, "created_at": "2026-01-02T00:00:00+00:00", "updated_at": "2026-01-02T00:00:03+00:00", "actor_id": null, "session_id": "s1", "parent_run_id": null}`
			led := `{"step_id": "a", "run_id": "p1", "node_id": "say", "status": "` + tc.status + `", "effect": {"type": "` + tc.effectType + `", "payload": {"message": "from the ledger"}, "result_key": null}, "result": null, "error": null, "started_at": "2026-01-02T00:00:01+00:00", "ended_at": "2026-01-02T00:00:02+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}` + "\n"
			b := exportPythonRun(t, run, led)
			if items := list(t, ledgerOf(t, b, "p1")["items"], "items"); len(items) != 1 {
				t.Fatalf("ledger items %v, want the one record", items)
			}
			turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
			if len(turns) != 1 {
				t.Fatalf("turns = %v", turns)
			}
			if got := obj(t, turns[0], "turn")["answer"]; got != "from the ledger" {
				t.Errorf("turn answer = %v, want %q (Python strips the record's status and effect type)", got, "from the ledger")
			}
		})
	}
}
