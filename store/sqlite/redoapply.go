package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A store that owns its database (and has its cache) records every write
// in a redo log (redo.go) and lets most commits return before they reach
// the database file:
//
//   - A commit of a run the cache knows (its version and last ledger seq),
//     or of a new run (under a random id at once, under a chosen one after
//     asking the database whether it exists), is checked against the cache,
//     written to the redo log (one write call; with synchronous=FULL, one
//     fdatasync), applied to the cache, and queued. A goroutine applies the
//     queue to the database in transactions of many commits, beside the
//     caller rather than in its way. Such a commit is as durable when it
//     returns as a SQLite commit of the same synchronous setting: in the
//     page cache (NORMAL), on disk (FULL).
//   - Every other write, and every read the cache cannot answer, first
//     applies the queue, then runs on the database as before; the
//     writes' statements are recorded in the redo log too, in the same
//     order. Due lists read the database and the queue together instead
//     (listDueOverQueue).
//   - The database records the LSN of the last record it holds
//     (redo_applied), in the transaction that applies it. Opening a
//     database replays the records above it, whatever killed the process
//     that wrote them, so the database ends as a prefix of the writes in
//     their order, as SQLite's own WAL promises.
//   - Once the database holds every record and its WAL is synced, the redo
//     log is rewound, so the file stays small and in the page cache.
//
// redo.mu guards the cache, the queue and the file. Lock order: the
// writer turn (Store.wsem) before redo.mu. The goroutine holds the writer
// turn while it applies, and redo.mu only to take the queue and to settle
// it.
type redoLog struct {
	mu      sync.Mutex
	file    *redoFile
	pending []*redoOp // in the redo log, not yet in the database, in LSN order
	// queuedRuns counts the queued commits of each run: a read of a run
	// with none needs the database only, not the queue applied first.
	queuedRuns map[string]int
	applied    int64 // the LSN the database holds up to
	// failed is set when writing the redo log failed: the log no longer
	// has every write, so the store refuses writes from then on.
	failed error
	closed bool

	enc redoEncoder // the payload of the commit being queued

	// heldForTest stops the goroutine from applying (the writer's other
	// paths still do).
	heldForTest atomic.Bool
	// beforeKeepForTest runs in a read between its query and keeping what
	// it found (reading.keep), without redo.mu.
	beforeKeepForTest func()
	// afterRewindSyncForTest runs in rewindWhenDue between the WAL's sync
	// and taking the writer turn.
	afterRewindSyncForTest func()
	// waitingForTest, when set, runs in the background goroutine each time
	// it is about to wait for a wake-up (kickApply), holding neither the
	// writer turn nor redo.mu: a test can park the goroutine there, so
	// that no wake-up is taken while it looks for one.
	waitingForTest atomic.Pointer[func()]
	// walSyncedForTest runs when a write through the database whose redo
	// record failed was made durable by a sync of the WAL instead.
	walSyncedForTest func()

	walPath string // the database's WAL, synced before a rewind (unless synchronous=OFF)
	syncWAL bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// redoRewindBytes is the size past which the redo log is rewound once the
// database holds all of it.
const redoRewindBytes = 4 << 20

// redoForceRewindBytes is the size past which the redo log is rewound even
// though commits keep the queue from emptying (rewindNow): steady commits
// would otherwise grow it without end.
const redoForceRewindBytes = 4 * redoRewindBytes

// redoMaxPending bounds the queue: past it a commit applies the queue
// itself (the slow path) instead of adding to it.
const redoMaxPending = 2048

// redoOp is a commit or append made from the cache, as recorded.
type redoOp struct {
	lsn      int64
	runID    string
	create   bool
	run      []any // runArgs, then the insert's or update's tail; nil for a LedgerAppend
	firstSeq int64
	recs     []encodedRecord
	// deadline: 0 leaves wait_index alone, 1 upserts wait (its args),
	// 2 deletes the run's row.
	deadline byte
	wait     []any
}

func (op *redoOp) encode(e *redoEncoder) error {
	kind := redoCommit
	if op.run == nil {
		kind = redoAppend
	}
	e.b = append(e.b, kind)
	e.str(op.runID)
	if op.run != nil {
		e.b = append(e.b, boolByte(op.create))
		if err := e.values(op.run); err != nil {
			return err
		}
	}
	e.varint(op.firstSeq)
	e.uvarint(uint64(len(op.recs)))
	for _, r := range op.recs {
		e.str(r.json)
		if err := e.value(r.completedKey); err != nil {
			return err
		}
	}
	e.b = append(e.b, op.deadline)
	if op.deadline == 1 {
		return e.values(op.wait)
	}
	return nil
}

func decodeRedoOp(kind byte, d *redoDecoder) (*redoOp, error) {
	op := &redoOp{runID: d.str()}
	if kind == redoCommit {
		switch d.byte() {
		case 0:
		case 1:
			op.create = true
		default:
			return nil, errors.New("bad create flag")
		}
		op.run = d.values()
	}
	op.firstSeq = d.varint()
	op.recs = make([]encodedRecord, d.count())
	for i := range op.recs {
		op.recs[i].json = d.str()
		op.recs[i].completedKey = d.value()
	}
	op.deadline = d.byte()
	if op.deadline == 1 {
		op.wait = d.values()
	}
	if d.err != nil {
		return nil, d.err
	}
	if op.deadline > 2 {
		return nil, fmt.Errorf("unknown deadline change %d", op.deadline)
	}
	if len(d.b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	return op, nil
}

// checkShape refuses an op read back from the log whose values applyOp
// could not take: it indexes them, so a record of another shape (another
// program's, or one a checksum let through) must fail the replay with an
// error, not panic it. The codec itself reads any shape.
func (op *redoOp) checkShape() error {
	if op.run != nil {
		want := 12 // runArgs, run_id, the version replaced
		if op.create {
			want = 13 // runArgs, created_at, version, run_id
		}
		if len(op.run) != want {
			return fmt.Errorf("%d run values, want %d", len(op.run), want)
		}
		if _, ok := op.run[11].(int64); !op.create && !ok {
			return fmt.Errorf("the version replaced is %T, want an integer", op.run[11])
		}
	}
	if op.deadline == 1 {
		if len(op.wait) != 4 {
			return fmt.Errorf("%d deadline values, want 4", len(op.wait))
		}
		if _, ok := op.wait[1].(string); !ok {
			return fmt.Errorf("the deadline is %T, want a string", op.wait[1])
		}
	}
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// apply runs op's statements inside the caller's transaction.
func (s *Store) applyOp(ctx context.Context, op *redoOp) error {
	if op.run != nil {
		if op.create {
			n, err := s.w.runInsert.exec(ctx, op.run...)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("run %s already exists: a random run id was reused", op.runID)
			}
		} else {
			n, err := s.w.runUpdate.exec(ctx, updateArgs(op.run)...)
			if err == nil && n == 0 {
				n, err = s.w.runUpdateAll.exec(ctx, op.run...)
			}
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("run %s: %w", op.runID, s.staleVersion(ctx, op.runID, 0))
			}
		}
		if err := s.markListStale(ctx, op.runID, op.create); err != nil {
			return err
		}
	}
	for i, rec := range op.recs {
		if _, err := s.w.ledgerInsert.exec(ctx, op.runID, op.firstSeq+int64(i), rec.json, rec.completedKey); err != nil {
			return fmt.Errorf("inserting ledger record: %w", err)
		}
	}
	s.ledgerGrown = s.ledgerGrown || len(op.recs) > 0
	switch op.deadline {
	case 1:
		_, err := s.w.waitUpsert.exec(ctx, op.wait...)
		return err
	case 2:
		_, err := s.w.waitDelete.exec(ctx, op.runID)
		return err
	}
	return nil
}

// applyCreated applies op, a commit of a run created in the same batch
// whose last commit there is last: the create inserts the run as last
// left it (and its deadline), the later commits only their records.
func (s *Store) applyCreated(ctx context.Context, op, last *redoOp) error {
	if !op.create {
		return s.applyOp(ctx, &redoOp{runID: op.runID, firstSeq: op.firstSeq, recs: op.recs})
	}
	merged := *op
	if last != op {
		version := last.run[11].(int64) + 1 // an update's tail is run_id, then the version it replaced
		merged.run = append(append([]any{}, last.run[:10]...), op.run[10], version, op.runID)
		merged.deadline, merged.wait = 0, nil
		if last.deadline == 1 {
			merged.deadline, merged.wait = 1, last.wait
		}
	}
	return s.applyOp(ctx, &merged)
}

// openRedo replays what the redo log holds beyond the database, then
// (keep) opens it for this store's writes, or removes it.
func (s *Store) openRedo(ctx context.Context, keep bool, syncMode string) error {
	path := s.path + redoSuffix
	type rec struct {
		lsn     int64
		kind    byte
		payload []byte
	}
	var recs []rec
	next, err := redoScan(path, func(lsn int64, payload []byte) error {
		if len(payload) == 0 {
			return fmt.Errorf("redo record %d is empty", lsn)
		}
		recs = append(recs, rec{lsn, payload[0], payload[1:]})
		return nil
	})
	if err != nil {
		return err
	}
	var applied int64
	replayed := 0
	err = s.inTx(ctx, func(ctx context.Context) error {
		// Read in the transaction: two shared stores opening the database
		// at once replay it once.
		var err error
		if applied, err = s.w.redoLSN.queryInt64(ctx); err != nil {
			return fmt.Errorf("reading redo_applied: %w", err)
		}
		last := applied
		for _, r := range recs {
			if r.lsn <= applied {
				continue
			}
			if err := s.replayRecord(ctx, r.kind, r.payload); err != nil {
				return fmt.Errorf("replaying redo record %d: %w", r.lsn, err)
			}
			last = r.lsn
			replayed++
		}
		if last == applied {
			return nil
		}
		applied = last
		_, err = s.w.redoApplied.exec(ctx, applied)
		return err
	})
	s.settleListMarks(err == nil)
	if err != nil {
		return fmt.Errorf("sqlite: replaying the redo log of %s: %w", s.path, err)
	}
	if replayed > 0 {
		s.log.InfoContext(ctx, "replayed the redo log", "records", replayed, "lsn", applied)
		if s.shared {
			// The open's back-fill ran before the replay; a Python process
			// open beside us takes its seqs from ledger_heads.
			if err := s.backfillLedgerHeads(ctx); err != nil {
				return fmt.Errorf("sqlite: back-filling ledger heads after the redo log of %s: %w", s.path, err)
			}
		}
	}
	if len(recs) > 0 {
		// The log is rewound or removed next: what it held must be on disk,
		// also what the dead process had applied (unsynced with NORMAL
		// behind a FULL log).
		if err := syncReplayedWAL(s.path + "-wal"); err != nil {
			return fmt.Errorf("sqlite: syncing the WAL after replaying the redo log: %w", err)
		}
	}
	if !keep {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sqlite: removing the replayed redo log: %w", err)
		}
		return nil
	}
	if syncMode == "FULL" {
		// The redo log is synced at every commit; the database need only
		// be synced before the log is rewound (and at its checkpoints), so
		// the writes applied in the background do not compete for the disk.
		if _, err := s.wconn.ExecContext(ctx, "PRAGMA synchronous=NORMAL"); err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
	}
	start := max(next, applied+1)
	if st, err := os.Stat(path); err == nil {
		// Past a torn record (a power cut can lose one page of an
		// unsynced log and keep the next), records of the dead process may
		// remain whose LSNs follow it: a new round from the torn LSN could
		// write a record that ends just where such a one starts, and a
		// later replay would walk on into it. Starting above every LSN the
		// file can hold (a record takes more than its head) makes them
		// unreachable.
		start += st.Size()/redoRecordHead + 1
	}
	f, err := openRedoFile(path, start, syncMode == "FULL")
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	s.redo = &redoLog{file: f, queuedRuns: map[string]int{}, applied: start - 1, walPath: s.path + "-wal",
		syncWAL: syncMode != "OFF", kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.applyInBackground()
	return nil
}

// replayRecord applies one record of the redo log.
func (s *Store) replayRecord(ctx context.Context, kind byte, payload []byte) error {
	d := &redoDecoder{b: payload}
	switch kind {
	case redoCommit, redoAppend:
		op, err := decodeRedoOp(kind, d)
		if err == nil {
			err = op.checkShape()
		}
		if err != nil {
			return err
		}
		return s.applyOp(ctx, op)
	case redoStatements:
		for len(d.b) > 0 {
			name := d.str()
			args := d.values()
			if d.err != nil {
				return d.err
			}
			st := s.w.byName[name]
			if st == nil {
				return fmt.Errorf("unknown statement %q (a redo log written by another version of this program?)", name)
			}
			if _, err := st.exec(ctx, args...); err != nil {
				return err
			}
		}
		return d.err
	default:
		return fmt.Errorf("unknown record kind %d", kind)
	}
}

// applyInBackground applies the queue whenever a commit is added to it.
func (s *Store) applyInBackground() {
	rl := s.redo
	defer close(rl.done)
	backoff := time.Duration(0)
	for {
		if backoff > 0 {
			select {
			case <-rl.stop:
				return
			case <-time.After(backoff):
			}
		} else {
			if f := rl.waitingForTest.Load(); f != nil {
				(*f)()
			}
			select {
			case <-rl.stop:
				return
			case <-rl.kick:
			}
		}
		s.wsem <- struct{}{}
		if s.closed {
			<-s.wsem
			return
		}
		if rl.heldForTest.Load() {
			<-s.wsem
			continue
		}
		err := s.applyPending(context.Background(), false)
		<-s.wsem
		if err != nil {
			// Logged, kept and tried again: the commits are in the redo log,
			// and reads see them through the cache meanwhile.
			backoff = min(max(2*backoff, 50*time.Millisecond), 5*time.Second)
			s.log.Warn("applying commits from the redo log failed; trying again", "error", err, "in", backoff)
			continue
		}
		backoff = 0
		s.rewindWhenDue()
	}
}

// applyPending applies the queue to the database in one transaction. The
// caller holds the writer turn, and redo.mu when locked is true.
func (s *Store) applyPending(ctx context.Context, locked bool) error {
	rl := s.redo
	if !locked {
		rl.mu.Lock()
	}
	ops := rl.pending
	if !locked {
		rl.mu.Unlock()
	}
	if len(ops) == 0 {
		return nil
	}
	// A run created in this batch is inserted once, in the state its last
	// commit in the batch gave it: a W1 run's start and completion, or a
	// W3b run's start and wait, cost one INSERT instead of an INSERT and
	// an UPDATE. Its records are inserted as they come.
	var final map[string]*redoOp
	for _, op := range ops {
		if op.run == nil {
			continue
		}
		if op.create {
			if final == nil {
				final = map[string]*redoOp{}
			}
			final[op.runID] = op
		} else if _, ok := final[op.runID]; ok {
			final[op.runID] = op
		}
	}
	err := s.inTx(ctx, func(ctx context.Context) error {
		for _, op := range ops {
			var err error
			if last, ok := final[op.runID]; ok && op.run != nil {
				err = s.applyCreated(ctx, op, last)
			} else {
				err = s.applyOp(ctx, op)
			}
			if err != nil {
				return fmt.Errorf("applying redo record %d: %w", op.lsn, err)
			}
		}
		_, err := s.w.redoApplied.exec(ctx, ops[len(ops)-1].lsn)
		return err
	})
	s.settleListMarks(err == nil)
	if err != nil {
		return err
	}
	s.afterWrite(ctx)
	last := ops[len(ops)-1].lsn
	if !locked {
		rl.mu.Lock()
	}
	for _, op := range ops {
		if rl.queuedRuns[op.runID]--; rl.queuedRuns[op.runID] <= 0 {
			delete(rl.queuedRuns, op.runID)
		}
	}
	// The foreground may have queued more meanwhile (ops views the front
	// of the same array, and is overwritten here): keep those.
	kept := copy(rl.pending, rl.pending[len(ops):])
	clear(rl.pending[kept:])
	rl.pending = rl.pending[:kept]
	rl.applied = last
	if locked && kept == 0 && rl.file.off > redoRewindBytes {
		// The rewind (rewindWhenDue) is the background goroutine's, after
		// each of its own drains: wake it for one done in the foreground.
		rl.kickApply()
	}
	if !locked {
		rl.mu.Unlock()
	}
	return nil
}

// rewindWhenDue starts the redo log over once the database holds all of
// it durably and it is past redoRewindBytes. It syncs the WAL without the
// writer turn, so that neither commits nor the store's other writes wait
// for the sync, then rewinds only if no write reached the database
// meanwhile (else a later call does). The caller holds neither the writer
// turn nor redo.mu.
func (s *Store) rewindWhenDue() {
	rl := s.redo
	rl.mu.Lock()
	next := rl.file.next
	due := rl.file.off > redoRewindBytes && len(rl.pending) == 0 && next == rl.applied+1 && rl.failed == nil
	forced := !due && rl.file.off > redoForceRewindBytes && rl.failed == nil
	rl.mu.Unlock()
	if forced {
		s.rewindNow()
		return
	}
	if !due {
		return
	}
	if !s.syncWALBeforeRewind() {
		return
	}
	if rl.afterRewindSyncForTest != nil {
		rl.afterRewindSyncForTest()
	}
	s.wsem <- struct{}{}
	defer func() { <-s.wsem }()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	// Every write to the database is logged first: a log that has not
	// grown since the sync began holds nothing the sync missed.
	if s.closed || rl.file.next != next || rl.failed != nil {
		return
	}
	s.rewindRedoLocked()
}

// syncWALBeforeRewind makes the database's applied writes durable (the
// WAL, when the database runs with NORMAL) before the log that holds them
// is rewound; false, logged, when that failed.
func (s *Store) syncWALBeforeRewind() bool {
	if !s.redo.syncWAL {
		return true
	}
	if err := syncFile(s.redo.walPath); err != nil {
		s.log.Warn("syncing the WAL before rewinding the redo log failed", "error", err)
		return false
	}
	return true
}

// rewindRedoLocked starts the log over; a failure makes the store refuse
// writes. The caller holds redo.mu.
func (s *Store) rewindRedoLocked() {
	rl := s.redo
	if err := rl.file.rewind(rl.file.next); err != nil {
		rl.failed = err
		s.log.Error("rewinding the redo log failed; the store refuses writes", "error", err)
	}
}

// rewindNow rewinds a redo log that commits have kept from rewinding (its
// queue never empty when a drain ended) once it is past
// redoForceRewindBytes: it applies the queue and syncs the WAL holding the
// writer turn and redo.mu, so that commits wait for that one sync, then
// rewinds. The caller holds neither.
func (s *Store) rewindNow() {
	rl := s.redo
	s.wsem <- struct{}{}
	defer func() { <-s.wsem }()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if s.closed || rl.failed != nil {
		return
	}
	if err := s.drain(context.Background()); err != nil {
		s.log.Warn("applying the queue before rewinding the redo log failed", "error", err)
		return
	}
	if rl.file.next != rl.applied+1 || !s.syncWALBeforeRewind() {
		return
	}
	s.rewindRedoLocked()
}

// drain applies the queue; the caller holds the writer turn and redo.mu.
func (s *Store) drain(ctx context.Context) error {
	if s.redo == nil || len(s.redo.pending) == 0 {
		return nil
	}
	return s.applyPending(context.WithoutCancel(ctx), true)
}

// listDueOverQueue is RunListDue for a store with a redo log, without
// applying the queue (the scheduler's poll would otherwise wait for the
// commits of the runs it just ticked): the runs the queue changes are
// taken from their last queued commit, the others from wait_index. The
// writer turn keeps the database still while the queue is read and the
// query runs, so both are the same moment's.
func (s *Store) listDueOverQueue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	if err := s.takeTurn(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	defer func() { <-s.wsem }()
	now := durable.FormatTime(p.Now)
	limit := store.EffectiveLimit(p.Limit)
	type due struct{ id, until string }
	queued := map[string]*due{} // nil: the run is not due
	s.redo.mu.Lock()
	for _, op := range s.redo.pending {
		if op.run == nil {
			continue
		}
		if op.deadline == 1 && op.run[1] == string(durable.RunWaiting) && op.wait[1].(string) <= now {
			queued[op.runID] = &due{op.runID, op.wait[1].(string)}
		} else {
			queued[op.runID] = nil
		}
	}
	s.redo.mu.Unlock()
	// The runs the queue changes are read from it, not from wait_index.
	inQueue := func(id string) bool { _, ok := queued[id]; return ok }
	all, err := s.dueRows(ctx, s.rw.listDue, limit, inQueue, now)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	for _, d := range queued {
		if d == nil {
			continue
		}
		if until, ok := s.dueTime(d.id, d.until); ok {
			all = append(all, store.DueRun{RunID: d.id, Until: until})
		}
	}
	foreign, err := s.dueRows(ctx, s.rw.foreignDue, 0, inQueue)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing due runs: %w", err)
	}
	slices.SortFunc(all, compareDue)
	return addForeignDue(all[:min(len(all), limit)], foreign, p.Now, limit), nil
}

