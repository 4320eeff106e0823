package sqlite_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Bytes written by the Python runtime (abstractruntime 0.4.28, SqliteRunStore /
// SqliteLedgerStore, json.dumps default allow_nan=True): a run that set
// vars.score = float("nan") and then waits on WAIT_EVENT (vars._runtime
// abridged), and a completed LLM_CALL record whose result holds a NaN.
const (
	pyNaNRunID  = "7c8f92b3-1bfa-404e-965a-2bdd138ff7db"
	pyNaNRun    = `{"run_id": "7c8f92b3-1bfa-404e-965a-2bdd138ff7db", "workflow_id": "wf_evt", "status": "waiting", "current_node": "score", "vars": {"_run_lifecycle": {"source": "gateway", "retention": {"mode": "ttl", "ttl_s": 3600.0}}, "_limits": {"max_iterations": 25, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null, "max_input_tokens": null, "estimated_tokens_used": 0, "max_history_messages": -1, "warn_iterations_pct": 80, "warn_tokens_pct": 80}, "score": NaN, "_temp": {"prev_node_id": "score", "prev_next_node": "done"}}, "waiting": {"reason": "event", "wait_key": "evt:session:s1:approved", "until": null, "resume_to_node": "done", "result_key": "evt", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-12-01T04:51:14.025673+00:00", "updated_at": "2026-12-01T04:51:14.026251+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
	pyNaNRecKey = "9a3f6c1e2b4d5e6f708192a3b4c5d6e7"
	pyNaNRec    = `{"run_id": "7c8f92b3-1bfa-404e-965a-2bdd138ff7db", "step_id": "0d1c7f4e-5a8b-4f3e-9c11-2b7e6a9d4f10", "node_id": "llm", "status": "completed", "effect": {"type": "llm_call", "payload": {"prompt": "rate it"}, "result_key": "_temp.llm"}, "result": {"content": "n/a", "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}, "metadata": {"confidence": NaN}}, "error": null, "started_at": "2026-12-01T04:51:13.900000+00:00", "ended_at": "2026-12-01T04:51:13.950000+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "9a3f6c1e2b4d5e6f708192a3b4c5d6e7", "prev_hash": null, "record_hash": null, "signature": null}`
)

// pythonUpsertRun is SqliteRunStore.save's statement, verbatim.
const pythonUpsertRun = `
                INSERT INTO runs (
                  run_id, workflow_id, status, wait_reason, wait_until,
                  parent_run_id, actor_id, session_id,
                  created_at, updated_at,
                  run_json
                )
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(run_id) DO UPDATE SET
                  workflow_id=excluded.workflow_id,
                  status=excluded.status,
                  wait_reason=excluded.wait_reason,
                  wait_until=excluded.wait_until,
                  parent_run_id=excluded.parent_run_id,
                  actor_id=excluded.actor_id,
                  session_id=excluded.session_id,
                  updated_at=excluded.updated_at,
                  run_json=excluded.run_json;
                `

// pythonWrite does what SqliteRunStore.save and SqliteLedgerStore.append
// do for the NaN run and its completed record.
func pythonWrite(t *testing.T, path string, ddl bool) {
	t.Helper()
	pythonWriteJSON(t, path, ddl, pyNaNRun, pyNaNRec)
}

func pythonWriteJSON(t *testing.T, path string, ddl bool, runJSON, recJSON string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	stmts := []struct {
		q    string
		args []any
	}{
		{pythonUpsertRun, []any{pyNaNRunID, "wf_evt", "waiting", "event", nil, nil, nil, nil,
			"2026-12-01T04:51:14.025673+00:00", "2026-12-01T04:51:14.026251+00:00", runJSON}},
		{`INSERT INTO ledger_heads (run_id, last_seq) VALUES (?, 0) ON CONFLICT(run_id) DO NOTHING;`, []any{pyNaNRunID}},
		{`UPDATE ledger_heads SET last_seq = last_seq + 1 WHERE run_id = ?;`, []any{pyNaNRunID}},
		{`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, ?, ?);`, []any{pyNaNRunID, 1, recJSON}},
	}
	if ddl {
		if _, err := db.Exec(pythonDDL); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s.q, s.args...); err != nil {
			t.Fatalf("%s: %v", s.q, err)
		}
	}
}

// Migration 002 back-fills wait_key and completed_key only WHERE
// json_valid(...), and SQLite's json_valid() is false for text holding
// NaN/Infinity, which Python's json.dumps writes: the Python run waiting on
// an event was never found by its wait key (migration 011 fills it).
func TestPythonNaNRunNotFoundByWaitKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	pythonWrite(t, path, true)
	s := openShared(t, path)
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent,
		WaitKeys: []string{"evt:session:s1:approved"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("RunList by wait key = %d runs; want the Python run waiting on evt:session:s1:approved", len(got))
	}
}

// Same cause: the completed record holding a NaN got no completed_key, so
// LedgerFindCompleted missed it and the runtime re-executed the effect.
func TestPythonNaNRecordNotFoundByIdempotencyKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	pythonWrite(t, path, true)
	s := openShared(t, path)
	rec, err := s.LedgerFindCompleted(t.Context(), pyNaNRunID, pyNaNRecKey)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		t.Fatal("LedgerFindCompleted = nil; want the completed record Python wrote")
	}
}

// RunIndex read run_lifecycle only WHEN json_valid(run_json): a run with a
// NaN anywhere in vars lost its lifecycle in index rows (Python's
// list_run_index, using json.loads, returns it).
func TestPythonNaNRunLosesLifecycleInIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	pythonWrite(t, path, true)
	s := openShared(t, path)
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{WorkflowID: "wf_evt"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("RunIndex = %v, %v", rows, err)
	}
	if rows[0].RunLifecycle["source"] != "gateway" {
		t.Fatalf("run_lifecycle = %#v; want {source: gateway, retention: …}", rows[0].RunLifecycle)
	}
}

// A database Go has migrated and Python writes again (downgrade, or a
// Python tool on a Shared store): Python's upsert and ledger insert left
// wait_key and completed_key NULL (there was a trigger for the list
// columns, none for these), so the run was invisible to event delivery and
// the completed record to replay. The rows here hold no NaN (plain JSON).
func TestPythonWritesAfterMigration(t *testing.T) {
	t.Parallel()
	path := migratedDB(t)
	pythonWriteJSON(t, path, false,
		strings.Replace(pyNaNRun, `"score": NaN`, `"score": 0.5`, 1),
		strings.Replace(pyNaNRec, `"confidence": NaN`, `"confidence": 0.5`, 1))
	s := openShared(t, path)
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent,
		WaitKeys: []string{"evt:session:s1:approved"}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.LedgerFindCompleted(t.Context(), pyNaNRunID, pyNaNRecKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || rec == nil {
		t.Fatalf("after Python wrote to a migrated database: RunList by wait key = %d runs (want 1), LedgerFindCompleted found = %v (want true)",
			len(got), rec != nil)
	}
}

// Python saves a run again and again; on a database this store migrated,
// the trigger that records Python's updates for the lists (008) failed
// the third save with a UNIQUE constraint error, its INSERT OR IGNORE
// overridden by the upsert's conflict policy.
func TestPythonSavesARunRepeatedly(t *testing.T) {
	t.Parallel()
	path := migratedDB(t)
	db := rawDB(t, path)
	defer db.Close()
	run := strings.Replace(pyNaNRun, `"score": NaN`, `"score": 0.5`, 1)
	for i := range 4 {
		if _, err := db.Exec(pythonUpsertRun, pyNaNRunID, "wf_evt", "waiting", "event", nil, nil, nil, nil,
			"2026-12-01T04:51:14.025673+00:00", "2026-12-01T04:51:14.026251+00:00", run); err != nil {
			t.Fatalf("Python's save %d of the run: %v", i+1, err)
		}
	}
}

// migratedDB returns the path of a new database this store created and
// migrated, then closed.
func migratedDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	first, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A shared store indexed the rows migration 013's triggers list (Python
// wrote them with NaN) only when it opened: while it stayed open, the
// event run Python saved was not found by its wait key, and its completed
// record not by its idempotency key, so the effect ran again. Lookups by
// key now index such rows first.
func TestPythonNaNRowsIndexedWhileSharedStoreIsOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	pythonWrite(t, path, false)
	rec, err := s.LedgerFindCompleted(t.Context(), pyNaNRunID, pyNaNRecKey)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		t.Error("LedgerFindCompleted = nil; want the completed record Python wrote while the store was open")
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent,
		WaitKeys: []string{"evt:session:s1:approved"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("RunList by wait key = %d runs; want the Python run waiting on evt:session:s1:approved", len(got))
	}
}
