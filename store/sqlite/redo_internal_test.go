package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// redoRig is a store with a redo log whose background applying the test
// can hold back, and the crash images it takes.
type redoRig struct {
	t    *testing.T
	s    *Store
	path string
}

func newRedoRig(t *testing.T, sync string) *redoRig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "owned.sqlite3")
	s, err := New(t.Context(), Config{Path: path, Synchronous: sync, CheckpointPages: 40, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if s.redo == nil {
		t.Fatal("an owned store with a cache has no redo log")
	}
	return &redoRig{t: t, s: s, path: path}
}

// held runs fn while the writer turn is held, so that commits made from
// the cache stay in the redo log only.
func (g *redoRig) held(fn func()) {
	g.s.wsem <- struct{}{}
	defer func() { <-g.s.wsem }()
	fn()
}

// hold stops the background applier: commits made from the cache stay
// queued until the test releases it (heldForTest false) or settles. A
// pass that read the flag before it was set may still be applying: taking
// the writer turn once waits for it, so that the queue is the test's own.
func (g *redoRig) hold() {
	g.s.redo.heldForTest.Store(true)
	g.held(func() {})
}

// image copies the database, its WAL and its redo log as a process killed
// now leaves them (the caller holds the writer turn), and returns the
// copy's path.
func (g *redoRig) image() string {
	g.t.Helper()
	g.s.redo.mu.Lock()
	defer g.s.redo.mu.Unlock()
	dst := filepath.Join(g.t.TempDir(), "copy.sqlite3")
	for _, suffix := range []string{"", "-wal", redoSuffix} {
		copyFile(g.t, g.path+suffix, dst+suffix)
	}
	return dst
}

func (g *redoRig) pending() int {
	g.s.redo.mu.Lock()
	defer g.s.redo.mu.Unlock()
	return len(g.s.redo.pending)
}

// redoRun is a new running run of workflow wf.
func redoRun(id string) *durable.RunState {
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning}
}

// commitSteps commits r with status and one completed record per step id
// (a create under a random id when create).
func commitSteps(t *testing.T, s *Store, r *durable.RunState, status durable.RunStatus, create bool, steps ...string) {
	t.Helper()
	r.Status = status
	var recs []*durable.StepRecord
	for _, id := range steps {
		recs = append(recs, &durable.StepRecord{RunID: r.RunID, StepID: id, Status: durable.StepCompleted})
	}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: create, RandomID: create, Records: recs}); err != nil {
		t.Fatalf("commit of %v: %v", steps, err)
	}
}

// ledgerSteps lists the run's ledger as "seq:step_id " pairs.
func ledgerSteps(t *testing.T, s *Store, runID string) string {
	t.Helper()
	recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, rec := range recs {
		fmt.Fprintf(&b, "%d:%s ", rec.Seq, rec.StepID)
	}
	return b.String()
}

// commit saves run id with vars i, created at random when create; the
// record's step id names i.
func (g *redoRig) commit(r *durable.RunState, i int, create bool) {
	g.t.Helper()
	r.Vars = map[string]any{"i": i, "pad": strings.Repeat("p", 50*(i%9))}
	rec := &durable.StepRecord{RunID: r.RunID, StepID: fmt.Sprint("s", i), Status: durable.StepCompleted, Result: i}
	err := g.s.RunCommit(g.t.Context(), &store.CommitParams{Run: r, Create: create, RandomID: create,
		Records: []*durable.StepRecord{rec}})
	if err != nil {
		g.t.Fatalf("commit %d: %v", i, err)
	}
}

// fillPastRewind commits r 80 times, each with a 64 KB record appended,
// so that the redo log passes redoRewindBytes (5 MB); settle applies the
// queue after each round.
func (g *redoRig) fillPastRewind(r *durable.RunState, settle bool) {
	g.t.Helper()
	ctx := g.t.Context()
	big := strings.Repeat("x", 64<<10)
	for i := range 80 {
		g.commit(r, i, i == 0)
		if err := g.s.LedgerAppend(ctx, r.RunID, []*durable.StepRecord{{RunID: r.RunID, StepID: "big", Result: big}}); err != nil {
			g.t.Fatal(err)
		}
		if settle {
			if err := g.s.Settle(ctx); err != nil {
				g.t.Fatal(err)
			}
		}
	}
}