// Settle applies every commit the redo log holds to the database file.
// Reads and writes through the store never need it (they see every
// commit); a benchmark does, to count that work, and so may a tool about
// to read the file while the store stays open.
func (s *Store) Settle(ctx context.Context) error {
	if s.redo == nil {
		return nil
	}
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer func() { <-s.wsem }()
	s.redo.mu.Lock()
	defer s.redo.mu.Unlock()
	if err := s.drain(ctx); err != nil {
		return fmt.Errorf("sqlite: settling the redo log: %w", err)
	}
	return nil
}

// lockRedo takes redo.mu (when the store has a redo log) and applies the
// queue, for a read or write on the database. The caller holds the writer
// turn; on success it must call the returned unlock.
func (s *Store) lockRedo(ctx context.Context) (unlock func(), err error) {
	return s.lockRedoFor(ctx, "")
}

// lockRedoFor is lockRedo for a read of one run's rows (runID not ""): the
// queue is applied only if it holds commits of that run. A run read from
// the cache misses there under a large working set, and waiting for the
// whole queue on each miss made 10,000-run W3b 20–50 % slower.
func (s *Store) lockRedoFor(ctx context.Context, runID string) (unlock func(), err error) {
	if s.redo == nil {
		return func() {}, nil
	}
	s.redo.mu.Lock()
	if runID != "" && s.redo.queuedRuns[runID] == 0 {
		return s.redo.mu.Unlock, nil
	}
	if err := s.drain(ctx); err != nil {
		s.redo.mu.Unlock()
		return nil, fmt.Errorf("applying the redo log: %w", err)
	}
	return s.redo.mu.Unlock, nil
}

