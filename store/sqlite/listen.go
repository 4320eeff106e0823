package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ListenLedger implements store.LedgerListener for a shared store: it
// reports the ledger appends and deletes that other processes (another
// runner, a Python runtime) and other store values make in the database,
// by polling it every Config.ListenEvery, so that a process streaming a
// run's ledger (observe.Store.Follow) learns of them without reading
// every ledger it follows. SQLite has no notifications across processes;
// the ledger's rowids find appends (a rowid range scan of what was added
// since the last look) and the ledger_deletes table (migration 021, a
// trigger's log) finds deletes. Rowids freed by a delete at the end of the
// table may be given again: after another process's delete, every
// follower is woken with an empty run id (read every followed ledger from
// its cursor), and after this store's own, the rows above the new end are
// read again. The appends and deletes this store value makes itself are
// not reported (the store notes them in the writer turn, before they
// commit). A store that owns its database has no other writer to hear:
// its ListenLedger fails at once with errors.ErrUnsupported.
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
// it with the ledger's and the delete log's highest rowids. They are read
// in the writer turn, so that no write of this store is under way: one
// would commit after them unnoted.
func (s *Store) startFollow(ctx context.Context) (f *ledgerFollow, rowTop, delTop int64, err error) {
	if err := s.takeTurn(ctx); err != nil {
		return nil, 0, 0, err
	}
	defer func() { <-s.wsem }()
	err = s.rdb.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(rowid), 0) FROM ledger), (SELECT COALESCE(MAX(rowid), 0) FROM ledger_deletes)`).
		Scan(&rowTop, &delTop)
	if err != nil {
		return nil, 0, 0, err
	}
	f = &ledgerFollow{appends: map[string]map[int64]struct{}{}, deletes: map[string]int{}}
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

	var deleted []string
	anyForeignDelete := false
	rows, err := tx.QueryContext(ctx, `SELECT rowid, run_id FROM ledger_deletes WHERE rowid > ? ORDER BY rowid`, *delTop)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var runID string
		if err := rows.Scan(&id, &runID); err != nil {
			_ = rows.Close()
			return err
		}
		*delTop = id
		if !f.takeDelete(runID) {
			deleted = append(deleted, runID)
			anyForeignDelete = true
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}

	// This store's own deletes at the end of the table free rowids another
	// process may have taken since: read from the end the delete left.
	*rowTop = min(*rowTop, f.takeRescan(*rowTop))
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
			if !f.takeAppend(runID, seq) && !seen[runID] {
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
	// Another process's delete at the end of the table: later rows take
	// rowids from the new end on.
	var top int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(rowid), 0) FROM ledger`).Scan(&top); err != nil {
		return err
	}
	*rowTop = min(*rowTop, top)
	if err := tx.Commit(); err != nil {
		return err
	}

	for _, id := range deleted {
		wake(id, true)
	}
	if anyForeignDelete {
		// Rows another process added in rowids its delete freed, before
		// this look, were not found by the range scan.
		wake("", false)
	}
	for _, id := range appended {
		wake(id, false)
	}
	return nil
}

// ledgerFollow is what one ListenLedger call has to leave out: this
// store's own appends and deletes, noted before they commit and taken off
// when the call finds them.
type ledgerFollow struct {
	mu      sync.Mutex
	appends map[string]map[int64]struct{} // by run id, the seqs
	deletes map[string]int                // by run id, how many
	// rescan is the ledger's end after an own delete that removed its
	// last rows (0: none): rowids above it may be given again.
	rescan int64
}

func (f *ledgerFollow) takeAppend(runID string, seq int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	seqs := f.appends[runID]
	if _, ok := seqs[seq]; !ok {
		return false
	}
	delete(seqs, seq)
	if len(seqs) == 0 {
		delete(f.appends, runID)
	}
	return true
}

func (f *ledgerFollow) takeDelete(runID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deletes[runID] == 0 {
		return false
	}
	if f.deletes[runID]--; f.deletes[runID] == 0 {
		delete(f.deletes, runID)
	}
	return true
}

// takeRescan returns the end an own delete left (top when none) and
// forgets it.
func (f *ledgerFollow) takeRescan(top int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rescan == 0 {
		return top
	}
	r := f.rescan - 1
	f.rescan = 0
	return r
}

// ownWrites notes a store's own ledger appends and deletes for its
// ListenLedger calls. Notes are made in the writer turn, inside the
// transaction, and undone by settle when it does not commit.
type ownWrites struct {
	mu      sync.Mutex
	follows []*ledgerFollow
	pending []ownWrite // the transaction's, in the writer turn
}

type ownWrite struct {
	runID      string
	first      int64 // appends: the seqs first .. first+n-1
	n          int
	deleted    bool
	top, after int64 // deletes: the ledger's highest rowid before and after
}

func (o *ownWrites) add(f *ledgerFollow) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.follows = append(o.follows, f)
}

func (o *ownWrites) remove(f *ledgerFollow) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, g := range o.follows {
		if g == f {
			o.follows = append(o.follows[:i], o.follows[i+1:]...)
			return
		}
	}
}

// following reports whether a ListenLedger call is under way.
func (o *ownWrites) following() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.follows) > 0
}

// appended notes records first .. first+n-1 of runID.
func (o *ownWrites) appended(runID string, first int64, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.follows) == 0 {
		return
	}
	o.pending = append(o.pending, ownWrite{runID: runID, first: first, n: n})
	for _, f := range o.follows {
		f.mu.Lock()
		seqs := f.appends[runID]
		if seqs == nil {
			seqs = map[int64]struct{}{}
			f.appends[runID] = seqs
		}
		for i := range int64(n) {
			seqs[first+i] = struct{}{}
		}
		f.mu.Unlock()
	}
}

// deleted notes the delete of runID's ledger, which took the ledger's
// highest rowid from top to after.
func (o *ownWrites) deleted(runID string, top, after int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.follows) == 0 {
		return
	}
	o.pending = append(o.pending, ownWrite{runID: runID, deleted: true, top: top, after: after})
	for _, f := range o.follows {
		f.mu.Lock()
		f.deletes[runID]++
		f.mu.Unlock()
	}
}

// settle ends the transaction's notes: kept when it committed (an end
// left by a delete is handed to the follows), undone when it did not.
func (o *ownWrites) settle(committed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) == 0 {
		return
	}
	for _, f := range o.follows {
		f.mu.Lock()
		for _, w := range o.pending {
			switch {
			case committed && w.deleted:
				// Its rows are gone: notes of appends to them would never
				// be found, and the seqs start again from 1.
				delete(f.appends, w.runID)
				if w.after < w.top && (f.rescan == 0 || w.after+1 < f.rescan) {
					f.rescan = w.after + 1 // stored +1: 0 means none
				}
			case committed:
			case w.deleted:
				if f.deletes[w.runID]--; f.deletes[w.runID] <= 0 {
					delete(f.deletes, w.runID)
				}
			default:
				for i := range int64(w.n) {
					delete(f.appends[w.runID], w.first+i)
				}
				if len(f.appends[w.runID]) == 0 {
					delete(f.appends, w.runID)
				}
			}
		}
		f.mu.Unlock()
	}
	o.pending = o.pending[:0]
}
