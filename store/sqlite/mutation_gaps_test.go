package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Tests added by mutation testing of store/sqlite: each guards a promise
// (package doc, doc comments, docs/compatibility.md) no other test checked.

// mutRawDB opens the database file directly, as Python or a tool would;
// the caller closes it (and any store owning the file first).
func mutRawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// mutOpen opens a store with cfg (no idle checkpoints), closed at the
// test's end unless the test closed it.
func mutOpen(t *testing.T, cfg Config) *Store {
	t.Helper()
	cfg.IdleCheckpoint = -1
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New(%s): %v", cfg.Path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mutWaitingRun is a new run waiting for reason with deadline until.
func mutWaitingRun(id string, reason durable.WaitReason, key string, until time.Time) *durable.RunState {
	r := redoRun(id)
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: reason, WaitKey: key, Until: durable.NewTime(until)}
	return r
}

// The runs.wait_until column is filled as Python fills it: only for
// WAIT_UNTIL waits. A WAIT_EVENT with a timeout keeps NULL there (its
// deadline lives in wait_index alone).
func TestWaitUntilColumnOnlyForUntilWaits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path})
	until := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	event := mutWaitingRun("event-run", durable.WaitEvent, "evt:k", until)
	timer := mutWaitingRun("until-run", durable.WaitUntil, "", until)
	for _, r := range []*durable.RunState{event, timer} {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	defer db.Close()
	for id, want := range map[string]sql.NullString{
		"event-run": {},
		"until-run": {String: durable.NewTime(until).String(), Valid: true},
	} {
		var got sql.NullString
		if err := db.QueryRow(`SELECT wait_until FROM runs WHERE run_id = ?`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("run %s: wait_until = %+v, want %+v (Python fills it for WAIT_UNTIL only)", id, got, want)
		}
	}
}

// RunIndex's RootOnly reads a run whose parent column is the empty text (a writer that
// stores an empty parent instead of NULL) as a run without a parent.
func TestRunIndexRootOnlyCountsEmptyParentAsRoot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path})
	for _, r := range []*durable.RunState{redoRun("root-null"), redoRun("root-empty"), redoRun("child")} {
		if r.RunID == "child" {
			r.ParentRunID = "root-null"
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET parent_run_id = '' WHERE run_id = 'root-empty'`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s = mutOpen(t, Config{Path: path})
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{RootOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows {
		got = append(got, row.RunID)
	}
	slices.Sort(got)
	if want := []string{"root-empty", "root-null"}; !slices.Equal(got, want) {
		t.Fatalf("RunIndex RootOnly = %v, want %v", got, want)
	}
}

// LedgerDelete removes the run's ledger_heads row with its records (its
// doc: "the records and the head go"), so a Python process open on a
// shared database does not keep allocating after the deleted records.
func TestLedgerDeleteRemovesLedgerHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path, Shared: true})
	recs := []*durable.StepRecord{{RunID: "r", StepID: "a"}, {RunID: "r", StepID: "b"}, {RunID: "r", StepID: "c"}}
	if err := s.LedgerAppend(ctx, "r", recs); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	defer db.Close()
	heads := func() int {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM ledger_heads WHERE run_id = 'r'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := heads(); n != 1 {
		t.Fatalf("ledger_heads rows after an append = %d, want 1", n)
	}
	if n, err := s.LedgerDelete(ctx, "r"); err != nil || n != 3 {
		t.Fatalf("LedgerDelete = %d, %v; want 3", n, err)
	}
	if n := heads(); n != 0 {
		t.Fatalf("ledger_heads rows after LedgerDelete = %d, want 0", n)
	}
}

// A due list answered over the redo queue still returns up to limit runs
// when a queued commit takes a run the database lists as due out of the
// list: the database is asked for more rows than limit.
func TestDueListOverQueueFillsLimitPastQueuedRuns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	now := time.Now()
	a := mutWaitingRun("", durable.WaitUntil, "", now.Add(-2*time.Hour))
	a.RunID = "aaaa"
	b := mutWaitingRun("", durable.WaitUntil, "", now.Add(-time.Hour))
	b.RunID = "bbbb"
	for _, r := range []*durable.RunState{a, b} {
		if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	g.s.redo.heldForTest.Store(true) // a's resume stays queued
	a.Status, a.Waiting = durable.RunRunning, nil
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: a}); err != nil {
		t.Fatal(err)
	}
	if g.pending() == 0 {
		t.Fatal("the resume of a is not queued")
	}
	due, err := g.s.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].RunID != "bbbb" {
		t.Fatalf("RunListDue(limit 1) = %+v, want run bbbb (aaaa no longer waits)", due)
	}
}

// A run created and then left waiting with a deadline in one batch of the
// redo queue is applied as one INSERT of its last state: that insert
// keeps the deadline in wait_index, so the run falls due, now and after a
// reopen.
func TestBatchedCreateThenWaitKeepsDeadline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	g.s.redo.heldForTest.Store(true) // both commits go into one batch
	r := redoRun("cccc")
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(now.Add(-time.Minute))}
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
	if n := g.pending(); n != 2 {
		t.Fatalf("%d commits queued, want 2", n)
	}
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, when string) {
		t.Helper()
		due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 1 || due[0].RunID != "cccc" {
			t.Fatalf("%s: RunListDue = %+v, want run cccc", when, due)
		}
	}
	check(g.s, "after the batch")
	if err := g.s.Close(); err != nil {
		t.Fatal(err)
	}
	check(mutOpen(t, Config{Path: g.path}), "after a reopen")
}

// A commit without records that leaves a run waiting keeps the run's last
// seq as it was (cache.parked): the next records continue the ledger's
// seqs, on a store that commits straight into the database.
func TestWaitingCommitWithoutRecordsKeepsLedgerSeqs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := mutOpen(t, Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3"), NoRedoLog: true})
	r := redoRun("dddd")
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	r.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k"}
	commitSteps(t, s, r, durable.RunWaiting, false)
	r.Waiting = nil
	commitSteps(t, s, r, durable.RunRunning, false, "b")
	if got, want := ledgerSteps(t, s, r.RunID), "1:a 2:b "; got != want {
		t.Fatalf("ledger = %q, want %q", got, want)
	}
	if n, err := s.LedgerCount(ctx, r.RunID); err != nil || n != 2 {
		t.Fatalf("LedgerCount = %d, %v; want 2", n, err)
	}
}

// Once a write to the redo log failed, Close reports it and keeps the log
// for the next open ("on any failure the log stays"), even when closing
// the file itself succeeds.
func TestCloseReportsRedoLogFailureAndKeepsTheLog(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("e", 32))
	g.commit(r, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	// Swap the log's file for a read-only handle: the next append fails,
	// while closing the handle succeeds.
	ro, err := os.Open(g.path + redoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	g.s.redo.mu.Lock()
	_ = g.s.redo.file.f.Close()
	g.s.redo.file.f = ro
	g.s.redo.mu.Unlock()
	next := *r
	next.Vars = map[string]any{"i": 1}
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: &next}); err == nil {
		t.Fatal("a commit whose redo record could not be written succeeded")
	}
	if err := g.s.Close(); err == nil {
		t.Fatal("Close reported no error for a failed redo log")
	}
	if _, err := os.Stat(g.path + redoSuffix); err != nil {
		t.Fatalf("the redo log of a store whose log failed was not kept: %v", err)
	}
	checkImage(t, g.path, Config{}, r, 0, 0)
}

// A database whose schema_migrations names a version newer than this
// binary's newest migration (by one) is refused at open, not written.
func TestOpenRefusesSchemaOneVersionNewer(t *testing.T) {
	t.Parallel()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', '2030-01-01T00:00:00+00:00')`,
		len(ms)+1); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s, err = New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err == nil {
		_ = s.Close()
		t.Fatalf("New opened a database at schema version %d, newer than the binary's %d", len(ms)+1, len(ms))
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("New: %v, want the newer-schema refusal", err)
	}
}