// logPosition returns the redo log's first LSN since its last rewind and
// its size.
func (g *redoRig) logPosition() (base, off int64) {
	g.s.redo.mu.Lock()
	defer g.s.redo.mu.Unlock()
	return g.s.redo.file.base, g.s.redo.file.off
}

// openImage opens a crash image (no idle checkpoints), closed when the
// test ends.
func openImage(t *testing.T, cfg Config) *Store {
	t.Helper()
	cfg.IdleCheckpoint = -1
	c, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("opening the image %s: %v", cfg.Path, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// checkImage opens a crash image with cfg and checks that run r is there
// as committed last (step s<i> its last record) and that the commands
// number wantCmds.
func checkImage(t *testing.T, path string, cfg Config, r *durable.RunState, i int, wantCmds int64) {
	t.Helper()
	ctx := t.Context()
	cfg.Path, cfg.IdleCheckpoint = path, -1
	c, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("opening the image of commit %d: %v", i, err)
	}
	defer c.Close()
	got, err := c.RunGet(ctx, r.RunID)
	if err != nil {
		t.Fatalf("image of commit %d: %v", i, err)
	}
	if got.Version != r.Version || fmt.Sprint(got.Vars["i"]) != fmt.Sprint(i) {
		t.Fatalf("image of commit %d: version %d, i=%v; want version %d, i=%d", i, got.Version, got.Vars["i"], r.Version, i)
	}
	recs, err := c.LedgerList(ctx, &store.LedgerListParams{RunID: r.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(recs); n != int(r.Version) || recs[n-1].StepID != fmt.Sprint("s", i) || recs[n-1].Seq != int64(n) {
		t.Fatalf("image of commit %d: ledger of %d records ending %+v, want %d ending s%d", i, n, recs[n-1], r.Version, i)
	}
	if n, err := c.CommandLastSeq(ctx); err != nil || n != wantCmds {
		t.Fatalf("image of commit %d: %d commands (%v), want %d", i, n, err, wantCmds)
	}
}

// TestRedo_CrashImagesHoldEveryCommit: a commit made from the cache is in
// the redo log when RunCommit returns, before it reaches the database; a
// copy of the files taken then (what a process killed at that moment
// leaves) opens with the commit, whether the copy is opened with a redo
// log of its own or without one (replayed, then removed). Writes that go
// through the database (a command append) interleave in order.
func TestRedo_CrashImagesHoldEveryCommit(t *testing.T) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) {
			g := newRedoRig(t, sync)
			runs := make([]*durable.RunState, 3)
			var cmds int64
			heldBack := 0
			for i := range 30 {
				k := i % len(runs)
				create := runs[k] == nil
				if create {
					runs[k] = redoRun(fmt.Sprintf("%032x", i+1))
				}
				r := runs[k]
				var img string
				g.held(func() {
					g.commit(r, i, create)
					if g.pending() > 0 {
						heldBack++
					}
					img = g.image()
				})
				checkImage(t, img, Config{}, r, i, cmds)
				checkImage(t, img, Config{CacheBytes: -1}, r, i, cmds)
				if _, err := os.Stat(img + redoSuffix); !os.IsNotExist(err) {
					t.Fatalf("a store without a redo log left the replayed one: %v", err)
				}
				if i%7 == 3 {
					if _, err := g.s.CommandAppend(t.Context(), &durable.CommandRecord{RunID: r.RunID, Type: "pause"}); err != nil {
						t.Fatal(err)
					}
					cmds++
				}
			}
			if heldBack < 25 {
				t.Fatalf("only %d of 30 commits were held back in the redo log: the images tested little", heldBack)
			}
		})
	}
}