// fromCache answers a read from the cache, under redo.mu, without the
// writer turn or the queue applied: hit runs on the cache and reports
// whether it answered. A store without a redo log (whose cache needs the
// writer turn), or a closed one, answers nothing here; the read's slow
// path then does, or says the store is closed.
func (s *Store) fromCache(hit func() bool) bool {
	if s.redo == nil {
		return false
	}
	s.redo.mu.Lock()
	defer s.redo.mu.Unlock()
	return !s.redo.closed && hit()
}

// recordLocked appends the statements a transaction ran (the writer turn
// and redo.mu held) as the record of LSN lsn.
func (s *Store) recordLocked(lsn int64, payload []byte) error {
	rl := s.redo
	got, err := rl.file.append(payload)
	if err == nil && got != lsn {
		err = fmt.Errorf("redo log at LSN %d, want %d", got, lsn)
	}
	if err != nil {
		rl.failed = err
		s.log.Error("writing the redo log failed; the store refuses writes", "error", err)
		return err
	}
	rl.applied = lsn
	if rl.file.off > redoRewindBytes {
		// Only the background goroutine rewinds (rewindWhenDue), and
		// writes straight to the database (commands, claims, runs the
		// cache does not hold) queue nothing that would wake it.
		rl.kickApply()
	}
	return nil
}

