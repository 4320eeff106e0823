package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Edge cases of ledger_heads, shared stores and listings: each test fails
// on a plausible bug of this store that no other test catches.

// A shared store keeps ledger_heads current as it appends ("a Python
// process open on the database allocates its seqs from it", stmts.go):
// a Python append that follows ours takes the next seq, not one the
// ledger already holds.
func TestSharedAppendsKeepLedgerHeads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	ctx := t.Context()
	now := durable.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "a",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: step, NodeID: "a", Status: durable.StepCompleted, Attempt: 1, StartedAt: now}
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{rec("s1"), rec("s2")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec("s3")}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	head := ledgerHead(t, db, "r1")
	if head != 3 {
		t.Fatalf("ledger_heads.last_seq after 3 records appended by a shared store = %d, want 3", head)
	}
	// What Python's SqliteLedgerStore.append does next.
	if _, err := db.Exec(`INSERT INTO ledger_heads (run_id, last_seq) VALUES (?, 0) ON CONFLICT(run_id) DO NOTHING`, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE ledger_heads SET last_seq = last_seq + 1 WHERE run_id = ?`, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT last_seq FROM ledger_heads WHERE run_id = ?`, "r1").Scan(&head); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, ?, ?)`, "r1", head,
		`{"run_id": "r1", "step_id": "py", "node_id": "a", "status": "completed"}`); err != nil {
		t.Fatalf("Python's append at seq %d: %v", head, err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[3].StepID != "py" || recs[3].Seq != 4 {
		t.Fatalf("ledger after a Python append = %d records (last %+v), want 4 ending with Python's at seq 4", len(recs), recs[len(recs)-1])
	}
}

// RunListDue lists the deadlines "at or before p.Now" (store.RunStore),
// in the form Python wrote them too (a WAIT_UNTIL's until as the node gave
// it, migration 015): a foreign-form deadline equal to now is due.
func TestForeignDeadlineDueAtNow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, '', 'waiting_until')`,
		"py-run", "2026-12-01T07:00:00Z"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now  time.Time
		want int
	}{{deadline.Add(-time.Microsecond), 0}, {deadline, 1}, {deadline.Add(time.Second), 1}} {
		due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != c.want || (c.want == 1 && (due[0].RunID != "py-run" || !due[0].Until.Equal(deadline))) {
			t.Errorf("RunListDue(now %s) with a foreign-form deadline at %s = %v; want %d run(s)", c.now.Format(time.RFC3339Nano), deadline.Format(time.RFC3339), due, c.want)
		}
	}
}

// A shared store's append of several records raises ledger_heads to the
// last of them, not the first: with the head left at the first, Python's
// next append would take a seq the ledger already holds and fail.
func TestSharedAppendOfSeveralRecordsRaisesTheHeadToTheLast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	ctx := t.Context()
	now := durable.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: step, NodeID: "a", Status: durable.StepCompleted, Attempt: 1, StartedAt: now}
	}
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec("s1"), rec("s2"), rec("s3")}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	if head := ledgerHead(t, db, "r1"); head != 3 {
		t.Fatalf("ledger_heads.last_seq after one append of 3 records by a shared store = %d, want 3", head)
	}
}

// LedgerFindCompleted matches on the decoded record, not on completed_key
// alone: a row whose completed_key names K but whose record is no longer
// completed, or carries another key (a hand edit, a foreign writer), is
// no completed record for K, as the cached path would answer. Without the
// status check in scanCompleted, or the key check in findIndexed (the
// key index's path), it would be returned, and the runtime would take
// K's effect for done when it never completed or was another effect.
func TestLedgerFindCompletedChecksTheRecordNotJustItsKeyColumn(t *testing.T) {
	t.Parallel()
	for _, edit := range []struct{ name, from, to string }{
		{"status", `"status": "completed"`, `"status": "failed"`},
		{"key", `"idempotency_key": "K"`, `"idempotency_key": "L"`},
	} {
		t.Run(edit.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openShared(t, path)
			ctx := t.Context()
			now := durable.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
			if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "a",
				Status: durable.StepCompleted, Attempt: 1, StartedAt: now, IdempotencyKey: "K"}}); err != nil {
				t.Fatal(err)
			}
			db := rawDB(t, path)
			defer db.Close()
			res, err := db.Exec(`UPDATE ledger SET record_json = replace(record_json, ?, ?)
				WHERE run_id = 'r1' AND seq = 1 AND completed_key = 'K'`, edit.from, edit.to)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("setup: %d rows edited, want 1", n)
			}
			if got, err := s.LedgerFindCompleted(ctx, "r1", "K"); err != nil || got != nil {
				t.Fatalf("LedgerFindCompleted(K) after its record's %s changed (%s) = %+v, %v; want nil",
					edit.name, edit.to, got, err)
			}
		})
	}
}
