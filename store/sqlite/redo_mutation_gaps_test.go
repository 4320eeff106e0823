package sqlite

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Tests found missing by mutation testing of the redo log (redo.go,
// redoapply.go) and the cache (cache.go).

// TestFullCommitFailsWhenTheRedoLogCannotBeSynced guards the fdatasync of
// each redo append with synchronous=FULL: the commit is durable only
// once that sync succeeds, so a failed sync is the commit's error. The
// log's file is swapped for /dev/null, where writes succeed and
// fdatasync fails (EINVAL); a NORMAL store, which does not sync, commits.
func TestFullCommitFailsWhenTheRedoLogCannotBeSynced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on fdatasync of /dev/null failing")
	}
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) {
			g := newRedoRig(t, sync)
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			g.s.redo.mu.Lock()
			_ = g.s.redo.file.f.Close()
			g.s.redo.file.f = null // closed by the store's Close
			g.s.redo.mu.Unlock()
			r := redoRun(strings.Repeat("s", 32))
			err = g.s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true, RandomID: true})
			switch {
			case sync == "FULL" && (err == nil || !strings.Contains(err.Error(), "syncing the redo log")):
				t.Fatalf("FULL commit whose redo record could not be synced: %v, want a sync error", err)
			case sync == "NORMAL" && err != nil:
				t.Fatalf("NORMAL commit (no sync) failed: %v", err)
			}
		})
	}
}

// TestRedoDecoderRefusesACountPastThePayload guards redoDecoder.count: a
// damaged list length (here 2^62 records or values) is malformed, an
// error, not an allocation of that many items (a panic or an
// out-of-memory kill at open).
func TestRedoDecoderRefusesACountPastThePayload(t *testing.T) {
	huge := func(e *redoEncoder) { e.uvarint(1 << 62) }
	for name, build := range map[string]func(e *redoEncoder){
		"records": func(e *redoEncoder) { e.b = append(e.b, redoAppend); e.str("r"); e.varint(1); huge(e) },
		"values":  func(e *redoEncoder) { e.b = append(e.b, redoCommit); e.str("r"); e.b = append(e.b, 0); huge(e) },
	} {
		t.Run(name, func(t *testing.T) {
			var e redoEncoder
			build(&e)
			e.b = append(e.b, 0, 0, 0)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("decoding a count of 2^62 panicked: %v", p)
					}
				}()
				_, err = decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]})
			}()
			if err == nil {
				t.Fatal("a record whose count exceeds its payload decoded")
			}
		})
	}
}

// TestRedoValuesKeepWideIntegers guards the encoding of a Go int bound
// to a statement: it is read back as the same int64, all 64 bits.
func TestRedoValuesKeepWideIntegers(t *testing.T) {
	for _, v := range []int{math.MaxInt, math.MinInt, 1 << 40, -1} {
		var e redoEncoder
		if err := e.value(v); err != nil {
			t.Fatal(err)
		}
		d := &redoDecoder{b: e.b}
		if got := d.value(); d.err != nil || got != int64(v) || len(d.b) != 0 {
			t.Fatalf("int %d read back as %#v (%v, %d bytes left)", v, got, d.err, len(d.b))
		}
	}
}

// TestRedoDecodeRefusesTrailingBytes guards decodeRedoOp's check that a
// record holds nothing past its op: such bytes mean the record is not
// what the writer wrote, and the replay must not apply it.
func TestRedoDecodeRefusesTrailingBytes(t *testing.T) {
	for _, op := range []*redoOp{
		{runID: "r", create: true, run: []any{"wf", int64(1)}, firstSeq: 1, recs: []encodedRecord{{json: "{}"}}, deadline: 2},
		{runID: "r", firstSeq: 3, recs: []encodedRecord{{json: "{}", completedKey: "k"}}},
	} {
		var e redoEncoder
		if err := op.encode(&e); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeRedoOp(e.b[0], &redoDecoder{b: e.b[1:]}); err != nil {
			t.Fatalf("the op itself: %v", err)
		}
		long := append(append([]byte(nil), e.b[1:]...), 0)
		if _, err := decodeRedoOp(e.b[0], &redoDecoder{b: long}); err == nil {
			t.Fatalf("a record of kind %d with a trailing byte decoded", e.b[0])
		}
	}
}

