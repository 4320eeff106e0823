package sqlite

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A due list answered over the redo queue still returns up to limit runs
// when a queued commit takes a run the database lists as due out of the
// list: the database is asked for more rows than limit.
func TestDueListOverQueueFillsLimitPastQueuedRuns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	now := time.Now()
	a := waitingRun("", durable.WaitUntil, "", now.Add(-2*time.Hour))
	a.RunID = "aaaa"
	b := waitingRun("", durable.WaitUntil, "", now.Add(-time.Hour))
	b.RunID = "bbbb"
	for _, r := range []*durable.RunState{a, b} {
		if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	g.hold() // a's resume stays queued
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
	g.hold() // both commits go into one batch
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
	check(openStore(t, Config{Path: g.path}), "after a reopen")
}

// TestRedo_DueListTakesAQueuedRunFromItsQueuedCommit guards
// listDueOverQueue for a run whose wait_index row is in a foreign form (as
// Python writes it): once a commit resuming the run is queued, the run is
// not due, although the database's foreign-form row still says it is.
func TestRedo_DueListTakesAQueuedRunFromItsQueuedCommit(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := redoRun(strings.Repeat("q", 32))
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.Time{Time: base.Add(time.Second)}}
	g.commit(r, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	g.held(func() { // the row as a Python writer leaves it
		if _, err := g.s.wconn.ExecContext(ctx, `UPDATE wait_index SET next_due_iso = ? WHERE run_id = ?`,
			"2026-01-01T00:00:01Z", r.RunID); err != nil {
			t.Fatal(err)
		}
	})
	list := func() []store.DueRun {
		t.Helper()
		due, err := g.s.RunListDue(ctx, &store.RunListDueParams{Now: base.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return due
	}
	if due := list(); len(due) != 1 || due[0].RunID != r.RunID {
		t.Fatalf("before the resume: due %v, want the run (foreign-form row)", due)
	}
	g.hold()
	r.Status, r.Waiting = durable.RunRunning, nil
	g.commit(r, 1, false)
	if n := g.pending(); n != 1 {
		t.Fatalf("%d commits queued, want the resume queued", n)
	}
	if due := list(); len(due) != 0 {
		t.Fatalf("due over a queued resume: %v, want none", due)
	}
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if due := list(); len(due) != 0 {
		t.Fatalf("due after applying the resume: %v, want none", due)
	}
}

// TestRedo_CreateOfAQueuedRunTheCacheLetGoIsRefused guards
// createFromDatabase's look at the queue: a run created under a chosen id
// whose create is still queued (not in the database) and whose cache entry
// was evicted exists; a second create is ErrAlreadyExists, not a duplicate
// insert that the background apply can never write.
func TestRedo_CreateOfAQueuedRunTheCacheLetGoIsRefused(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	g.hold()
	create := func() error {
		return g.s.RunCommit(ctx, &store.CommitParams{Run: redoRun("chosen"), Create: true})
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}
	g.s.redo.mu.Lock()
	g.s.cache.dropState("chosen") // evicted, as under a large working set
	g.s.cache.ledgerUnknown("chosen")
	evicted := g.s.cache.entry("chosen", false) == nil
	g.s.redo.mu.Unlock()
	if !evicted {
		t.Fatal("the run's cache entry is still there")
	}
	if err := create(); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second create of a run whose create is queued: %v, want ErrAlreadyExists", err)
	}
	g.s.redo.heldForTest.Store(false)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatalf("applying the queue: %v", err)
	}
}

// store.CommitParams.RandomID lets the redo log queue a create without
// looking for the run. When the cache has evicted a run whose create is
// still queued (a tiny cache), a RandomID create of the same id must
// still be refused with ErrAlreadyExists, not queued: applying it would
// fail, and with it the redo log and every later write. The applier is
// held so that the first create is still queued when the second comes.
func TestRandomIDReuseOfQueuedRunRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "r.sqlite3"), CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.redo.heldForTest.Store(true)
	if err := s.RunCommit(ctx, &store.CommitParams{Run: redoRun("x"), Create: true, RandomID: true}); err != nil {
		t.Fatal(err)
	}
	s.redo.mu.Lock()
	queued := s.redo.queuedRuns["x"]
	s.redo.mu.Unlock()
	if queued == 0 {
		t.Fatal("the create of x is not queued")
	}
	err = s.RunCommit(ctx, &store.CommitParams{Run: redoRun("x"), Create: true, RandomID: true})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("second RandomID create of x = %v, want ErrAlreadyExists", err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: redoRun("y"), Create: true, RandomID: true}); err != nil {
		t.Fatalf("a later create: %v (the store must keep taking writes)", err)
	}
	s.redo.heldForTest.Store(false)
	if err := s.Settle(ctx); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	for _, id := range []string{"x", "y"} {
		if _, err := s.RunGet(ctx, id); err != nil {
			t.Errorf("RunGet(%s) after Settle: %v", id, err)
		}
	}
}

// A run created waiting and then resumed in one batch of the redo queue is
// applied as one INSERT of its last state: the create's deadline is not
// carried into it, so the run has no wait_index row and never falls due,
// now or after a reopen.
func TestBatchedCreateThenResumeDropsDeadline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	g.hold() // both commits go into one batch
	now := time.Now()
	r := redoRun("dddd")
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(now.Add(-time.Minute))}
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true}); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Waiting = durable.RunRunning, nil
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
		if len(due) != 0 {
			t.Fatalf("%s: RunListDue = %+v, want none (the run was resumed)", when, due)
		}
	}
	check(g.s, "after the batch")
	if err := g.s.Close(); err != nil {
		t.Fatal(err)
	}
	check(openStore(t, Config{Path: g.path}), "after a reopen")
}
