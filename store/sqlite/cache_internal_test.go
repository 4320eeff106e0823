package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
	"github.com/abstractframework/abstractgateway/store"
)

// TestHotCache_Bounds: the accounted size is what the entries hold, never
// above the limit after an operation, and the least recently used run
// goes first.
func TestHotCache_Bounds(t *testing.T) {
	t.Parallel()
	c := newHotCache(4 * (entryOverhead + 100))
	// state is a run_json text of exactly 100 bytes.
	state := func(id string) string {
		t := `{"run_id": "` + id + `", "status": "running", "pad": "`
		return t + strings.Repeat("x", 100-len(t)-2) + `"}`
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		c.putState(id, state(id), 1, false)
	}
	if c.state("a") == nil { // a becomes the most recently used
		t.Fatal("a was evicted although the cache has room for four runs")
	}
	c.putState("e", state("e"), 1, false) // evicts b, the least recently used
	if c.state("b") != nil || c.state("a") == nil || c.state("e") == nil {
		t.Fatal("eviction did not take the least recently used run")
	}
	rec := func(seq int64) *frozen.Record { return frozen.NewRecord(&durable.StepRecord{Seq: seq}) }
	c.appended("a", []*frozen.Record{rec(1), rec(2)}, 40)
	if recs, ok := c.ledger("a"); !ok || len(recs) != 2 {
		t.Fatalf("ledger(a) = %v, %v", recs, ok)
	}
	if n, ok := c.lastSeq("a"); !ok || n != 2 {
		t.Fatalf("lastSeq(a) = %d, %v", n, ok)
	}
	c.appended("x", []*frozen.Record{rec(5)}, 10) // ledger not from seq 1: only the seq is known
	if _, ok := c.ledger("x"); ok {
		t.Fatal("a ledger seen from seq 5 on was taken as whole")
	}
	if n, ok := c.lastSeq("x"); !ok || n != 5 {
		t.Fatalf("lastSeq(x) = %d, %v", n, ok)
	}
	if c.size > c.limit {
		t.Fatalf("size %d above limit %d", c.size, c.limit)
	}
	var sum int64
	for _, el := range c.runs {
		h := el.Value.(*hotRun)
		sum += entryOverhead + h.stateSize + h.ledgerSize
	}
	if sum != c.size {
		t.Fatalf("accounted size %d, entries hold %d", c.size, sum)
	}
	c.putState("huge", state("huge")+strings.Repeat(" ", int(c.limit)), 1, false) // larger than an eighth of the cache: not kept
	if c.state("huge") != nil {
		t.Fatal("a state larger than an eighth of the cache was cached")
	}
	c.ledgerDeleted("a")
	if recs, ok := c.ledger("a"); !ok || len(recs) != 0 {
		t.Fatalf("after delete: ledger(a) = %v, %v; want known and empty", recs, ok)
	}
}

// TestCheckpointPages: the WAL checkpoint threshold is the configured one,
// by default DefaultCheckpointPages, 10,000 for a shared store, or
// SQLite's 1,000 with FULL.
func TestCheckpointPages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sync      string
		shared    bool
		cfg, want int
	}{{"", false, 0, DefaultCheckpointPages}, {"", false, 250, 250}, {"", true, 0, 10000},
		{"FULL", false, 0, 1000}, {"FULL", false, 5000, 5000}} {
		cfgPages, want := c.cfg, c.want
		s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db"), CheckpointPages: cfgPages,
			Synchronous: c.sync, Shared: c.shared})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := s.wconn.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&got); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if got != want {
			t.Errorf("CheckpointPages %d: wal_autocheckpoint = %d, want %d", cfgPages, got, want)
		}
	}
}

// TestHotCache_WaitingRunKeepsOnlyItsLastSeq: a commit that leaves a run
// waiting drops the run's records from the cache and keeps its state and
// last seq, so the commit that resumes it still takes the fast path (with
// a redo log) and its records continue the seqs; a read of the ledger
// returns every record, from the database, and caches them again.
func TestHotCache_WaitingRunKeepsOnlyItsLastSeq(t *testing.T) {
	t.Parallel()
	for _, noRedo := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoRedoLog=%v", noRedo), func(t *testing.T) {
			ctx := t.Context()
			s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "db.sqlite3"), NoRedoLog: noRedo, IdleCheckpoint: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := &durable.RunState{RunID: strings.Repeat("w", 32), WorkflowID: "wf", Status: durable.RunRunning}
			commit := func(status durable.RunStatus, create bool, steps ...string) {
				commitSteps(t, s, r, status, create, steps...)
			}
			cached := func() (ledger bool, lastSeq int64, seqKnown bool) {
				if s.redo != nil {
					s.redo.mu.Lock()
					defer s.redo.mu.Unlock()
				}
				_, ledger = s.cache.ledger(r.RunID)
				lastSeq, seqKnown = s.cache.lastSeq(r.RunID)
				return ledger, lastSeq, seqKnown
			}
			commit(durable.RunRunning, true, "a")
			if ledger, _, _ := cached(); !ledger {
				t.Fatal("the records of a running run are not cached")
			}
			commit(durable.RunWaiting, false, "b", "c")
			if ledger, last, known := cached(); ledger || !known || last != 3 {
				t.Fatalf("after the waiting commit: ledger cached %v, last seq %d (known %v); want only last seq 3", ledger, last, known)
			}
			if s.redo == nil {
				commit(durable.RunCompleted, false, "d")
			} else {
				// The writer turn held keeps the goroutine from applying the
				// queue, which the commit then grows by one.
				s.wsem <- struct{}{}
				s.redo.mu.Lock()
				before := len(s.redo.pending)
				s.redo.mu.Unlock()
				commit(durable.RunCompleted, false, "d")
				s.redo.mu.Lock()
				after := len(s.redo.pending)
				s.redo.mu.Unlock()
				<-s.wsem
				if after != before+1 {
					t.Fatalf("the commit resuming a waiting run did not take the redo log's fast path (queue %d -> %d)", before, after)
				}
			}
			if ledger, last, known := cached(); ledger || !known || last != 4 {
				t.Fatalf("after the resuming commit: ledger cached %v, last seq %d (known %v); want only last seq 4", ledger, last, known)
			}
			if got, want := ledgerSteps(t, s, r.RunID), "1:a 2:b 3:c 4:d "; got != want {
				t.Fatalf("ledger = %q, want %q", got, want)
			}
			if ledger, last, _ := cached(); !ledger || last != 4 {
				t.Fatalf("after the read: ledger cached %v, last seq %d; want cached, 4", ledger, last)
			}
		})
	}
}

