package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// waitingLoop drives the store as the runtime drives it for a parent run
// whose loop body waits on a subworkflow: each turn commits the run
// waiting (which makes the cache let go of its records) with a started
// and a completed record, then looks up a key no record has (Python's
// key, as execute does before every external effect) and one an earlier
// turn recorded.
type waitingLoop struct {
	s   *sqlite.Store
	run *durable.RunState
	n   int
}

func newWaitingLoop(tb testing.TB, s *sqlite.Store) *waitingLoop {
	tb.Helper()
	now := durable.NewTime(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	run := &durable.RunState{RunID: "parent", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "loop",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := s.RunCommit(tb.Context(), &store.CommitParams{Run: run, Create: true}); err != nil {
		tb.Fatal(err)
	}
	return &waitingLoop{s: s, run: run}
}

func (l *waitingLoop) turn(tb testing.TB) {
	tb.Helper()
	ctx := tb.Context()
	i := l.n
	l.n++
	l.run.Status = durable.RunWaiting
	l.run.Waiting = &durable.WaitState{Reason: durable.WaitSubworkflow, WaitKey: fmt.Sprintf("subworkflow:child-%d", i)}
	recs := []*durable.StepRecord{
		{RunID: "parent", StepID: fmt.Sprintf("s%d", i), NodeID: "body", Status: durable.StepStarted,
			IdempotencyKey: fmt.Sprintf("key-%d", i)},
		{RunID: "parent", StepID: fmt.Sprintf("s%d", i), NodeID: "body", Status: durable.StepCompleted,
			IdempotencyKey: fmt.Sprintf("key-%d", i), Result: map[string]any{"i": i}},
	}
	if err := l.s.RunCommit(ctx, &store.CommitParams{Run: l.run, Records: recs}); err != nil {
		tb.Fatal(err)
	}
	if got, err := l.s.LedgerFindCompleted(ctx, "parent", "python-key"); err != nil || got != nil {
		tb.Fatalf("turn %d: LedgerFindCompleted(python-key) = %v, %v; want nil", i, got, err)
	}
	want := i / 2
	got, err := l.s.LedgerFindCompleted(ctx, "parent", fmt.Sprintf("key-%d", want))
	if err != nil || got == nil || got.Seq != int64(2*want+2) || got.StepID != fmt.Sprintf("s%d", want) {
		tb.Fatalf("turn %d: LedgerFindCompleted(key-%d) = %+v, %v; want the record of seq %d", i, want, got, err, 2*want+2)
	}
}

// loopConfigs are the store modes a look-up must stay cheap in.
var loopConfigs = []struct {
	name string
	cfg  sqlite.Config
}{
	{"owned", sqlite.Config{}},
	{"owned-no-redo", sqlite.Config{NoRedoLog: true}},
	{"owned-no-cache", sqlite.Config{CacheBytes: -1}},
	{"shared", sqlite.Config{Shared: true}},
}

// TestLedgerFindCompleted_WaitingLoopReadsEachRowOnce: a run that waits
// in a long loop is looked up once or twice per turn with its records out
// of the cache; the look-ups must read each ledger row from the database
// about once in all, not the whole ledger each time (10,000 turns of a
// subflow in a while loop took minutes, quadratic in the ledger length).
func TestLedgerFindCompleted_WaitingLoopReadsEachRowOnce(t *testing.T) {
	t.Parallel()
	const turns = 300
	for _, c := range loopConfigs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := c.cfg
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openWith(t, cfg)
			l := newWaitingLoop(t, s)
			for range turns {
				l.turn(t)
			}
			// 2 rows a turn, the last row read again by a look-up (checked still
			// there) and the record found read once a turn: at most 6 a turn.
			rows, scans := sqlite.FindCompletedReads(s)
			if limit := int64(6 * turns); rows > limit || scans > 0 {
				t.Errorf("%d turns read %d ledger rows through the key index (want at most %d) and scanned the whole ledger %d times (want 0)",
					turns, rows, limit, scans)
			}
		})
	}
}

