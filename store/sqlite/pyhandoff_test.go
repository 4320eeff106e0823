package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// Data handed between the Python runtime and ours on one database, from a
// review that drove both; each test failed before its fix.

// Two WAIT_UNTIL runs exactly as Python's SqliteRunStore.save wrote them
// (runs row + wait_index row) into a database our store had created and
// migrated. The first run's deadline is a text the host passed and Python
// stores as is (str(until)); Python compares it as text with its clock,
// so it waits, and both runs are released by Python's scheduler once the
// clock passes them.
const (
	handoffBadUntilRunID  = "1053872d-fcd1-438a-9710-4fa8df178888"
	handoffBadUntil       = "2026-12-01T06:56:01 UTC"
	handoffBadUntilRun    = `{"run_id": "928f9599-9198-4d83-9672-acd4e3c490d7", "workflow_id": "wf_until", "status": "waiting", "current_node": "wait", "vars": {"until": "2026-12-01T06:56:02.031867+00:00", "_limits": {"max_iterations": 25, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null, "max_input_tokens": null, "estimated_tokens_used": 0, "max_history_messages": -1, "warn_iterations_pct": 80, "warn_tokens_pct": 80}, "_runtime": {"node_traces": {"wait": {"node_id": "wait", "steps": [{"ts": "2026-12-01T06:55:59.419120+00:00", "node_id": "wait", "status": "waiting", "idempotency_key": "ef7fd3fc2e32e0ae58ccf158f175fe7e", "reused_prior_result": false, "effect": {"type": "wait_until", "payload": {"until": "2026-12-01T06:56:02.031867+00:00"}, "result_key": "woke"}, "duration_ms": 0.4381730013847118, "wait": {"reason": "until", "wait_key": null, "until": "2026-12-01T06:56:02.031867+00:00", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}}], "updated_at": "2026-12-01T06:55:59.419144+00:00"}}}, "_temp": {"prev_node_id": "wait", "prev_next_node": "done"}}, "waiting": {"reason": "until", "wait_key": null, "until": "2026-12-01T06:56:02.031867+00:00", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-12-01T06:55:59.416983+00:00", "updated_at": "2026-12-01T06:55:59.419178+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
	handoffGoodUntilRunID = "928f9599-9198-4d83-9672-acd4e3c490d7"
	handoffGoodUntil      = "2026-12-01T06:56:02.031867+00:00"
	handoffGoodUntilRun   = `{"run_id": "1053872d-fcd1-438a-9710-4fa8df178888", "workflow_id": "wf_until", "status": "waiting", "current_node": "wait", "vars": {"until": "2026-12-01T06:56:01 UTC", "_limits": {"max_iterations": 25, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null, "max_input_tokens": null, "estimated_tokens_used": 0, "max_history_messages": -1, "warn_iterations_pct": 80, "warn_tokens_pct": 80}, "_runtime": {"node_traces": {"wait": {"node_id": "wait", "steps": [{"ts": "2026-12-01T06:55:59.224765+00:00", "node_id": "wait", "status": "waiting", "idempotency_key": "585a30299b961b148851e7fd56ff062c", "reused_prior_result": false, "effect": {"type": "wait_until", "payload": {"until": "2026-12-01T06:56:01 UTC"}, "result_key": "woke"}, "duration_ms": 0.4682380003941944, "wait": {"reason": "until", "wait_key": null, "until": "2026-12-01T06:56:01 UTC", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}}], "updated_at": "2026-12-01T06:55:59.224790+00:00"}}}, "_temp": {"prev_node_id": "wait", "prev_next_node": "done"}}, "waiting": {"reason": "until", "wait_key": null, "until": "2026-12-01T06:56:01 UTC", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-12-01T06:55:59.222753+00:00", "updated_at": "2026-12-01T06:55:59.224827+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
)

// pythonWaitIndexUpsert is SqliteRunStore.save's wait_index statement, verbatim.
const pythonWaitIndexUpsert = `
                    INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
                    VALUES (?, ?, ?, ?)
                    ON CONFLICT(run_id) DO UPDATE SET
                      next_due_iso=excluded.next_due_iso,
                      updated_at_iso=excluded.updated_at_iso,
                      status=excluded.status;
                    `

// After migration 003 nothing rewrites the wait_index rows Python writes:
// RunListDue reads next_due_iso as Python wrote it, selects the row whose
// text sorts before now ("...:01 UTC" < "...:03+00:00") and then failed the
// whole listing on durable.ParseTime ("invalid ISO timestamp"), so no due
// run at all (here the valid one next to it) was released while the row
// existed. Such a row is now passed over (never due).
func TestHandoffPythonUnparsableUntilPassedOver(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path) // Go created and migrated the database; Python shares it
	db := rawDB(t, path)
	defer db.Close()
	for _, r := range []struct{ id, until, created, updated, json string }{
		{handoffBadUntilRunID, handoffBadUntil, "2026-12-01T06:55:59.222753+00:00", "2026-12-01T06:55:59.224827+00:00", handoffBadUntilRun},
		{handoffGoodUntilRunID, handoffGoodUntil, "2026-12-01T06:55:59.416983+00:00", "2026-12-01T06:55:59.419178+00:00", handoffGoodUntilRun},
	} {
		if _, err := db.Exec(pythonUpsertRun, r.id, "wf_until", "waiting", "until", r.until, nil, nil, nil,
			r.created, r.updated, r.json); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(pythonWaitIndexUpsert, r.id, r.until, r.updated, "waiting_until"); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 1, 6, 56, 3, 0, time.UTC)
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now})
	if err != nil {
		t.Fatalf("RunListDue at %v: %v; one Python run whose until does not parse must not hide the other due runs", now, err)
	}
	var ids []string
	for _, d := range due {
		ids = append(ids, d.RunID)
	}
	found := false
	for _, id := range ids {
		found = found || id == handoffGoodUntilRunID
	}
	if !found {
		t.Fatalf("RunListDue = %v; want %s (until %s) listed", ids, handoffGoodUntilRunID, handoffGoodUntil)
	}
}