// TestRedo_ReplaysOntoAnOlderDatabase: a power cut may lose the
// database's last transactions while the redo log keeps its records (or
// the reverse). An image made of the database as it was several writes
// ago and the redo log as it is now opens with every write, those that
// went through the database (recorded statements: commands, cursors,
// claims, deletes) included.
func TestRedo_ReplaysOntoAnOlderDatabase(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	a := redoRun(strings.Repeat("a", 32))
	b := redoRun(strings.Repeat("b", 32))
	g.commit(a, 0, true)
	g.commit(b, 1, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	var old string
	g.held(func() { old = g.image() })

	g.commit(a, 2, false)
	if _, err := g.s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: a.RunID, Type: "resume"}); err != nil {
		t.Fatal(err)
	}
	if err := g.s.CursorSave(ctx, "runner", 1); err != nil {
		t.Fatal(err)
	}
	if err := g.s.RunClaim(ctx, &store.RunClaimParams{RunID: a.RunID, Owner: "me", TTL: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.s.RunDelete(ctx, b.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := g.s.LedgerDelete(ctx, b.RunID); err != nil {
		t.Fatal(err)
	}
	g.commit(a, 3, false)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	copyFile(t, g.path+redoSuffix, old+redoSuffix)

	c := openImage(t, Config{Path: old})
	got, err := c.RunGet(ctx, a.RunID)
	if err != nil || got.Version != 3 || fmt.Sprint(got.Vars["i"]) != "3" {
		t.Fatalf("run a: %+v, %v; want version 3, i=3", got, err)
	}
	if _, err := c.RunGet(ctx, b.RunID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted run b: %v, want not found", err)
	}
	if n, err := c.LedgerCount(ctx, b.RunID); err != nil || n != 0 {
		t.Fatalf("deleted ledger of b: %d records, %v", n, err)
	}
	if cmds, _, err := c.CommandListAfter(ctx, 0, 10); err != nil || len(cmds) != 1 || cmds[0].CommandID != "c1" {
		t.Fatalf("commands: %v, %v", cmds, err)
	}
	if cur, err := c.CursorLoad(ctx, "runner"); err != nil || cur != 1 {
		t.Fatalf("cursor %d, %v; want 1", cur, err)
	}
	err = c.RunClaim(ctx, &store.RunClaimParams{RunID: a.RunID, Owner: "other", TTL: 1})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim by another owner: %v, want the replayed claim to hold", err)
	}
}

// TestRedo_TornTailIsDropped: a redo log whose last record was cut short
// or damaged (a power cut mid-write) opens with the records before it.
func TestRedo_TornTailIsDropped(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("c", 32))
	var img string
	var size int64
	g.held(func() {
		g.commit(r, 0, true)
		g.commit(r, 1, false)
		g.s.redo.mu.Lock()
		size = g.s.redo.file.off
		g.s.redo.mu.Unlock()
		g.commit(r, 2, false)
		img = g.image()
	})
	whole, err := os.ReadFile(img + redoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	r.Version = 2 // what the images must hold: commit 1, not 2
	for name, mangle := range map[string]func([]byte) []byte{
		"cut":     func(b []byte) []byte { return b[:size+20] },
		"flipped": func(b []byte) []byte { b[size+redoRecordHead+3] ^= 0x40; return b },
	} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "torn.sqlite3")
			for _, suffix := range []string{"", "-wal"} {
				copyFile(t, img+suffix, dst+suffix)
			}
			if err := os.WriteFile(dst+redoSuffix, mangle(append([]byte(nil), whole...)), 0o644); err != nil {
				t.Fatal(err)
			}
			checkImage(t, dst, Config{}, r, 1, 0)
		})
	}
}

// TestRedo_RewoundLogReplaysOnlyItsOwnRecords: once the database holds
// the whole redo log it is rewound; the records of the round before stay
// in the file behind the new ones, and a replay must stop where the new
// ones end.
func TestRedo_RewoundLogReplaysOnlyItsOwnRecords(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("d", 32))
	g.fillPastRewind(r, true)
	// The settles leave the rewind (and the WAL's sync) to the goroutine.
	var base, off int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if base, off = g.logPosition(); base > 1 && off <= redoRewindBytes || time.Now().After(deadline) {
			break
		}
	}
	if base <= 1 || off > redoRewindBytes {
		t.Fatalf("redo log not rewound: first LSN %d, %d bytes", base, off)
	}
	var img string
	g.held(func() {
		g.commit(r, 80, false)
		img = g.image()
	})
	c := openImage(t, Config{Path: img, CacheBytes: -1})
	got, err := c.RunGet(ctx, r.RunID)
	if err != nil || got.Version != 81 || fmt.Sprint(got.Vars["i"]) != "80" {
		t.Fatalf("image after a rewind: %+v, %v; want version 81, i=80", got, err)
	}
	n, err := c.LedgerCount(ctx, r.RunID)
	if err != nil || n != 161 {
		t.Fatalf("image after a rewind: %d records, %v; want 161 (a commit and an append per round)", n, err)
	}
}