// BenchmarkLedgerFindCompleted_WaitingLoop reports the time of one turn
// of waitingLoop after n turns: flat in n when a look-up does not rescan
// the ledger.
func BenchmarkLedgerFindCompleted_WaitingLoop(b *testing.B) {
	for _, c := range loopConfigs {
		for _, n := range []int{500, 2000} {
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				cfg := c.cfg
				cfg.Path = filepath.Join(b.TempDir(), "runtime.sqlite3")
				s := openWith(b, cfg)
				l := newWaitingLoop(b, s)
				for range n {
					l.turn(b)
				}
				b.ResetTimer()
				for range b.N {
					l.turn(b)
				}
			})
		}
	}
}

// completedRec is a completed record of run "r" under key.
func completedRec(step, key string) *durable.StepRecord {
	return &durable.StepRecord{RunID: "r", StepID: step, NodeID: "n", Status: durable.StepCompleted,
		IdempotencyKey: key, Result: map[string]any{"step": step}}
}

// wantFound checks that LedgerFindCompleted(r, key) returns the record of
// step (nil: none).
func wantFound(t *testing.T, s *sqlite.Store, key, step string) {
	t.Helper()
	got, err := s.LedgerFindCompleted(t.Context(), "r", key)
	switch {
	case err != nil:
		t.Fatalf("LedgerFindCompleted(%s): %v", key, err)
	case step == "" && got != nil:
		t.Fatalf("LedgerFindCompleted(%s) = step %s seq %d; want none", key, got.StepID, got.Seq)
	case step != "" && (got == nil || got.StepID != step):
		t.Fatalf("LedgerFindCompleted(%s) = %+v; want the record of step %s", key, got, step)
	}
}

// TestLedgerFindCompleted_SharedSeesOtherWriters: the key index of a
// shared store reads the rows other processes appended since its last
// look-up (another store on the file, and Python, whose rows leave
// completed_key to the trigger), and a ledger another process deleted and
// wrote again is read afresh.
func TestLedgerFindCompleted_SharedSeesOtherWriters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	a, b := openShared(t, path), openShared(t, path)
	if err := a.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("s1", "k1"), completedRec("s2", "k2")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "k1", "s1")
	wantFound(t, a, "k3", "")

	if err := b.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("s3", "k3")}); err != nil {
		t.Fatal(err)
	}
	execRaw(t, path, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r', 4,
		'{"run_id": "r", "step_id": "py", "node_id": "n", "status": "completed", "idempotency_key": "k4", "result": {}}')`)
	wantFound(t, a, "k3", "s3")
	wantFound(t, a, "k4", "py")

	// Deleted by another process and written again, shorter: seqs 1 and 2
	// hold other records now.
	if _, err := b.LedgerDelete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if err := b.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("t1", "k2"), completedRec("t2", "k5")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "k5", "t2")
	wantFound(t, a, "k2", "t1")
	wantFound(t, a, "k3", "")
}

// TestLedgerFindCompleted_AfterDelete: a store's own LedgerDelete makes
// its key index forget the run, so records appended again under the same
// seqs are found and the deleted ones are not, whatever the cache.
func TestLedgerFindCompleted_AfterDelete(t *testing.T) {
	t.Parallel()
	for _, c := range loopConfigs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			cfg := c.cfg
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openWith(t, cfg)
			if err := s.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("s1", "k1"), completedRec("s2", "k2")}); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "k2", "s2")
			if _, err := s.LedgerDelete(ctx, "r"); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "k2", "")
			if err := s.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("t1", "k3"), completedRec("t2", "k2")}); err != nil {
				t.Fatal(err)
			}
			wantFound(t, s, "k1", "")
			wantFound(t, s, "k2", "t2")
			wantFound(t, s, "k3", "t1")
		})
	}
}