// recordedTx is inTx for a store with a redo log: the statements fn runs
// are recorded, with the LSN they take, in the transaction and then in the
// redo log. The caller holds the writer turn and redo.mu, and has applied
// the queue. committed tells whether the transaction committed, whatever
// err says: a write that committed stands even if the redo log then fails
// (err then says it may not be durable), so the cache must take it; the
// store refuses the later writes.
func (s *Store) recordedTx(ctx context.Context, fn func(ctx context.Context) error) (committed bool, err error) {
	rl := s.redo
	if err := rl.refusal(); err != nil {
		return false, err
	}
	lsn := rl.file.next
	s.w.startRecording()
	err = s.inTx(ctx, func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return err
		}
		if !s.w.recorded() {
			return nil
		}
		if _, err := s.w.redoApplied.exec(ctx, lsn); err != nil {
			return err
		}
		// A record the log would refuse is refused here, before the
		// commit: after it, the refusal would leave a committed write
		// the log does not hold, and the store refusing every write.
		return rl.file.fits(s.w.recordedLen())
	})
	payload := s.w.stopRecording()
	if err != nil {
		return false, err
	}
	if payload == nil {
		return true, nil
	}
	if rerr := s.recordLocked(lsn, payload); rerr != nil && rl.file.sync {
		// Logged, and rl.failed refuses later writes. This one is
		// committed, but with FULL the database runs NORMAL behind the
		// log, whose fdatasync made it durable: sync the WAL instead, or
		// say it is not durable.
		if serr := syncFile(rl.walPath); serr != nil {
			return true, fmt.Errorf("sqlite: a write committed but not synced (the redo log failed: %v): %w", rerr, serr)
		}
		if rl.walSyncedForTest != nil {
			rl.walSyncedForTest()
		}
	}
	return true, nil
}