// TestRedo_SettleLeavesTheRewindToTheGoroutine: a settle (or any drain in
// the foreground) applies the queue but does not sync the WAL to rewind
// the log, which may take milliseconds: the background goroutine does,
// once woken.
func TestRedo_SettleLeavesTheRewindToTheGoroutine(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	g.hold()
	r := redoRun(strings.Repeat("e", 32))
	g.fillPastRewind(r, true)
	if base, off := g.logPosition(); base > 1 || off <= redoRewindBytes {
		t.Fatalf("after the settles: first LSN %d, %d bytes; want the log unrewound, past %d bytes", base, off, redoRewindBytes)
	}
	g.s.redo.heldForTest.Store(false)
	g.s.redo.kickApply()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		base, off := g.logPosition()
		if base > 1 && off <= redoRewindBytes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the goroutine did not rewind the log: first LSN %d, %d bytes", base, off)
		}
	}
}

// TestRedo_RewindSkipsAWriteDuringTheSync: the WAL is synced before a
// rewind without the writer turn; a write that reaches the database during
// the sync may not be covered by it, so that attempt leaves the log whole
// and the next one rewinds it.
func TestRedo_RewindSkipsAWriteDuringTheSync(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	g.hold() // the test calls rewindWhenDue itself
	r := redoRun(strings.Repeat("f", 32))
	g.fillPastRewind(r, false)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	base := func() int64 { b, _ := g.logPosition(); return b }
	g.s.redo.afterRewindSyncForTest = func() {
		g.commit(r, 80, false)
		if err := g.s.Settle(ctx); err != nil {
			t.Error(err)
		}
	}
	g.s.rewindWhenDue()
	if b := base(); b != 1 {
		t.Fatalf("rewound (first LSN %d) although a write reached the database during the sync", b)
	}
	g.s.redo.afterRewindSyncForTest = nil
	g.s.rewindWhenDue()
	if b := base(); b <= 1 {
		t.Fatal("not rewound once nothing was written during the sync")
	}
	if got, err := g.s.RunGet(ctx, r.RunID); err != nil || got.Version != 81 {
		t.Fatalf("after the rewind: %+v, %v; want version 81", got, err)
	}
}

// TestRedo_CloseRemovesTheLog: a clean close applies everything and
// removes the redo log; reopening finds every commit.
func TestRedo_CloseRemovesTheLog(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("e", 32))
	g.held(func() {
		g.commit(r, 0, true)
		g.commit(r, 1, false)
	})
	if err := g.s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.path + redoSuffix); !os.IsNotExist(err) {
		t.Fatalf("redo log after a clean close: %v", err)
	}
	checkImage(t, g.path, Config{NoRedoLog: true}, r, 1, 0)
}