// A commit that fails after it recorded its run as stale for the lists
// (here: a ledger insert a trigger refuses) is rolled back with that
// record; the store must not remember the run as recorded, or the next
// commit skips recording it and the lists by status stay stale.
func TestListsExactAfterARolledBackCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	if _, err := db.Exec(`CREATE TRIGGER refuse_boom BEFORE INSERT ON ledger
		WHEN NEW.record_json LIKE '%boom%' BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s = mutOpen(t, Config{Path: path, NoRedoLog: true})
	r := redoRun("ffff")
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	if runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunRunning}); err != nil || len(runs) != 1 {
		t.Fatalf("RunList(running) = %d runs, %v; want 1", len(runs), err)
	}
	failing := *r
	failing.Status = durable.RunCompleted
	err := s.RunCommit(ctx, &store.CommitParams{Run: &failing,
		Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "boom", Status: durable.StepCompleted}}})
	if err == nil || !strings.Contains(err.Error(), "boom refused") {
		t.Fatalf("commit with a refused record: %v, want the trigger's error", err)
	}
	commitSteps(t, s, r, durable.RunCompleted, false, "b")
	runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].RunID != r.RunID {
		t.Fatalf("RunList(completed) = %d runs, want run %s", len(runs), r.RunID)
	}
	if runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunRunning}); err != nil || len(runs) != 0 {
		t.Fatalf("RunList(running) = %d runs, %v; want none", len(runs), err)
	}
}

// A row whose run_json cannot be decoded counts as absent, as in the
// Python store: RunGet's error wraps store.ErrNotFound.
func TestRunGetUnreadableRunJSONIsNotFound(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := mutOpen(t, Config{Path: path})
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: redoRun("gggg"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := mutRawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET run_json = '{not json' WHERE run_id = 'gggg'`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for _, cfg := range []Config{{Path: path}, {Path: path, Shared: true}} {
		s := mutOpen(t, cfg)
		_, err := s.RunGet(t.Context(), "gggg")
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RunGet of an unreadable row (shared %v): %v, want store.ErrNotFound", cfg.Shared, err)
		}
		_ = s.Close()
	}
}
