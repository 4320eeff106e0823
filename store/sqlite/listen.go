package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ListenLedger implements store.LedgerListener for a shared store: it
// reports the ledger appends and deletes that other processes (another
// runner, a Python runtime) and other store values make in the database,
// by polling it every Config.ListenEvery, so that a process streaming a
// run's ledger (observe.Store.Follow) learns of them without reading
// every ledger it follows. SQLite has no notifications across processes;
// each look is one read transaction: the ledger_deletes log (migration
// 021, a trigger's) gives the deletes since the last look, and a rowid
// range scan the rows added past the highest rowid seen. Rowids freed by a
// delete at the end of the table may be given again: after another
// process's delete every follower is woken with an empty run id (read
// every followed ledger from its cursor); after this store's own, the
// look reads from the end the delete left. A look that finds log entries
// of other processes trimmed away (more than 10,000 deletes since the
// last look) tells every follower to read its ledgers again from seq 1
// (an empty run id with deleted set). A look that fails ends the call, and
// its place in the log with it: a caller listening again treats every
// ledger as possibly deleted (see store.LedgerListener). The appends and
// deletes this store value makes itself are not reported: the store notes
// them, by rowid, in the writer turn before they commit (and drops the
// notes when they do not). A store that owns
// its database has no other writer to hear: its ListenLedger fails at once
// with errors.ErrUnsupported.
func (s *Store) ListenLedger(ctx context.Context, ready func(), wake func(runID string, deleted bool)) error {
	if !s.shared {
		return fmt.Errorf("sqlite: a store that owns its database has no other writer to report: %w", errors.ErrUnsupported)
	}
	f, rowTop, delTop, err := s.startFollow(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: listening to ledger appends: %w", err)
	}
	defer s.own.remove(f)
	ready()
	t := time.NewTicker(s.listenEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := s.listenOnce(ctx, f, &rowTop, &delTop, wake); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("sqlite: listening to ledger appends: %w", err)
		}
	}
}

// startFollow registers a follow of the store's own writes and returns
// it with the ledger's highest rowid and the delete log's highest id. They are read
// in the writer turn, so that no write of this store is under way: one
// would commit after them unnoted.
func (s *Store) startFollow(ctx context.Context) (f *ledgerFollow, rowTop, delTop int64, err error) {
	if err := s.takeTurn(ctx); err != nil {
		return nil, 0, 0, err
	}
	defer func() { <-s.wsem }()
	err = s.rdb.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(rowid), 0) FROM ledger), (SELECT COALESCE(MAX(id), 0) FROM ledger_deletes)`).
		Scan(&rowTop, &delTop)
	if err != nil {
		return nil, 0, 0, err
	}
	f = &ledgerFollow{rows: map[string]map[rowKey][]int64{}, deletes: map[int64]ownDelete{}}
	s.own.add(f)
	return f, rowTop, delTop, nil
}

// listenBatch bounds the ledger rows one query of a look reads.
const listenBatch = 10000

// listenOnce is one look, in one read transaction: the deletes logged
// since delTop, then the ledger rows past rowTop.
func (s *Store) listenOnce(ctx context.Context, f *ledgerFollow, rowTop, delTop *int64, wake func(string, bool)) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()

	// Deletes first: a row past rowTop in this snapshot comes after every
	// delete logged in it.
	var deleted []string
	wakeAll, trimmed := false, false
	rows, err := tx.QueryContext(ctx, `SELECT id, run_id FROM ledger_deletes WHERE id > ? ORDER BY id`, *delTop)
	if err != nil {
		return err
	}
	for rows.Next() {
		var logID int64
		var runID string
		if err := rows.Scan(&logID, &runID); err != nil {
			_ = rows.Close()
			return err
		}
		if logID > *delTop+1 && !f.ownGap(*delTop, logID, rowTop) {
			// The log was trimmed past entries this look never read, not
			// all of them this store's own deletes.
			trimmed = true
		}
		*delTop = logID
		f.forgetRowsBefore(runID, logID)
		if d, own := f.takeDelete(logID); own {
			// Rows past the end this delete left are all newer than it.
			*rowTop = min(*rowTop, d.end)
			continue
		}
		deleted = append(deleted, runID)
		// Rows another process added in the rowids its delete freed, at
		// or below rowTop, are not found by the range scan.
		wakeAll = true
	}
	if err := rows.Close(); err != nil {
		return err
	}

	var appended []string
	seen := map[string]bool{}
	for {
		rows, err := tx.QueryContext(ctx, `SELECT rowid, run_id, seq FROM ledger WHERE rowid > ? ORDER BY rowid LIMIT ?`, *rowTop, listenBatch)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var id, seq int64
			var runID string
			if err := rows.Scan(&id, &runID, &seq); err != nil {
				_ = rows.Close()
				return err
			}
			n++
			*rowTop = id
			if !f.takeRow(id, runID, seq) && !seen[runID] {
				seen[runID] = true
				appended = append(appended, runID)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if n < listenBatch {
			break
		}
	}
	// A delete at the end of the table: later rows take rowids from the
	// new end on.
	var top int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(rowid), 0) FROM ledger`).Scan(&top); err != nil {
		return err
	}
	*rowTop = min(*rowTop, top)
	if err := tx.Commit(); err != nil {
		return err
	}
	if trimmed {
		// Notes of own rows the unnamed deletes may have removed would
		// never be found: every follower reads again anyway.
		f.forgetRowsBefore("", *delTop)
	}
	f.prune(*rowTop, *delTop)

	if trimmed {
		// Deletes it cannot name: any followed ledger may have been
		// deleted, and is read again from seq 1.
		s.log.WarnContext(ctx, "more ledger deletes were logged between two looks than the log keeps; every follower reads its ledgers again")
		wake("", true)
	}
	for _, id := range deleted {
		wake(id, true)
	}
	if wakeAll && !trimmed {
		wake("", false)
	}
	for _, id := range appended {
		wake(id, false)
	}
	return nil
}