// TestRedo_DueListSeesTheQueue: RunListDue answers without applying the
// queue, from the database for runs the queue leaves alone and from their
// last queued commit for the others; it agrees with the database's answer
// once the queue is applied.
func TestRedo_DueListSeesTheQueue(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wait := func(r *durable.RunState, until time.Time) {
		r.Status = durable.RunWaiting
		r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.Time{Time: until}}
	}
	runs := map[string]*durable.RunState{}
	for _, id := range []string{"a", "b", "c", "d"} {
		runs[id] = redoRun(strings.Repeat(id, 32))
	}
	// In the database: b and c due, at base+2s and base+3s.
	wait(runs["b"], base.Add(2*time.Second))
	wait(runs["c"], base.Add(3*time.Second))
	g.commit(runs["b"], 0, true)
	g.commit(runs["c"], 1, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	// Queued only (the goroutine stopped): a due at base+1s, b completed,
	// c moved past now, d due at base+4s.
	wait(runs["a"], base.Add(time.Second))
	runs["b"].Status, runs["b"].Waiting = durable.RunCompleted, nil
	wait(runs["c"], base.Add(time.Hour))
	wait(runs["d"], base.Add(4*time.Second))
	g.hold()
	g.commit(runs["a"], 2, true)
	g.commit(runs["b"], 3, false)
	g.commit(runs["c"], 4, false)
	g.commit(runs["d"], 5, true)
	list := func(limit int) string {
		due, err := g.s.RunListDue(ctx, &store.RunListDueParams{Now: base.Add(10 * time.Second), Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range due {
			ids = append(ids, d.RunID[:1])
		}
		return strings.Join(ids, ",")
	}
	got, got1 := list(10), list(1)
	if n := g.pending(); n != 4 {
		t.Fatalf("%d commits queued after listing, want 4", n)
	}
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if want := list(10); got != "a,d" || want != got || got1 != "a" {
		t.Fatalf("due over the queue %q (limit 1: %q), after applying it %q; want a,d and a", got, got1, want)
	}
}

// TestRedo_CacheMissReadsWhatTheQueueHolds: a run whose state left the
// cache while a commit of it was queued is read as committed (the queue
// is applied first); a run with nothing queued is read from the database
// without applying the queue.
func TestRedo_CacheMissReadsWhatTheQueueHolds(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	a := redoRun(strings.Repeat("a", 32))
	b := redoRun(strings.Repeat("b", 32))
	g.commit(b, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	g.hold()
	g.commit(a, 1, true)
	g.commit(a, 2, false)
	forget := func(id string) {
		g.s.redo.mu.Lock()
		g.s.cache.dropState(id)
		g.s.cache.ledgerUnknown(id)
		g.s.redo.mu.Unlock()
	}
	forget(b.RunID)
	if got, err := g.s.RunGet(ctx, b.RunID); err != nil || fmt.Sprint(got.Vars["i"]) != "0" {
		t.Fatalf("run b: %+v, %v", got, err)
	}
	if n := g.pending(); n != 2 {
		t.Fatalf("reading another run applied the queue: %d commits left, want 2", n)
	}
	forget(a.RunID)
	got, err := g.s.RunGet(ctx, a.RunID)
	if err != nil || got.Version != 2 || fmt.Sprint(got.Vars["i"]) != "2" {
		t.Fatalf("run a after its state left the cache: %+v, %v; want version 2, i=2", got, err)
	}
	if n := g.pending(); n != 0 {
		t.Fatalf("%d commits still queued after reading a run they change", n)
	}
	recs, err := g.s.LedgerList(ctx, &store.LedgerListParams{RunID: a.RunID})
	if err != nil || len(recs) != 2 {
		t.Fatalf("ledger of a: %d records, %v; want 2", len(recs), err)
	}
}

// TestRedo_FailedLogRefusesWritesAndLosesNothing: once a write to the
// redo log fails, the store refuses writes (a commit it acknowledged
// later could be missing from the log), still serves reads, and a reopen
// finds every commit acknowledged before the failure.
func TestRedo_FailedLogRefusesWritesAndLosesNothing(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("f", 32))
	g.hold() // acknowledged commits stay in the log only
	g.commit(r, 0, true)
	g.commit(r, 1, false)
	g.s.redo.mu.Lock()
	_ = g.s.redo.file.f.Close() // the next write to the log fails
	g.s.redo.mu.Unlock()

	stale := *r
	stale.Vars = map[string]any{"i": 2}
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: &stale}); err == nil {
		t.Fatal("a commit whose redo record could not be written succeeded")
	}
	if _, err := g.s.CommandAppend(ctx, &durable.CommandRecord{RunID: r.RunID, Type: "pause"}); err == nil ||
		!strings.Contains(err.Error(), "redo log failed") {
		t.Fatalf("a write after the failure: %v, want it refused", err)
	}
	if got, err := g.s.RunGet(ctx, r.RunID); err != nil || got.Version != 2 {
		t.Fatalf("read after the failure: %+v, %v", got, err)
	}
	if err := g.s.Close(); err == nil {
		t.Fatal("Close reported no error for a failed redo log")
	}
	checkImage(t, g.path, Config{}, r, 1, 0)
}

// TestRedo_CreateUnderAChosenIDAsksTheDatabase: a create under an id the
// caller chose is queued without applying the queue once the database
// says the run does not exist; an existing run, in the database or only
// in the queue, is refused as such; a run whose ledger exists without it
// continues that ledger's seqs.
func TestRedo_CreateUnderAChosenIDAsksTheDatabase(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	create := func(id string, rec bool) error {
		r := redoRun(id)
		p := &store.CommitParams{Run: r, Create: true}
		if rec {
			p.Records = []*durable.StepRecord{{RunID: id, StepID: "first", Status: durable.StepCompleted}}
		}
		return g.s.RunCommit(ctx, p)
	}
	if err := create("in-db", false); err != nil {
		t.Fatal(err)
	}
	if err := g.s.LedgerAppend(ctx, "orphan", []*durable.StepRecord{{RunID: "orphan", StepID: "old"}}); err != nil {
		t.Fatal(err)
	}
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	g.s.redo.mu.Lock()
	g.s.cache.dropState("in-db")
	g.s.cache.ledgerUnknown("in-db")
	g.s.cache.ledgerUnknown("orphan")
	g.s.redo.mu.Unlock()

	g.hold()
	if err := create("queued", true); err != nil {
		t.Fatal(err)
	}
	if n := g.pending(); n != 1 {
		t.Fatalf("%d commits queued after a create under a chosen id, want 1 (not applied)", n)
	}
	for _, id := range []string{"in-db", "queued"} {
		if err := create(id, false); !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("second create of %s: %v, want ErrAlreadyExists", id, err)
		}
	}
	if n := g.pending(); n != 1 {
		t.Fatalf("%d commits queued after the refused creates, want 1", n)
	}
	if err := create("orphan", true); err != nil {
		t.Fatal(err)
	}
	recs, err := g.s.LedgerList(ctx, &store.LedgerListParams{RunID: "orphan"})
	if err != nil || len(recs) != 2 || recs[1].StepID != "first" || recs[1].Seq != 2 {
		t.Fatalf("ledger of a run created after its ledger: %+v, %v; want old then first at seq 2", recs, err)
	}
	got, err := g.s.RunGet(ctx, "queued")
	if err != nil || got.Version != 1 {
		t.Fatalf("queued run: %+v, %v", got, err)
	}
}