// refusal tells why the store takes no more writes (closed, or the redo
// log failed), or nil. The caller holds redo.mu.
func (rl *redoLog) refusal() error {
	if rl.closed {
		return errClosed
	}
	if rl.failed != nil {
		return fmt.Errorf("redo log failed earlier: %w", rl.failed)
	}
	return nil
}

// commitFromCache is RunCommit's fast path (see the top of the file):
// handled is false when the cache does not know enough and the caller
// must commit through the database.
func (s *Store) commitFromCache(p *store.CommitParams, runJSON string, recs []encodedRecord) (handled bool, err error) {
	rl := s.redo
	r := p.Run
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := rl.refusal(); err != nil {
		return true, err
	}
	if len(rl.pending) >= redoMaxPending {
		return false, nil
	}
	if p.Create {
		// A run with queued commits the cache has evicted goes the slow
		// way too: its create would fail when applied, and with it the
		// redo log. (One already in the database is not looked for: that
		// is what RandomID spares.)
		if !p.RandomID || s.cache.entry(r.RunID, false) != nil || rl.queuedRuns[r.RunID] > 0 {
			return false, nil
		}
		return true, s.queueCommitLocked(p, runJSON, recs, 1, false)
	}
	h := s.cache.entry(r.RunID, false)
	if h == nil || h.stateText == "" || !h.seqKnown {
		return false, nil
	}
	if h.stateVersion != r.Version {
		return true, fmt.Errorf("stored version is %d: %w", h.stateVersion, store.ErrConflict)
	}
	return true, s.queueCommitLocked(p, runJSON, recs, h.lastSeq+1, h.stateIndexed)
}