// ledgerFollow is what one ListenLedger call has to leave out: this
// store's own appends and deletes, noted before they commit and taken off
// as the call's looks find them or pass them.
type ledgerFollow struct {
	mu sync.Mutex
	// rows are the own records, by run, then by rowid and seq: for each,
	// the delete log's highest rowid when each was noted (a record of the
	// run another delete removed can be followed, in the same rowid, by
	// one this store appends again before a look sees either).
	rows    map[string]map[rowKey][]int64
	deletes map[int64]ownDelete // by ledger_deletes id
}

// rowKey is a ledger row: its rowid, and its seq (a rowid another process
// takes after a rollback or a delete holds another record).
type rowKey struct{ rowid, seq int64 }

// ownDelete is a ledger delete this store made: the run, and the ledger's
// highest rowid after it.
type ownDelete struct {
	runID string
	end   int64
}

// note notes an own record.
func (f *ledgerFollow) note(runID string, k rowKey, logTop int64) {
	byRow := f.rows[runID]
	if byRow == nil {
		byRow = map[rowKey][]int64{}
		f.rows[runID] = byRow
	}
	byRow[k] = append(byRow[k], logTop)
}

// unnote drops a note that note made (a transaction that did not commit).
func (f *ledgerFollow) unnote(runID string, k rowKey, logTop int64) {
	tops := f.rows[runID][k]
	if i := slices.Index(tops, logTop); i >= 0 {
		f.setTops(runID, k, slices.Delete(tops, i, i+1))
	}
}

// setTops sets the notes of a row, dropping the empty maps.
func (f *ledgerFollow) setTops(runID string, k rowKey, tops []int64) {
	byRow := f.rows[runID]
	if len(tops) > 0 {
		byRow[k] = tops
		return
	}
	delete(byRow, k)
	if len(byRow) == 0 {
		delete(f.rows, runID)
	}
}

// takeRow reports whether the row is one of this store's, and forgets one
// note of it (the oldest).
func (f *ledgerFollow) takeRow(rowid int64, runID string, seq int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := rowKey{rowid, seq}
	tops := f.rows[runID][k]
	if len(tops) == 0 {
		return false
	}
	f.setTops(runID, k, tops[1:])
	return true
}

// ownGap reports whether the log entries after delTop and before logID,
// which the log no longer holds, were all this store's own deletes; if so
// it forgets them, with the notes of the rows they removed, and lowers
// rowTop to the lowest end they left.
func (f *ledgerFollow) ownGap(delTop, logID int64, rowTop *int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := delTop + 1; id < logID; id++ {
		if _, ok := f.deletes[id]; !ok {
			return false
		}
	}
	latest := map[string]int64{} // by run, its last delete in the gap
	for id := delTop + 1; id < logID; id++ {
		d := f.deletes[id]
		*rowTop = min(*rowTop, d.end)
		latest[d.runID] = id
		delete(f.deletes, id)
	}
	for runID, id := range latest {
		f.forgetRowsBeforeLocked(runID, id)
	}
	return true
}

