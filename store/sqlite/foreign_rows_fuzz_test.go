package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/testlog"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

const fzRunSeed = `{"run_id": "RID", "workflow_id": "wf", "status": "waiting", "current_node": "n", "vars": {"a": [1, 2.5, "é"]}, "waiting": {"reason": "user", "wait_key": "k", "until": null, "resume_to_node": "n", "result_key": "r", "prompt": "?", "choices": ["yes"], "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`

// FuzzSqliteForeignRows: another writer (Python, a tool, a torn write)
// leaves a run_json and a ledger record_json holding arbitrary text in a
// shared store. For a fresh pair of runs per input, storetest.ForeignRows
// checks that:
//   - RunGet of the damaged run succeeds exactly when the text decodes to
//     a run (and gives that run), else fails with store.ErrNotFound and an
//     error naming the run; RunListChildren and RunList by parent list it
//     exactly then, and never fail;
//   - the good run and its hash-chained records (written before the damage)
//     are still read unchanged and still verify;
//   - LedgerList of the damaged ledger lists every valid row, the damaged
//     one exactly when it decodes (as RecordFromRow reads it), logs a
//     warning naming the run and seq when it skips it, and pages past it;
//   - LedgerFindCompleted still finds the valid completed records, and the
//     chain still appends (to the last readable record) after the damage.
func FuzzSqliteForeignRows(f *testing.F) {
	f.Add(strings.ReplaceAll(fzRunSeed, `"RID"`, `"x"`), storetest.CompletedRecordLine("x", "s3", "k3"))
	f.Add(`{"run_id": "x", "status": "running", "vars": null}`, `{"run_id": "x", "status": "completed", "idempotency_key": "k2"}`)
	f.Add(`not json`, `{"run_id": "x", "step_id": "to`)
	f.Add(`null`, `[1, 2]`)
	f.Add(`{"run_id": "x", "workflow_id": 5}`, `{"status": "completed", "attempt": "two"}`)
	f.Add(`{"run_id": "x", "status": "waiting", "waiting": {"reason": "until", "until": "next tuesday"}}`, `{"started_at": "2026-13-01T00:00:00"}`)
	f.Add(strings.Replace(fzRunSeed, `"vars": {`, `"vars": {"\ud800": NaN, `, 1), "{\"run_id\": \"x\", \"result\": \"\xff\"}")
	f.Add(`{"run_id": "x"}`, `{"run_id": "x", "status": "completed", "idempotency_key": "k4"}`)

	logs := &testlog.Recorder{}
	path := filepath.Join(f.TempDir(), "runtime.sqlite3")
	var (
		once sync.Once
		st   *sqlite.Store
		n    atomic.Int64
	)
	setup := func(t *testing.T) {
		var err error
		st, err = sqlite.New(context.Background(), sqlite.Config{Path: path, Shared: true, Synchronous: "OFF", Logger: logs.Logger()})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
	}
	var d *sql.DB
	raw := func(t *testing.T) func(q string, args ...any) {
		d = rawDB(t, path)
		return func(q string, args ...any) {
			if _, err := d.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	var exec func(q string, args ...any)
	f.Cleanup(func() {
		if d != nil {
			_ = d.Close()
		}
		if st != nil {
			_ = st.Close()
		}
	})
	f.Fuzz(func(t *testing.T, runJSON, recordJSON string) {
		once.Do(func() { setup(t); exec = raw(t) })
		ctx := context.Background()
		i := n.Add(1)
		fr := &storetest.ForeignRows{Store: st, Logs: logs,
			Good: fmt.Sprintf("good-%d", i), Bad: fmt.Sprintf("bad-%d", i), Parent: fmt.Sprintf("p-%d", i)}
		fr.Prepare(ctx, t)

		// The foreign writer.
		exec(`UPDATE runs SET run_json = ? WHERE run_id = ?`, runJSON, fr.Bad)
		exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, 3, ?)`, fr.Good, recordJSON)
		exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, 4, ?)`, fr.Good, storetest.CompletedRecordLine(fr.Good, "s4", "k4"))
		logs.Take()

		fr.CheckDamagedRun(ctx, t, runJSON)
		fr.CheckLists(ctx, t, runJSON)
		// SQLite gives the first completed record of a key, the foreign
		// row when it is one of k4.
		fr.CheckGoodRunAndLedger(ctx, t, recordJSON, true)
	})
}

// TestListSkipWarningNamesRun: a list (RunList, RunListChildren)
// skipping a row whose run_json does not decode logged "skipping
// unreadable run_json" with the decode error alone (e.g. "invalid JSON at
// offset 0"), so the warning did not say which run was skipped; RunGet's
// warning and the ledger's ("skipping undecodable ledger record") name it.
func TestListSkipWarningNamesRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	logs := &testlog.Recorder{}
	st, err := sqlite.New(ctx, sqlite.Config{Path: path, Shared: true, Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &durable.RunState{RunID: "unreadable-1", WorkflowID: "wf", Status: durable.RunRunning, ParentRunID: "p"}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET run_json = 'not json' WHERE run_id = 'unreadable-1'`); err != nil {
		t.Fatal(err)
	}
	storetest.CheckListsSkipUnreadable(ctx, t, st, logs, "unreadable-1", "p")
}
