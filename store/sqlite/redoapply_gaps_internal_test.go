package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestRedoCommitChangingARunsWorkflowIsApplied: a queued commit that
// changes a column fixed at creation (workflow, parent, session) misses
// the usual UPDATE, which checks them in WHERE, and is applied by
// runUpdateAll. Without that fallback the apply fails as a stale version
// and the queue never reaches the database.
func TestRedoCommitChangingARunsWorkflowIsApplied(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("i", 32))
	commitSteps(t, g.s, r, durable.RunRunning, true, "a") // version 1
	// Applied now: else the create and the update are applied as one insert.
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	r.WorkflowID, r.SessionID, r.ParentRunID = "wf2", "session-2", "parent-2"
	commitSteps(t, g.s, r, durable.RunRunning, false, "b") // version 2, from the cache
	if err := g.s.Settle(ctx); err != nil {
		t.Fatalf("applying a commit that changes the run's workflow: %v", err)
	}
	got, steps, _ := crashImageState(t, g.s, g.path, Config{CacheBytes: -1}, r.RunID)
	if got.Version != 2 || got.WorkflowID != "wf2" || got.SessionID != "session-2" || got.ParentRunID != "parent-2" ||
		steps != "1:a 2:b " {
		t.Fatalf("the database holds version %d, workflow %q, session %q, parent %q, ledger %q; "+
			"want version 2, wf2, session-2, parent-2, \"1:a 2:b \"",
			got.Version, got.WorkflowID, got.SessionID, got.ParentRunID, steps)
	}
}

// TestRedoCreateUnderATakenIDIsNotDroppedSilently: a create under a
// random id is queued without asking the database whether the id exists
// (RandomID promises it does not). If it does, applying the create must
// fail, not skip the insert the way ON CONFLICT DO NOTHING lets it: the
// caller was told the run was created, the cache serves the new state,
// and a reopen would find the old one.
func TestRedoCreateUnderATakenIDIsNotDroppedSilently(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "taken.sqlite3")
	s := openStore(t, Config{Path: path})
	if err := s.RunCommit(ctx, &store.CommitParams{Run: redoRun("taken"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, Config{Path: path}) // an empty cache: nothing says the id is taken
	dup := redoRun("taken")
	dup.Vars = map[string]any{"dup": true}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: dup, Create: true, RandomID: true}); err != nil {
		return // refused at once: nothing was acknowledged
	}
	err := s.Settle(ctx)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("applying a create under an id the database holds: %v; want an error saying the run already exists", err)
	}
}

// TestRedoAppliedRecordsRaiseLedgerHeadsAtClose: records committed from
// the cache reach the ledger through the applier (applyOp), which must
// mark the ledger grown, so that Close raises ledger_heads for Python
// 0.4.28, which numbers its appends from them. Without the mark, a run
// whose records all came that way is left with no head, and Python
// would append at seq 1 again.
func TestRedoAppliedRecordsRaiseLedgerHeadsAtClose(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "heads.sqlite3")
	s := openStore(t, Config{Path: path})
	r := redoRun(strings.Repeat("k", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a", "b") // random id: queued from the cache
	commitSteps(t, s, r, durable.RunRunning, false, "c")
	if s.redo == nil {
		t.Fatal("want a store with a redo log")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	defer db.Close()
	var head int64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE((SELECT last_seq FROM ledger_heads WHERE run_id = ?), 0)`,
		r.RunID).Scan(&head); err != nil {
		t.Fatal(err)
	}
	if head != 3 {
		t.Errorf("ledger_heads.last_seq after the owning store closed = %d, want 3: Python 0.4.28 would reuse seq %d",
			head, head+1)
	}
}

// TestReplaySyncsTheWALOfRecordsAlreadyApplied: a process killed after
// its applier brought the database up to the redo log's last record
// leaves a log with nothing to replay, but with FULL the database ran
// NORMAL behind it: those applied writes may sit in an unsynced WAL. The
// open rewinds the log, so it must sync the WAL first even though it
// replayed nothing, or a power cut then loses commits that were
// acknowledged as on disk.
func TestReplaySyncsTheWALOfRecordsAlreadyApplied(t *testing.T) {
	g := newRedoRig(t, "FULL")
	r := redoRun(strings.Repeat("f", 32))
	for i := range 2 {
		g.commit(r, i, i == 0)
	}
	if err := g.s.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	var img string
	g.held(func() { img = g.image() })
	if st, err := os.Stat(img + redoSuffix); err != nil || st.Size() == 0 {
		t.Fatalf("the image's redo log is %v, %v; want the two records still in it", st, err)
	}
	var calls []string
	real := syncReplayedWAL
	t.Cleanup(func() { syncReplayedWAL = real })
	syncReplayedWAL = func(path string) error {
		calls = append(calls, path)
		return real(path)
	}
	c := openImage(t, Config{Path: img}) // replays nothing: the database holds both
	if len(calls) != 1 || calls[0] != img+"-wal" {
		t.Fatalf("WAL syncs while opening: %q; want one of %s before the redo log is rewound", calls, img+"-wal")
	}
	if got, err := c.RunGet(t.Context(), r.RunID); err != nil || got.Version != 2 {
		t.Fatalf("the image reads %+v, %v; want version 2", got, err)
	}
}

// TestRedoWriteThatChangesNothingTakesNoLSN: a write through the database
// that runs no write statement (here a duplicate command append, which
// only looks its id up) records nothing in the redo log, so it must not
// set redo_applied to the LSN it would have taken: the next record, a
// commit queued from the cache, takes that LSN, and a process killed
// before applying it would reopen with the database claiming to hold it
// and skip its replay: an acknowledged commit lost.
func TestRedoWriteThatChangesNothingTakesNoLSN(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("n", 32))
	commitSteps(t, g.s, r, durable.RunRunning, true, "a") // version 1
	c := &durable.CommandRecord{CommandID: "c1", RunID: r.RunID, Type: "pause"}
	if _, err := g.s.CommandAppend(ctx, c); err != nil {
		t.Fatal(err)
	}
	g.hold() // the commit below stays in the redo log only
	res, err := g.s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: r.RunID, Type: "pause"})
	if err != nil || !res.Duplicate {
		t.Fatalf("appending the command again: %+v, %v; want a duplicate", res, err)
	}
	commitSteps(t, g.s, r, durable.RunCompleted, false, "b") // version 2, queued
	got, steps, cmds := crashImageState(t, g.s, g.path, Config{}, r.RunID)
	if got.Version != 2 || steps != "1:a 2:b " || cmds != 1 {
		t.Fatalf("after a kill the database reopens with run version %d, ledger %q, %d commands; "+
			"want version 2, ledger \"1:a 2:b \", 1 command", got.Version, steps, cmds)
	}
}

// TestRedoQueuedCommitIsAppliedInTheBackground: a commit queued from the
// cache wakes the applier, which brings it to the database with no other
// call on the store. Without the wake-up the queue would only be applied
// by the next read or write that needs the database, and the redo log
// could not be rewound meanwhile.
func TestRedoQueuedCommitIsAppliedInTheBackground(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("q", 32))
	commitSteps(t, g.s, r, durable.RunRunning, true, "a")
	deadline := time.Now().Add(10 * time.Second)
	for g.pending() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d commits still queued 10 s after they were made: the applier was not woken", g.pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