// TestRedo_ReadDoesNotKeepRowsACommitOvertook: a read that missed the
// cache queries the database without the redo log's lock, so a commit of
// the same run may go into the log meanwhile; what the read found is then
// older than what the cache holds, and must not be kept (a stale whole
// ledger would also set the run's last seq back, and the next commit
// would reuse a seq).
func TestRedo_ReadDoesNotKeepRowsACommitOvertook(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("k", 32))
	commit := func(status durable.RunStatus, create bool, steps ...string) {
		commitSteps(t, g.s, r, status, create, steps...)
	}
	list := func() string { return ledgerSteps(t, g.s, r.RunID) }
	commit(durable.RunRunning, true, "a")
	commit(durable.RunWaiting, false, "b", "c") // the cache lets go of the records
	overtaken := false
	g.s.redo.beforeKeepForTest = func() {
		if !overtaken {
			overtaken = true
			commit(durable.RunCompleted, false, "d") // from the cache, into the redo log
		}
	}
	if got := list(); got != "1:a 2:b 3:c " {
		t.Fatalf("the read overtaken by a commit returned %q, want the ledger as it began", got)
	}
	g.s.redo.beforeKeepForTest = nil
	if !overtaken {
		t.Fatal("the read kept its rows without passing the test hook")
	}
	if got, want := list(), "1:a 2:b 3:c 4:d "; got != want {
		t.Fatalf("ledger after the overtaken read = %q, want %q", got, want)
	}
	commit(durable.RunCompleted, false, "e")
	if got, want := list(), "1:a 2:b 3:c 4:d 5:e "; got != want {
		t.Fatalf("ledger after one more commit = %q, want %q", got, want)
	}
}

