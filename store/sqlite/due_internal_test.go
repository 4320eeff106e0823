package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestDue_StaleDeadlineDroppedAtOpen: the due queries read wait_index
// alone, trusting that it holds rows of waiting runs only; a row left for
// a run that no longer waits (a hand edit: every writer keeps the two in
// step) is deleted when the database is next opened, and never listed
// after that.
func TestDue_StaleDeadlineDroppedAtOpen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "due.sqlite3")
	s, err := New(ctx, Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	past := durable.NewTime(time.Now().Add(-time.Hour))
	waiting := &durable.RunState{RunID: "waiting", WorkflowID: "wf", Status: durable.RunWaiting,
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: past, ResumeToNode: "next"}}
	done := &durable.RunState{RunID: "done", WorkflowID: "wf", Status: durable.RunCompleted}
	for _, r := range []*durable.RunState{waiting, done} {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wconn.ExecContext(ctx, `INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
		VALUES ('done', ?, ?, 'waiting_until')`, past.String(), past.String()); err != nil {
		t.Fatal(err)
	}
	due := func(s *Store) []string {
		t.Helper()
		got, err := s.RunListDue(ctx, &store.RunListDueParams{Now: time.Now(), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range got {
			ids = append(ids, d.RunID)
		}
		return ids
	}
	if got := due(s); len(got) != 2 {
		t.Fatalf("due before the reopen: %v; the stale row should show (the query reads wait_index alone)", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = New(ctx, Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := due(s); len(got) != 1 || got[0] != "waiting" {
		t.Fatalf("due after the reopen: %v, want [waiting]", got)
	}
	next, err := s.RunNextDue(ctx)
	if err != nil || !next.Equal(past.Time) {
		t.Fatalf("next due: %v, %v; want %v", next, err, past)
	}
	var rows int
	if err := s.wconn.QueryRowContext(ctx, `SELECT COUNT(*) FROM wait_index`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("wait_index holds %d rows (%v), want 1", rows, err)
	}
}

// TestCachedWaitingRunLeavesTheDueListWhenResumed guards hotCache.unindexed
// (which lets a commit skip deleting a wait_index row the run does not
// have): a run the cache holds waiting with a deadline has a row, and the
// commit that resumes it through the database (no redo log) deletes it,
// so the run is no longer listed due.
func TestCachedWaitingRunLeavesTheDueListWhenResumed(t *testing.T) {
	ctx := t.Context()
	s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "db.sqlite3"), NoRedoLog: true, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.cache == nil {
		t.Fatal("an owned store has no cache")
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := redoRun(strings.Repeat("u", 32))
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.Time{Time: base.Add(time.Second)}}
	commitSteps(t, s, r, durable.RunWaiting, true, "a")
	wantLeavesDueListWhenResumed(t, s, r, base.Add(time.Minute))
}

// wantLeavesDueListWhenResumed checks that run r, waiting on a deadline before now,
// is listed due, then commits it resumed (running, no wait) and checks
// that it is listed no more.
func wantLeavesDueListWhenResumed(t *testing.T, s *Store, r *durable.RunState, now time.Time) {
	t.Helper()
	list := func() []store.DueRun {
		t.Helper()
		due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return due
	}
	if due := list(); len(due) != 1 || due[0].RunID != r.RunID {
		t.Fatalf("waiting run: due %v, want it", due)
	}
	r.Waiting = nil
	commitSteps(t, s, r, durable.RunRunning, false, "b")
	if due := list(); len(due) != 0 {
		t.Fatalf("resumed run: due %v, want none", due)
	}
}