// handoffPausedUntilRun: a WAIT_UNTIL run Python started and then paused
// (Runtime.pause_run) in a database our store had migrated. Python's
// save keeps a paused run's wait_index row.
const (
	handoffPausedUntilRunID   = "109fcdca-95f5-4a73-85cf-797ff7cb1b14"
	handoffPausedUntil        = "2026-12-01T07:00:00+00:00"
	handoffPausedUntilCreated = "2026-12-01T06:58:03.010915+00:00"
	handoffPausedUntilUpdated = "2026-12-01T06:58:03.235636+00:00"
	handoffPausedUntilRun     = `{"run_id": "109fcdca-95f5-4a73-85cf-797ff7cb1b14", "workflow_id": "wf_until", "status": "waiting", "current_node": "wait", "vars": {"until": "2026-12-01T07:00:00+00:00", "_limits": {"max_iterations": 25, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null, "max_input_tokens": null, "estimated_tokens_used": 0, "max_history_messages": -1, "warn_iterations_pct": 80, "warn_tokens_pct": 80}, "_runtime": {"node_traces": {"wait": {"node_id": "wait", "steps": [{"ts": "2026-12-01T06:58:03.013174+00:00", "node_id": "wait", "status": "waiting", "idempotency_key": "adf4e7068557cddb1829fd56aa9bb2dc", "reused_prior_result": false, "effect": {"type": "wait_until", "payload": {"until": "2026-12-01T07:00:00+00:00"}, "result_key": "woke"}, "duration_ms": 0.5763779990957119, "wait": {"reason": "until", "wait_key": null, "until": "2026-12-01T07:00:00+00:00", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}}], "updated_at": "2026-12-01T06:58:03.013202+00:00"}}, "control": {"paused": true, "paused_at": "2026-12-01T06:58:03.235611+00:00", "pause_reason": "x"}}, "_temp": {"prev_node_id": "wait", "prev_next_node": "done"}}, "waiting": {"reason": "until", "wait_key": null, "until": "2026-12-01T07:00:00+00:00", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-12-01T06:58:03.010915+00:00", "updated_at": "2026-12-01T06:58:03.235636+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
)

// Paused runs are kept out of our due index (store.Deadline; migration 009
// deletes such rows once), but the row Python's save writes for a run it
// pauses after the migration stayed, and RunListDue listed the paused run:
// BatchSize such runs held back every other due run. Migration 014's
// triggers take such rows out as Python writes them.
func TestHandoffPythonPausedUntilRunNotDue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(pythonUpsertRun, handoffPausedUntilRunID, "wf_until", "waiting", "until", handoffPausedUntil,
		nil, nil, nil, handoffPausedUntilCreated, handoffPausedUntilUpdated, handoffPausedUntilRun); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(pythonWaitIndexUpsert, handoffPausedUntilRunID, handoffPausedUntil, handoffPausedUntilUpdated, "waiting_until"); err != nil {
		t.Fatal(err)
	}
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		if d.RunID == handoffPausedUntilRunID {
			t.Fatalf("RunListDue lists the paused Python run %s (vars._runtime.control.paused = true)", d.RunID)
		}
	}
}