// TestRedo_ConcurrentReadsAndCommits: writers take runs through waits and
// completions from the cache while readers list the ledger of the run each
// writer is on, which misses the cache whenever that run waits: a commit
// then often lands while a read queries. Every ledger read is a prefix of
// the records committed, seqs 1..n in order, and every ledger ends whole,
// in the cache and in the database after a reopen. Without reading.keep's
// check, a read put a stale ledger in the cache and a later commit reused
// a seq (the database refused it).
func TestRedo_ConcurrentReadsAndCommits(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	const writers, runsEach, readers = 3, 60, 3
	var current [writers]atomic.Pointer[string] // the run each writer is on
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runsEach {
				r := redoRun(fmt.Sprintf("%031d%d", i, w))
				for step, status := range []durable.RunStatus{durable.RunRunning, durable.RunWaiting, durable.RunRunning, durable.RunWaiting, durable.RunCompleted} {
					r.Status = status
					recs := []*durable.StepRecord{{RunID: r.RunID, StepID: fmt.Sprint("s", step), Status: durable.StepCompleted}}
					if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: step == 0, RandomID: step == 0, Records: recs}); err != nil {
						errs <- fmt.Errorf("run %s step %d: %w", r.RunID, step, err)
						return
					}
					if step == 0 {
						current[w].Store(&r.RunID)
					}
					time.Sleep(50 * time.Microsecond) // let the readers at the waiting run
				}
			}
		}()
	}
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	for rd := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := current[rd%writers].Load()
				if id == nil {
					continue
				}
				recs, err := g.s.LedgerList(ctx, &store.LedgerListParams{RunID: *id})
				if err != nil {
					errs <- err
					return
				}
				for i, rec := range recs {
					if rec.Seq != int64(i+1) || rec.StepID != fmt.Sprint("s", i) {
						errs <- fmt.Errorf("ledger of %s read mid-way: record %d is seq %d %s", *id, i, rec.Seq, rec.StepID)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check := func(s *Store, when string) {
		t.Helper()
		for w := range writers {
			for i := range runsEach {
				id := fmt.Sprintf("%031d%d", i, w)
				recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
				if err != nil || len(recs) != 5 {
					t.Fatalf("%s: ledger of %s: %d records, %v; want 5", when, id, len(recs), err)
				}
				for j, rec := range recs {
					if rec.Seq != int64(j+1) || rec.StepID != fmt.Sprint("s", j) {
						t.Fatalf("%s: ledger of %s: record %d is seq %d %s", when, id, j, rec.Seq, rec.StepID)
					}
				}
				if got, err := s.RunGet(ctx, id); err != nil || got.Status != durable.RunCompleted || got.Version != 5 {
					t.Fatalf("%s: run %s: %+v, %v; want completed at version 5", when, id, got, err)
				}
			}
		}
	}
	check(g.s, "open")
	if err := g.s.Close(); err != nil {
		t.Fatal(err)
	}
	c := openImage(t, Config{Path: g.path, CacheBytes: -1})
	check(c, "reopened without a cache")
}

// TestRedo_SharedOpenReplayKeepsLedgerHeads: a shared store keeps
// ledger_heads current, since a Python process open on the database takes
// its next seq from there. Opening shared a database whose owned process
// was killed with records still in its redo log replays them after the
// open's back-fill of ledger_heads, which then lagged: Python would
// allocate a seq the ledger already holds.
func TestRedo_SharedOpenReplayKeepsLedgerHeads(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	r := redoRun("heads")
	var img string
	g.held(func() {
		for i := range 3 {
			g.commit(r, i, i == 0)
		}
		img = g.image()
	})
	c := openImage(t, Config{Path: img, Shared: true})
	var head int64
	if err := c.wconn.QueryRowContext(t.Context(), `SELECT COALESCE((SELECT last_seq FROM ledger_heads WHERE run_id = ?), 0)`, r.RunID).Scan(&head); err != nil {
		t.Fatal(err)
	}
	if head != 3 {
		t.Fatalf("after the shared open replayed 3 records, ledger_heads says %d for the run", head)
	}
}

// TestRedo_ReplayRecordsWhatItApplied: the replay at open records the LSN
// of the last record it applied (redo_applied) in the transaction that
// applies them. A process killed after that transaction and before the
// log is rewound leaves the database holding the records and the log
// still holding them too: the next open must skip them, not apply them a
// second time (which fails the open on a version conflict).
func TestRedo_ReplayRecordsWhatItApplied(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	g.hold()
	r := redoRun(strings.Repeat("f", 32))
	for i := range 3 {
		g.commit(r, i, i == 0)
	}
	if n := g.pending(); n != 3 {
		t.Fatalf("%d commits queued, want 3", n)
	}
	var img string
	g.held(func() { img = g.image() })
	// The log as the dead process left it, before the replay rewinds it.
	log := readFile(t, img+redoSuffix)

	c := openImage(t, Config{Path: img}) // replays the three commits
	dst := filepath.Join(t.TempDir(), "again.sqlite3")
	c.wsem <- struct{}{}
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, img+suffix, dst+suffix)
	}
	<-c.wsem
	writeFile(t, dst+redoSuffix, log) // killed before the rewind
	checkImage(t, dst, Config{}, r, 2, 0)
}

// TestRedo_WALSyncedBeforeRewindUnlessOff: the redo log is rewound only
// once the WAL holding what it applied is synced, whatever the
// synchronous setting (with NORMAL too: a power cut must not lose the
// database's last transactions together with the records of the log that
// rebuilt them), except OFF, which never syncs.
func TestRedo_WALSyncedBeforeRewindUnlessOff(t *testing.T) {
	for sync, want := range map[string]bool{"NORMAL": true, "FULL": true, "OFF": false} {
		g := newRedoRig(t, sync)
		if g.s.redo.syncWAL != want || g.s.redo.walPath != g.path+"-wal" {
			t.Errorf("%s: syncWAL %v on %s, want %v on the database's WAL", sync, g.s.redo.syncWAL, g.s.redo.walPath, want)
		}
	}
}

