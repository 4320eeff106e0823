package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Data handed between the Python runtime and ours on one database: rows
// Python wrote that our store must read, list and release as Python does.

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

// pythonUntilRuns are WAIT_UNTIL deadlines as Python's save stores them
// (str(until), as the node gave it) and their times in UTC; now is
// 07:10Z. Text order differs from time order for all but the canonical
// ones.
var pythonUntilRuns = []struct{ id, until, utc string }{
	{"py-offset-east", "2026-12-01T09:00:00+02:00", "07:00"},
	{"py-offset-west", "2026-12-01T04:30:00-02:00", "06:30"},
	{"py-canonical", "2026-12-01T06:45:00+00:00", "06:45"},
	{"py-zulu", "2026-12-01T06:50:00Z", "06:50"},
	{"py-canonical-later", "2026-12-01T07:30:00+00:00", "07:30"},
	{"py-offset-west-later", "2026-12-01T03:00:00-05:00", "08:00"},
}

// writePythonUntilRuns writes pythonUntilRuns into the database at path
// with Python's statements.
func writePythonUntilRuns(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	const updated = "2026-12-01T06:00:00.000001+00:00"
	for _, r := range pythonUntilRuns {
		runJSON := `{"run_id": "` + r.id + `", "workflow_id": "wf_until", "status": "waiting", "current_node": "wait", "vars": {}, ` +
			`"waiting": {"reason": "until", "wait_key": null, "until": "` + r.until + `", "resume_to_node": "done", "result_key": "woke", ` +
			`"prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, ` +
			`"created_at": "` + updated + `", "updated_at": "` + updated + `", "actor_id": null, "session_id": null, "parent_run_id": null}`
		if _, err := db.Exec(pythonUpsertRun, r.id, "wf_until", "waiting", "until", r.until, nil, nil, nil, updated, updated, runJSON); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(pythonWaitIndexUpsert, r.id, r.until, updated, "waiting_until"); err != nil {
			t.Fatal(err)
		}
	}
}

// Python compares wait_index.next_due_iso as text, and so did our due
// queries, which are right for the one form our writers store: a deadline
// Python stored at +02:00 was released two hours late, one at -05:00 five
// hours early (and took a place in the poll's batch each time). Rows in
// another form are now compared by their times, in a store sharing the
// database with Python and in one opening it after Python wrote.
func TestHandoffPythonDeadlinesInOtherFormsComparedAsTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 7, 10, 0, 0, time.UTC)
	want := []string{"py-offset-west 06:30", "py-canonical 06:45", "py-zulu 06:50", "py-offset-east 07:00"}
	check := func(t *testing.T, s *sqlite.Store) {
		ctx := t.Context()
		for _, limit := range []int{0, 2} {
			due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range due {
				got = append(got, d.RunID+" "+d.Until.UTC().Format("15:04"))
			}
			w := want
			if limit > 0 {
				w = want[:limit]
			}
			if !slices.Equal(got, w) {
				t.Errorf("RunListDue(now 07:10Z, limit %d) = %q, want %q", limit, got, w)
			}
		}
		next, err := s.RunNextDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := next.UTC().Format("15:04"); got != "06:30" {
			t.Errorf("RunNextDue = %v, want 06:30Z (py-offset-west)", next)
		}
	}
	t.Run("shared", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		s := openShared(t, path)
		writePythonUntilRuns(t, path)
		check(t, s)
	})
	t.Run("reopened", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		s, err := sqlite.New(t.Context(), sqlite.Config{Path: path, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		writePythonUntilRuns(t, path)
		check(t, open(t, path)) // with its redo log: listDueOverQueue
	})
}

// The partial index of migration 015 lists exactly the rows our writers
// would not have written, and the query for them reads it.
func TestForeignDeadlineIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	openShared(t, path)
	db := rawDB(t, path)
	defer db.Close()
	canonical := []time.Time{
		time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 1, 7, 0, 0, 1000, time.UTC),
		time.Date(2026, 12, 1, 7, 0, 0, 999, time.UTC), // below a microsecond: no fraction
		time.Date(999, 1, 2, 3, 4, 5, 600000000, time.FixedZone("x", 3600)),
	}
	for i, tm := range canonical {
		if _, err := db.Exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, '', 'waiting_until')`,
			fmt.Sprint("c", i), durable.FormatTime(tm)); err != nil {
			t.Fatal(err)
		}
	}
	foreign := []string{"2026-12-01T07:00:00Z", "2026-12-01T07:00:00+01:00", "2026-12-01 07:00:00+00:00",
		"2026-12-01T07:00:00.5+00:00", "2026-12-01T07:00+00:00", "2026-12-01T07:00:00"}
	for i, text := range foreign {
		if _, err := db.Exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, '', 'waiting_until')`,
			fmt.Sprint("f", i), text); err != nil {
			t.Fatal(err)
		}
	}
	var listed []string
	rows, err := db.Query(`SELECT next_due_iso FROM (` + sqlite.ForeignDueQuery + `) ORDER BY run_id`)
	if err != nil {
		t.Fatalf("the store's foreign-form query cannot use migration 015's index: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		listed = append(listed, s)
	}
	if !slices.Equal(listed, foreign) {
		t.Errorf("foreign-form rows = %q, want %q", listed, foreign)
	}
	// The query reads the partial index, not every waiting run: without
	// INDEXED BY the planner scanned idx_wait_index_next_due.
	var plan []string
	prow, err := db.Query(`EXPLAIN QUERY PLAN ` + sqlite.ForeignDueQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer prow.Close()
	for prow.Next() {
		var id, parent, notused int
		var detail string
		if err := prow.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "wait_index_foreign_form") {
		t.Errorf("the foreign-form query plan does not read migration 015's index: %s", got)
	}
}