// TestHotCache_HandoffIsReadOnce: with a redo log, a run created with
// Handoff reads back as the very object committed, once; then as decoded
// copies. One handed-over state is kept at most: a second handoff lets
// the first go.
func TestHotCache_HandoffIsReadOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "db.sqlite3"), IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newRun := func(id string) *durable.RunState {
		return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{"k": "v"}}
	}
	handOver := func(r *durable.RunState) {
		t.Helper()
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true, Handoff: true}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(id string) *durable.RunState {
		t.Helper()
		r, err := s.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	a := newRun(strings.Repeat("a", 32))
	handOver(a)
	if got := get(a.RunID); got != a {
		t.Fatal("the first read of a handed-over run is a copy, want the committed object")
	}
	if got := get(a.RunID); got == a || got.Vars["k"] != "v" || got.Version != 1 {
		t.Fatalf("the second read = %p (committed %p), vars %v, version %d; want a decoded copy at version 1", got, a, got.Vars, got.Version)
	}

	b, c := newRun(strings.Repeat("b", 32)), newRun(strings.Repeat("c", 32))
	handOver(b)
	handOver(c)
	if got := get(b.RunID); got == b {
		t.Fatal("a second handoff kept the first handed-over state too")
	}
	if got := get(c.RunID); got != c {
		t.Fatal("the last handed-over state is not read back")
	}
}

// A commit without records that leaves a run waiting keeps the run's last
// seq as it was (cache.parked): the next records continue the ledger's
// seqs, on a store that commits straight into the database.
func TestWaitingCommitWithoutRecordsKeepsLedgerSeqs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3"), NoRedoLog: true})
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

// appended keeps a known ledger whole while the seqs follow on from its
// last one, forgets it (keeping the new last seq) when they do not, and
// does not keep a ledger past an eighth of the cache's bound.
func TestHotCache_AppendedKeepsOnlyContiguousBoundedLedgers(t *testing.T) {
	t.Parallel()
	rec := func(seq int64) *frozen.Record { return frozen.NewRecord(&durable.StepRecord{Seq: seq}) }
	c := newHotCache(64 * (entryOverhead + 100))
	c.appended("a", []*frozen.Record{rec(1), rec(2)}, 20)
	c.appended("a", []*frozen.Record{rec(3)}, 10)
	if recs, ok := c.ledger("a"); !ok || len(recs) != 3 {
		t.Fatalf("after appending seq 3 to seqs 1-2: ledger(a) = %d records, known %v; want 3, known", len(recs), ok)
	}
	c.appended("a", []*frozen.Record{rec(5)}, 10) // seq 4 never seen: the cached ledger misses it
	if _, ok := c.ledger("a"); ok {
		t.Fatal("a ledger with a gap before seq 5 was kept as whole")
	}
	if n, ok := c.lastSeq("a"); !ok || n != 5 {
		t.Fatalf("lastSeq(a) = %d, %v; want 5", n, ok)
	}
	c.appended("b", []*frozen.Record{rec(1)}, 10)
	c.appended("b", []*frozen.Record{rec(2)}, c.limit/8) // now above an eighth of the bound
	if _, ok := c.ledger("b"); ok {
		t.Fatal("a ledger larger than an eighth of the cache was kept")
	}
	if n, ok := c.lastSeq("b"); !ok || n != 2 {
		t.Fatalf("lastSeq(b) = %d, %v; want 2", n, ok)
	}
	var sum int64
	for _, el := range c.runs {
		h := el.Value.(*hotRun)
		sum += entryOverhead + h.stateSize + h.ledgerSize
	}
	if sum != c.size {
		t.Fatalf("accounted size %d, entries hold %d", c.size, sum)
	}
}

// TestHotCache_DroppedStateLeavesTheAccount: a state dropped (a deleted
// run, one too large to keep) no longer counts, whether its entry stays
// for the ledger or goes. Were its size left in the account, every drop
// would shrink the room the cache has until it held nothing.
func TestHotCache_DroppedStateLeavesTheAccount(t *testing.T) {
	t.Parallel()
	c := newHotCache(1 << 20)
	c.putState("a", `{"run_id": "a"}`, 1, false)
	c.appended("a", []*frozen.Record{frozen.NewRecord(&durable.StepRecord{Seq: 1})}, 40)
	c.putState("b", `{"run_id": "b"}`, 1, false)
	c.dropState("a") // the entry stays, holding the ledger
	c.dropState("b") // the entry goes
	if want := int64(entryOverhead + 40); c.size != want {
		t.Fatalf("accounted size %d after dropping both states; want %d (a's entry and ledger)", c.size, want)
	}
	if c.state("a") != nil || c.state("b") != nil {
		t.Fatal("a dropped state is still served")
	}
}