// TestRedo_RewindWaitsForTheQueueAndTheWALSync drives rewindWhenDue by
// hand on a log past redoRewindBytes: it must not rewind while commits are
// queued (the log is all they have), and neither it nor rewindNow (the
// forced rewind) may rewind when the WAL's sync failed (the database's
// copy may not be durable), and once it does rewind, the next
// record takes an LSN above the one the database holds, so that a crash
// image replays it.
func TestRedo_RewindWaitsForTheQueueAndTheWALSync(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	g.hold()
	r := redoRun(strings.Repeat("g", 32))
	g.fillPastRewind(r, false)
	if g.pending() == 0 {
		t.Fatal("nothing queued")
	}
	g.s.rewindWhenDue()
	if base, off := g.logPosition(); base != 1 || off <= redoRewindBytes {
		t.Fatalf("rewound with %d commits queued: first LSN %d, %d bytes", g.pending(), base, off)
	}

	notADir := filepath.Join(t.TempDir(), "file")
	writeFile(t, notADir, nil)
	g.s.redo.mu.Lock()
	walPath := g.s.redo.walPath
	g.s.redo.walPath = filepath.Join(notADir, "wal") // its sync fails (ENOTDIR)
	g.s.redo.mu.Unlock()
	g.s.rewindNow() // applies the queue, then fails to sync
	if n := g.pending(); n != 0 {
		t.Fatalf("rewindNow left %d commits queued", n)
	}
	for name, rewind := range map[string]func(){"rewindNow": g.s.rewindNow, "rewindWhenDue": g.s.rewindWhenDue} {
		rewind()
		if base, off := g.logPosition(); base != 1 || off <= redoRewindBytes {
			t.Fatalf("%s rewound although the WAL's sync failed: first LSN %d, %d bytes", name, base, off)
		}
	}
	g.s.redo.mu.Lock()
	g.s.redo.walPath = walPath
	g.s.redo.mu.Unlock()
	g.s.rewindWhenDue()
	if base, off := g.logPosition(); base <= 1 || off > redoRewindBytes {
		t.Fatalf("not rewound once due: first LSN %d, %d bytes", base, off)
	}

	var img string
	g.held(func() {
		g.commit(r, 80, false)
		img = g.image()
	})
	c := openImage(t, Config{Path: img, CacheBytes: -1})
	if got, err := c.RunGet(ctx, r.RunID); err != nil || got.Version != 81 || fmt.Sprint(got.Vars["i"]) != "80" {
		t.Fatalf("image of the first commit after the rewind: %+v, %v; want version 81, i=80", got, err)
	}
}

// TestRedo_AppliedQueueLeavesNoRunCounts: queuedRuns counts the queued
// commits of each run; applying the queue takes the runs it applied out
// of it, so that it does not grow with every run the store ever
// committed.
func TestRedo_AppliedQueueLeavesNoRunCounts(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	g.hold()
	for i := range 5 {
		r := redoRun(fmt.Sprintf("%032x", i+1))
		g.commit(r, 0, true)
		g.commit(r, 1, false)
	}
	if err := g.s.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	g.s.redo.mu.Lock()
	n := len(g.s.redo.queuedRuns)
	g.s.redo.mu.Unlock()
	if n != 0 {
		t.Fatalf("queuedRuns holds %d runs after the queue was applied, want none", n)
	}
}

// TestRedo_CloseKeepsTheLogWhenTheWALSyncFails: Close removes the redo
// log only once the WAL holding what it applied is synced; when that sync
// fails, Close says so and leaves the log for the next open to replay.
func TestRedo_CloseKeepsTheLogWhenTheWALSyncFails(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("h", 32))
	g.commit(r, 0, true)
	notADir := filepath.Join(t.TempDir(), "file")
	writeFile(t, notADir, nil)
	g.s.redo.mu.Lock()
	g.s.redo.walPath = filepath.Join(notADir, "wal") // its sync fails (ENOTDIR)
	g.s.redo.mu.Unlock()
	if err := g.s.Close(); err == nil {
		t.Fatal("Close succeeded although the WAL could not be synced")
	}
	if _, err := os.Stat(g.path + redoSuffix); err != nil {
		t.Fatalf("the redo log after a Close whose WAL sync failed: %v, want it kept", err)
	}
	checkImage(t, g.path, Config{}, r, 0, 0)
}
