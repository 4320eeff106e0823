package sqlite_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// pythonDDL is the Python runtime's schema, exactly as spec §4.4 gives it.
const pythonDDL = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  status TEXT NOT NULL,
  wait_reason TEXT,
  wait_until TEXT,
  parent_run_id TEXT,
  actor_id TEXT,
  session_id TEXT,
  created_at TEXT,
  updated_at TEXT,
  run_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_runs_status_updated ON runs(status, updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_runs_workflow_updated ON runs(workflow_id, updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_runs_parent ON runs(parent_run_id);
CREATE INDEX IF NOT EXISTS idx_runs_waiting ON runs(status, wait_reason, wait_until);
CREATE TABLE IF NOT EXISTS wait_index (
  run_id TEXT PRIMARY KEY,
  next_due_iso TEXT NOT NULL,
  updated_at_iso TEXT NOT NULL,
  status TEXT
);
CREATE INDEX IF NOT EXISTS idx_wait_index_next_due ON wait_index(next_due_iso);
CREATE TABLE IF NOT EXISTS ledger (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  record_json TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS idx_ledger_run_seq ON ledger(run_id, seq);
CREATE TABLE IF NOT EXISTS ledger_heads (
  run_id TEXT PRIMARY KEY,
  last_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS commands (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  command_id TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,
  type TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  ts TEXT NOT NULL,
  client_id TEXT
);
CREATE INDEX IF NOT EXISTS idx_commands_run_id ON commands(run_id);
CREATE TABLE IF NOT EXISTS command_cursors (
  consumer_id TEXT PRIMARY KEY,
  cursor INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
`

const (
	pyUserRun  = "d94e9e30-3689-4349-943c-8d437f62dcce"
	pyUntilRun = "5b0e2a51-2f0c-4f43-9d4e-6f1a8a0e2c11"
	pyEventRun = "0c7d7b8e-91a4-4b0e-8a55-0f2f3e1d9a42"
)

// Python-written rows: json.dumps default separators; the until run's
// deadline in Python isoformat, the event run's timeout written with "Z"
// (not normalised: migration 003 must rewrite it in the index).
var pythonRuns = []struct{ id, status, reason, until, json string }{
	{pyUserRun, "waiting", "user", "",
		`{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "workflow_id": "demo_wf", "status": "waiting", "current_node": "ask", "vars": {"context": {"task": "demo"}, "_limits": {"max_iterations": 50, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null}, "_run_lifecycle": {"source": "gateway", "retention": {"ttl_s": 3600}}}, "waiting": {"reason": "user", "wait_key": "user:d94e9e30-3689-4349-943c-8d437f62dcce:ask", "until": null, "resume_to_node": "done", "result_key": "answer", "prompt": "Continue?", "choices": ["yes", "no"], "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-11-29T22:46:49.388378+00:00", "updated_at": "2026-11-29T22:46:49.646746+00:00", "actor_id": "actor_1", "session_id": "sess_1", "parent_run_id": null}`},
	{pyUntilRun, "waiting", "until", "2026-11-29T23:00:00+00:00",
		`{"run_id": "5b0e2a51-2f0c-4f43-9d4e-6f1a8a0e2c11", "workflow_id": "demo_wf", "status": "waiting", "current_node": "wait", "vars": {}, "waiting": {"reason": "until", "wait_key": null, "until": "2026-11-29T23:00:00+00:00", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-11-29T22:40:00.000001+00:00", "updated_at": "2026-11-29T22:40:00.5+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`},
	{pyEventRun, "waiting", "event", "",
		`{"run_id": "0c7d7b8e-91a4-4b0e-8a55-0f2f3e1d9a42", "workflow_id": "demo_wf", "status": "waiting", "current_node": "wait", "vars": {}, "waiting": {"reason": "event", "wait_key": "evt:done", "until": "2026-11-29T22:50:00.250000Z", "resume_to_node": "done", "result_key": "evt", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-11-29T22:41:00+00:00", "updated_at": "2026-11-29T22:41:00+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`},
}

var pythonRecords = []string{
	`{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "step_id": "101724bc-5a39-4d67-86f7-6e44c8efd6d6", "node_id": "llm", "status": "started", "effect": {"type": "llm_call", "payload": {"prompt": "hello"}, "result_key": "_temp.llm"}, "result": null, "error": null, "started_at": "2026-11-29T22:46:49.389000+00:00", "ended_at": null, "actor_id": "actor_1", "session_id": "sess_1", "attempt": 1, "idempotency_key": "0979d939ffcc1a46fdb37e8b3491a8b5", "prev_hash": null, "record_hash": null, "signature": null}`,
	`{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "step_id": "101724bc-5a39-4d67-86f7-6e44c8efd6d6", "node_id": "llm", "status": "completed", "effect": {"type": "llm_call", "payload": {"prompt": "hello"}, "result_key": "_temp.llm"}, "result": {"content": "Hi!"}, "error": null, "started_at": "2026-11-29T22:46:49.389000+00:00", "ended_at": "2026-11-29T22:46:49.512000+00:00", "actor_id": "actor_1", "session_id": "sess_1", "attempt": 1, "idempotency_key": "0979d939ffcc1a46fdb37e8b3491a8b5", "prev_hash": null, "record_hash": null, "signature": null}`,
}

// writePythonDB creates a database the way the Python runtime leaves it:
// only its DDL, rows written by it, and no ledger_heads row (an upgraded
// database), so that opening must back-fill the head.
func writePythonDB(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("PRAGMA journal_mode=WAL")
	exec(pythonDDL)
	for _, r := range pythonRuns {
		var reason, until any
		if r.reason != "" {
			reason = r.reason
		}
		if r.until != "" {
			until = r.until
		}
		m, err := pyjson.DecodeObject([]byte(r.json))
		if err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id,
			session_id, created_at, updated_at, run_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.id, m["workflow_id"], r.status, reason, until, m["parent_run_id"], m["actor_id"], m["session_id"],
			m["created_at"], m["updated_at"], r.json)
		if r.until != "" {
			exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, ?, 'waiting_until')`,
				r.id, r.until, m["updated_at"])
		}
	}
	for i, rec := range pythonRecords {
		exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, ?, ?)`, pyUserRun, i+1, rec)
	}
	exec(`INSERT INTO commands (command_id, run_id, type, payload_json, ts, client_id) VALUES (?, ?, ?, ?, ?, ?)`,
		"c0ffee", pyUserRun, "pause", `{"reason": "lunch"}`, "2026-11-29T22:47:00+00:00", nil)
	exec(`INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES ('gateway_runner', 1, '2026-11-29T22:47:01+00:00')`)
}

func TestPythonDatabase(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	writePythonDB(t, path)
	s := openShared(t, path)

	// The Python run loads, at version 0.
	r, err := s.RunGet(ctx, pyUserRun)
	if err != nil {
		t.Fatalf("RunGet: %v", err)
	}
	if r.Version != 0 || r.Status != durable.RunWaiting || r.Waiting.WaitKey != "user:"+pyUserRun+":ask" {
		t.Fatalf("loaded run: version %d, status %s, waiting %+v", r.Version, r.Status, r.Waiting)
	}
	// Its ledger is there, its head was back-filled, its completed record
	// is found by idempotency key (completed_key back-filled by 002).
	if n, err := s.LedgerCount(ctx, pyUserRun); err != nil || n != 2 {
		t.Fatalf("LedgerCount = %d, %v; want 2", n, err)
	}
	found, err := s.LedgerFindCompleted(ctx, pyUserRun, "0979d939ffcc1a46fdb37e8b3491a8b5")
	if err != nil || found == nil || found.Seq != 2 || found.Status != durable.StepCompleted {
		t.Fatalf("LedgerFindCompleted = %+v, %v; want the completed record, seq 2", found, err)
	}
	// wait_key back-filled: event delivery finds the runs.
	byKey, err := s.RunList(ctx, &store.RunListParams{WaitKeys: []string{"evt:done", "user:" + pyUserRun + ":ask"}})
	if err != nil || len(byKey) != 2 {
		t.Fatalf("RunList by wait key = %d runs, %v; want 2", len(byKey), err)
	}
	// The due index holds the until run and (after migration 003) the
	// event run's timeout, normalised.
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[0].RunID != pyEventRun || due[1].RunID != pyUntilRun ||
		!due[0].Until.Equal(time.Date(2026, 11, 29, 22, 50, 0, 250000000, time.UTC)) {
		t.Fatalf("RunListDue = %+v; want the event run (22:50:00.25) then the until run", due)
	}
	if next, err := s.RunNextDue(ctx); err != nil || !next.Equal(due[0].Until.Time) {
		t.Fatalf("RunNextDue = %v, %v; want %v", next, err, due[0].Until)
	}
	// The index row reads run_lifecycle from run_json.
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{WorkflowID: "demo_wf", Limit: 1})
	if err != nil || len(rows) != 1 || rows[0].RunID != pyUserRun {
		t.Fatalf("RunIndex = %+v, %v", rows, err)
	}
	if lc := rows[0].RunLifecycle; lc["source"] != "gateway" || lc["retention"].(map[string]any)["ttl_s"] != int64(3600) {
		t.Fatalf("run_lifecycle = %#v", lc)
	}
	// Commands and cursors written by Python are read.
	cmds, next, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil || len(cmds) != 1 || next != 1 || cmds[0].CommandID != "c0ffee" || cmds[0].Payload["reason"] != "lunch" {
		t.Fatalf("CommandListAfter = %+v, %d, %v", cmds, next, err)
	}
	if cur, err := s.CursorLoad(ctx, store.DefaultConsumer); err != nil || cur != 1 {
		t.Fatalf("CursorLoad = %d, %v; want 1", cur, err)
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: pyUserRun, Type: "resume",
		Payload: map[string]any{"text": "yes"}}); err != nil || !res.Accepted || res.Seq != 2 {
		t.Fatalf("CommandAppend = %+v, %v; want accepted, seq 2", res, err)
	}

	// A commit bumps the version and continues the ledger's seqs.
	r.Status, r.Waiting, r.CurrentNode = durable.RunCompleted, nil, "done"
	r.Output = map[string]any{"answer": map[string]any{"text": "yes"}}
	r.UpdatedAt = durable.NewTime(time.Date(2026, 11, 29, 22, 47, 0, 0, time.UTC))
	rec := &durable.StepRecord{RunID: pyUserRun, StepID: "s3", NodeID: "done", Status: durable.StepCompleted,
		Result: map[string]any{"completed": true}, StartedAt: r.UpdatedAt, Attempt: 1}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatalf("RunCommit: %v", err)
	}
	if r.Version != 1 || rec.Seq != 3 {
		t.Fatalf("after commit: version %d, seq %d; want 1, 3", r.Version, rec.Seq)
	}
	stale := r.Clone()
	stale.Version = 0
	if err := s.RunCommit(ctx, &store.CommitParams{Run: stale}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale commit: %v; want ErrConflict", err)
	}

	// The Python columns are filled as Python fills them.
	checkPythonColumns(t, path, r, rec)

	// Reopening keeps everything and applies no migration twice.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openShared(t, path)
	got, err := s2.RunGet(ctx, pyUserRun)
	if err != nil || got.Version != 1 || got.Status != durable.RunCompleted {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	recs, err := s2.LedgerList(ctx, &store.LedgerListParams{RunID: pyUserRun})
	if err != nil || len(recs) != 3 || recs[2].StepID != "s3" {
		t.Fatalf("ledger after reopen: %d records, %v", len(recs), err)
	}
	if err := s2.LedgerAppend(ctx, pyUserRun, []*durable.StepRecord{{RunID: pyUserRun, StepID: "s4", Status: durable.StepCompleted}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s2.LedgerCount(ctx, pyUserRun); n != 4 {
		t.Fatalf("LedgerCount after reopen and append = %d; want 4", n)
	}
	checkMigrations(t, path)
}

// checkPythonColumns reads the row columns back with plain SQL.
func checkPythonColumns(t *testing.T, path string, r *durable.RunState, rec *durable.StepRecord) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	var status, runJSON, created, types string
	if err := db.QueryRow(`SELECT (SELECT group_concat(DISTINCT typeof(run_json)) FROM runs) || ',' ||
		(SELECT group_concat(DISTINCT typeof(record_json)) FROM ledger) || ',' ||
		(SELECT group_concat(DISTINCT typeof(payload_json)) FROM commands)`).Scan(&types); err != nil || types != "text,text,text" {
		t.Errorf("storage classes of run_json, record_json, payload_json: %q, %v; want text", types, err)
	}
	var reason, until sql.NullString
	var version int64
	if err := db.QueryRow(`SELECT status, wait_reason, wait_until, created_at, run_json, version FROM runs WHERE run_id = ?`,
		r.RunID).Scan(&status, &reason, &until, &created, &runJSON, &version); err != nil {
		t.Fatal(err)
	}
	want, _ := durable.MarshalRun(r, pyjson.Line)
	if status != "completed" || reason.Valid || until.Valid || version != 1 || runJSON != string(want) {
		t.Errorf("runs row: status %s, wait_reason %v, wait_until %v, version %d, run_json %s", status, reason, until, version, runJSON)
	}
	if created != "2026-11-29T22:46:49.388378+00:00" {
		t.Errorf("created_at changed to %s", created)
	}
	var recJSON string
	if err := db.QueryRow(`SELECT record_json FROM ledger WHERE run_id = ? AND seq = 3`, r.RunID).Scan(&recJSON); err != nil {
		t.Fatal(err)
	}
	wantRec, _ := durable.MarshalRecord(rec, pyjson.Line)
	if recJSON != string(wantRec) || strings.Contains(recJSON, `"seq"`) {
		t.Errorf("record_json = %s; want %s", recJSON, wantRec)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM wait_index WHERE run_id = ?`, r.RunID).Scan(&n); err != nil || n != 0 {
		t.Errorf("wait_index rows of a completed run: %d, %v", n, err)
	}
	var next, st string
	if err := db.QueryRow(`SELECT next_due_iso, status FROM wait_index WHERE run_id = ?`, pyEventRun).Scan(&next, &st); err != nil ||
		next != "2026-11-29T22:50:00.250000+00:00" || st != "waiting_event" {
		t.Errorf("event run's wait_index row: %q %q %v", next, st, err)
	}
}

// checkMigrations checks schema_migrations lists every migration once.
func checkMigrations(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	var n, maxV int
	if err := db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &maxV); err != nil {
		t.Fatal(err)
	}
	want := len(mustMigrations(t))
	if n != want || maxV != want {
		t.Errorf("schema_migrations: %d rows, max version %d; want %d, %d", n, maxV, want, want)
	}
}

// mustMigrations lists the embedded migration files.
func mustMigrations(t *testing.T) []fs.DirEntry {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestMigration009_PausedRunLeavesTheDueIndex: a database in which a
// paused run sits in wait_index (as Python, which keeps paused runs
// there, or a version before migration 009 left it) loses that row when
// the migration runs, and the run is not listed as due.
func TestMigration009_PausedRunLeavesTheDueIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	st, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := &durable.RunState{RunID: "paused-1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "wait",
		Waiting:   &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "next"},
		Vars:      map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": true}}},
		CreatedAt: until, UpdatedAt: until}
	if err := st.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	for _, q := range []string{
		`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES ('paused-1', '` + until.String() + `', '` + until.String() + `', 'waiting_until')`,
		`DELETE FROM schema_migrations WHERE version = 9`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, path)
	due, err := st.RunListDue(t.Context(), &store.RunListDueParams{Now: until.Add(time.Hour)})
	if err != nil || len(due) != 0 {
		t.Fatalf("due after migration 009: %v, %v; want none (the run is paused)", due, err)
	}
}