// takeDelete returns the own delete logged under logID, and forgets it.
func (f *ledgerFollow) takeDelete(logID int64) (ownDelete, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deletes[logID]
	delete(f.deletes, logID)
	return d, ok
}

// forgetRowsBefore forgets the own rows of runID ("": of any run) noted
// before the delete logged under logID: it removed them, and their rowids
// may be given to another process's rows.
func (f *ledgerFollow) forgetRowsBefore(runID string, logID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgetRowsBeforeLocked(runID, logID)
}

func (f *ledgerFollow) forgetRowsBeforeLocked(runID string, logID int64) {
	runs := []string{runID}
	if runID == "" {
		runs = slices.Collect(maps.Keys(f.rows))
	}
	for _, r := range runs {
		for k, tops := range f.rows[r] {
			f.setTops(r, k, slices.DeleteFunc(tops, func(top int64) bool { return top < logID }))
		}
	}
}

// prune forgets, after a look that ended at rowTop and delTop, the own
// rows at or below rowTop noted after every delete the look has read
// (seen, or never to be scanned: a later look starts past them, and only
// a delete of theirs, logged later, could lower rowTop again, dropping
// them with it), and the own deletes the log has passed (read, or
// trimmed away).
func (f *ledgerFollow) prune(rowTop, delTop int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for r, byRow := range f.rows {
		for k, tops := range byRow {
			if k.rowid <= rowTop {
				f.setTops(r, k, slices.DeleteFunc(tops, func(top int64) bool { return top <= delTop }))
			}
		}
	}
	for id := range f.deletes {
		if id <= delTop {
			delete(f.deletes, id)
		}
	}
}

// ownWrites notes a store's own ledger appends and deletes for its
// ListenLedger calls. Notes are made in the writer turn, inside the
// transaction, and undone by settle when it does not commit.
type ownWrites struct {
	active  atomic.Int32 // len(follows), read without mu on every write
	mu      sync.Mutex
	follows []*ledgerFollow
	// pending are the transaction's notes, in the writer turn.
	pending []pendingNote
}

// pendingNote is a note of the transaction in progress: a record (k) or a
// delete (logID).
type pendingNote struct {
	runID  string
	k      rowKey
	logTop int64
	logID  int64 // a delete's; 0 for a record
}

func (o *ownWrites) add(f *ledgerFollow) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.follows = append(o.follows, f)
	o.active.Store(int32(len(o.follows)))
}

func (o *ownWrites) remove(f *ledgerFollow) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, g := range o.follows {
		if g == f {
			o.follows = append(o.follows[:i], o.follows[i+1:]...)
			o.active.Store(int32(len(o.follows)))
			return
		}
	}
}

// following reports whether a ListenLedger call is under way.
func (o *ownWrites) following() bool { return o.active.Load() > 0 }

// appended notes the records of runID from seq first on, inserted under
// rowids, with the delete log's highest rowid then.
func (o *ownWrites) appended(runID string, first int64, rowids []int64, logTop int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, id := range rowids {
		k := rowKey{id, first + int64(i)}
		for _, f := range o.follows {
			f.mu.Lock()
			f.note(runID, k, logTop)
			f.mu.Unlock()
		}
		o.pending = append(o.pending, pendingNote{runID: runID, k: k, logTop: logTop})
	}
}

// deleted notes the delete of runID's ledger, logged under logID, which
// left the ledger's highest rowid at end.
func (o *ownWrites) deleted(logID int64, runID string, end int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range o.follows {
		f.mu.Lock()
		f.deletes[logID] = ownDelete{runID: runID, end: end}
		f.mu.Unlock()
	}
	o.pending = append(o.pending, pendingNote{runID: runID, logID: logID})
}

// settle ends the transaction's notes: kept when it committed, undone
// when it did not.
func (o *ownWrites) settle(committed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !committed {
		for _, f := range o.follows {
			f.mu.Lock()
			for _, n := range o.pending {
				if n.logID != 0 {
					delete(f.deletes, n.logID)
				} else {
					f.unnote(n.runID, n.k, n.logTop)
				}
			}
			f.mu.Unlock()
		}
	}
	o.pending = o.pending[:0]
}