// createFromDatabase is the fast path of a create under an id the caller
// chose: the cache, or else the database, says whether the run exists
// (under the writer turn, so that the goroutine holds still, but without
// applying the queue), and the create is then queued like any other. A
// run with queued commits the cache does not hold, or whose ledger exists
// without it, goes the slow way.
func (s *Store) createFromDatabase(ctx context.Context, p *store.CommitParams, runJSON string, recs []encodedRecord) (handled bool, err error) {
	if err := s.takeTurn(ctx); err != nil {
		return true, err
	}
	defer func() { <-s.wsem }()
	rl := s.redo
	id := p.Run.RunID
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := rl.refusal(); err != nil {
		return true, err
	}
	h := s.cache.entry(id, false)
	switch {
	case h != nil && h.stateText != "":
		return true, store.ErrAlreadyExists // what the cache holds, the database or the queue has
	case len(rl.pending) >= redoMaxPending || rl.queuedRuns[id] > 0 || h != nil:
		return false, nil
	}
	wctx := context.WithoutCancel(ctx)
	exists := false
	var last int64
	err = s.w.run(func() error {
		_, err := s.w.runVersion.queryInt64(wctx, id)
		switch {
		case err == nil:
			exists = true
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		last, err = s.w.lastSeq.queryInt64(wctx, id)
		return err
	})
	switch {
	case err != nil:
		return true, err
	case exists:
		return true, store.ErrAlreadyExists
	case last > 0:
		return false, nil
	}
	return true, s.queueCommitLocked(p, runJSON, recs, 1, false)
}

// queueCommitLocked queues p, whose records take seqs from firstSeq on,
// and applies it to the cache; prevIndexed tells that the run's stored
// state has a wait_index row. The caller holds redo.mu and has checked p
// against what the cache or the database knows.
func (s *Store) queueCommitLocked(p *store.CommitParams, runJSON string, recs []encodedRecord, firstSeq int64, prevIndexed bool) error {
	r := p.Run
	op := &redoOp{runID: r.RunID, create: p.Create, firstSeq: firstSeq}
	text := strings.Clone(runJSON) // runJSON views a pooled buffer
	op.run = runArgs(r, text)
	if p.Create {
		op.run = append(op.run, nullString(r.CreatedAt.String()), r.Version+1, r.RunID)
	} else {
		op.run = append(op.run, r.RunID, r.Version)
	}
	until, indexed := store.Deadline(r)
	switch {
	case indexed:
		op.deadline = 1
		op.wait = []any{r.RunID, until.String(), r.UpdatedAt.String(), waitIndexStatus(r.Waiting.Reason)}
	case prevIndexed:
		op.deadline = 2
	}
	if err := s.queueLocked(op, recs); err != nil {
		return err
	}
	s.cache.putState(r.RunID, text, r.Version+1, indexed)
	if p.Create && len(p.Records) == 0 {
		s.cache.putLedger(r.RunID, nil, 0, 0) // a new run with no ledger yet
	}
	s.cacheCommitted(r, p.Records, op.firstSeq, recs)
	r.Version++
	setSeqs(p.Records, op.firstSeq)
	if p.Handoff {
		s.cache.hand(r) // after the last change this commit makes to r
	}
	return nil
}

// appendFromCache is LedgerAppend's fast path, for a run whose last seq
// the cache knows.
func (s *Store) appendFromCache(runID string, records []*durable.StepRecord, recs []encodedRecord) (handled bool, err error) {
	rl := s.redo
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := rl.refusal(); err != nil {
		return true, err
	}
	last, known := s.cache.lastSeq(runID)
	if !known || len(rl.pending) >= redoMaxPending {
		return false, nil
	}
	op := &redoOp{runID: runID, firstSeq: last + 1}
	if err := s.queueLocked(op, recs); err != nil {
		return true, err
	}
	s.cacheAppended(runID, records, op.firstSeq, recs)
	setSeqs(records, op.firstSeq)
	return true, nil
}

// queueLocked writes op (with copies of recs) to the redo log and queues
// it for the database.
func (s *Store) queueLocked(op *redoOp, recs []encodedRecord) error {
	rl := s.redo
	op.recs = make([]encodedRecord, len(recs))
	for i, rec := range recs {
		op.recs[i] = encodedRecord{json: strings.Clone(rec.json), completedKey: rec.completedKey}
	}
	e := &rl.enc // reused: the file copies the payload
	e.b = e.b[:0]
	if err := op.encode(e); err != nil {
		return err
	}
	lsn, err := rl.file.append(e.b)
	if cap(e.b) > 1<<20 {
		e.b = nil // a rare huge commit: do not keep its buffer
	}
	if errors.Is(err, ErrTooLarge) {
		// Refused before anything was written: the log is intact, and
		// only this write fails.
		return fmt.Errorf("run %s: %w", op.runID, err)
	}
	if err != nil {
		rl.failed = err
		s.log.Error("writing the redo log failed; the store refuses writes", "error", err)
		return err
	}
	op.lsn = lsn
	rl.pending = append(rl.pending, op)
	rl.queuedRuns[op.runID]++
	rl.kickApply()
	return nil
}

// kickApply wakes the background goroutine, if it is not awake already.
func (rl *redoLog) kickApply() {
	select {
	case rl.kick <- struct{}{}:
	default:
	}
}

// stopApplying marks the redo log closed to new commits and stops the
// goroutine (after the turn it may be in). The caller does not hold the
// writer turn.
func (s *Store) stopApplying() {
	rl := s.redo
	rl.mu.Lock()
	rl.closed = true
	rl.mu.Unlock()
	close(rl.stop)
	<-rl.done
}

// closeRedoLocked applies the queue and removes the redo log once the
// database holds it durably; on any failure the log stays, for the next
// open to replay. The caller holds the writer turn, after stopApplying.
func (s *Store) closeRedoLocked(ctx context.Context) error {
	rl := s.redo
	rl.mu.Lock()
	defer rl.mu.Unlock()
	err := s.drain(ctx)
	if err == nil && s.listDirty > 0 {
		err = s.flushLists(ctx)
	}
	if err == nil && rl.syncWAL {
		err = syncFile(rl.walPath)
	}
	if cerr := rl.file.close(); err == nil {
		err = cerr
	}
	if err == nil && rl.failed != nil {
		err = fmt.Errorf("it failed earlier: %w", rl.failed)
	}
	if err == nil {
		err = os.Remove(s.path + redoSuffix)
	}
	if err != nil {
		return fmt.Errorf("sqlite: closing the redo log (kept for the next open): %w", err)
	}
	return nil
}

// syncReplayedWAL syncs the WAL a replay wrote before the redo log goes;
// a variable so that a test can watch the call.
var syncReplayedWAL = syncFile

// syncFile fsyncs the file at path; a missing file has nothing to sync.
func syncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