// TestRedoOpenRefusesAnEmptyRecord guards openRedo's refusal of a record
// without a kind byte (and redoScan's passing on its callback's error):
// the open fails instead of stopping the replay there and dropping the
// records after it.
func TestRedoOpenRefusesAnEmptyRecord(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "empty.sqlite3")
	s, err := New(ctx, Config{Path: path, NoRedoLog: true, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := openRedoFile(path+redoSuffix, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.append(nil); err != nil {
		t.Fatal(err)
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, Config{Path: path, IdleCheckpoint: -1})
	if err == nil {
		_ = c.Close()
		t.Fatal("a redo log holding an empty record opened")
	}
	if !strings.Contains(err.Error(), "empty") {
		t.Fatalf("open: %v, want the empty record named", err)
	}
}

// TestRedoReplayRefusesAnUpdateOfAnotherVersion guards applyOp's check
// that a replayed update found the run at the version it replaced: when
// the database moved on without the log (a Python tool wrote to it before
// our binary replayed the log), the open fails with ErrConflict instead of
// dropping the commit and leaving the database no prefix of the writes.
func TestRedoReplayRefusesAnUpdateOfAnotherVersion(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("v", 32))
	g.commit(r, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	var img string
	g.held(func() {
		g.commit(r, 1, false) // version 1 -> 2, in the redo log only
		img = g.image()
	})
	if err := os.Rename(img+redoSuffix, img+".aside"); err != nil {
		t.Fatal(err)
	}
	other, err := New(ctx, Config{Path: img, NoRedoLog: true, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	o, err := other.RunGet(ctx, r.RunID)
	if err != nil || o.Version != 1 {
		t.Fatalf("the image's database: %+v, %v; want version 1", o, err)
	}
	o.Vars = map[string]any{"i": "elsewhere"}
	if err := other.RunCommit(ctx, &store.CommitParams{Run: o}); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(img+".aside", img+redoSuffix); err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, Config{Path: img, IdleCheckpoint: -1})
	if err == nil {
		got, _ := c.RunGet(ctx, r.RunID)
		_ = c.Close()
		t.Fatalf("replaying an update of version 1 onto version 2 succeeded (run now %+v)", got)
	}
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("open: %v, want ErrConflict", err)
	}
}

// TestRedoStoreWithoutALogReplaysAndRemovesIt guards openRedo with no
// redo log of its own (NoRedoLog, or no cache): it replays a killed
// process's log and removes the file, which it will not keep up to date.
func TestRedoStoreWithoutALogReplaysAndRemovesIt(t *testing.T) {
	for name, cfg := range map[string]Config{"NoRedoLog": {NoRedoLog: true}, "no cache": {CacheBytes: -1}} {
		t.Run(name, func(t *testing.T) {
			g := newRedoRig(t, "NORMAL")
			r := redoRun(strings.Repeat("n", 32))
			var img string
			g.held(func() {
				g.commit(r, 0, true)
				g.commit(r, 1, false)
				img = g.image()
			})
			cfg.Path = img
			c := openImage(t, cfg)
			if c.redo != nil {
				t.Fatal("the store opened without a redo log has one")
			}
			if _, err := os.Stat(img + redoSuffix); !os.IsNotExist(err) {
				t.Fatalf("the replayed redo log is still there: %v", err)
			}
			got, err := c.RunGet(t.Context(), r.RunID)
			if err != nil || got.Version != 2 || fmt.Sprint(got.Vars["i"]) != "1" {
				t.Fatalf("run after the replay: %+v, %v; want version 2, i=1", got, err)
			}
		})
	}
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
	g.s.redo.heldForTest.Store(true)
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
	g.s.redo.heldForTest.Store(true)
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

// TestRedo_FailedLogRefusesAppendsFromTheCache guards appendFromCache's
// refusal once the redo log failed: the store takes no more writes, even
// if the log's file would accept this one (a transient failure).
func TestRedo_FailedLogRefusesAppendsFromTheCache(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("l", 32))
	g.commit(r, 0, true)
	g.s.redo.mu.Lock()
	g.s.redo.failed = errors.New("injected failure")
	g.s.redo.mu.Unlock()
	err := g.s.LedgerAppend(ctx, r.RunID, []*durable.StepRecord{{RunID: r.RunID, StepID: "late"}})
	if err == nil || !strings.Contains(err.Error(), "redo log failed") {
		t.Fatalf("append after the redo log failed: %v, want it refused", err)
	}
	if n, err := g.s.LedgerCount(ctx, r.RunID); err != nil || n != 1 {
		t.Fatalf("ledger after the refused append: %d records, %v; want 1", n, err)
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
	list := func() []store.DueRun {
		t.Helper()
		due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: base.Add(time.Minute)})
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
