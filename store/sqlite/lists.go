package sqlite

import (
	"context"
	"fmt"
)

// Lists of runs newest first, by status or by workflow, are served by two
// indexes on the columns list_status and list_updated_at, which a commit
// does not change (migration 008). A new run's list columns are NULL (it
// is in idx_runs_unlisted only); a commit that changes a run whose columns
// are set records it in runs_list_dirty, in the same transaction (a
// trigger does it for Python's updates). The store copies status and
// updated_at into the list columns of the new and recorded runs
// (flushLists):
//   - before a list reads the list columns, in the same writer turn (in a
//     shared store, the same transaction), so lists are exact;
//   - once listFlushAt runs are recorded, so the set stays small;
//   - when the store is quiet (with the idle checkpoint), at open and at
//     close.
//
// A commit then writes its run's row (and a new run's entry in the last
// page of idx_runs_unlisted) instead of moving the run's entry in two
// indexes, which was a third of the pages a commit wrote; a flush moves
// the entries of many runs at once, and a run that starts and ends
// between two flushes gets one entry instead of two per commit. A kill
// loses nothing: a run is unlisted or recorded in the transaction that
// changes it.

// defaultListFlushRuns is listFlushAt. Over 3,000-run samples of W1, W2
// and W3b, flushes of 64, 128 and 256 runs did equally well; 512 and 2,048
// did worse (a bigger transaction's WAL batch is new memory the first
// time, and its pages are colder), and 1,024 did worse than 256 over
// 10,000 runs too.
const defaultListFlushRuns = 256

// markListStale records, inside a commit's transaction, that runID's list
// columns are stale. created is true for a new run, which is unlisted
// instead. A store that owns its file skips runs it created or recorded
// since the last flush; a shared store records every update (another
// process may have flushed).
func (s *Store) markListStale(ctx context.Context, runID string, created bool) error {
	if _, ok := s.listMarked[runID]; ok {
		return nil
	}
	if !created {
		if _, err := s.w.listMark.exec(ctx, runID); err != nil {
			return fmt.Errorf("recording a stale run list entry: %w", err)
		}
	}
	s.listPending = append(s.listPending, runID)
	return nil
}

// settleListMarks counts the stale runs the transaction just ended
// recorded, and remembers them (a store that owns its file) if it
// committed; a rolled back transaction recorded nothing.
func (s *Store) settleListMarks(committed bool) {
	if committed {
		s.listDirty += len(s.listPending)
		if s.listMarked != nil {
			for _, id := range s.listPending {
				s.listMarked[id] = struct{}{}
			}
		}
	}
	clear(s.listPending)
	s.listPending = s.listPending[:0]
}

// flushListStmts brings the list columns of the recorded runs up to date,
// inside the caller's transaction.
func (s *Store) flushListStmts(ctx context.Context) error {
	if _, err := s.w.listUnlisted.exec(ctx); err != nil {
		return fmt.Errorf("setting new runs' list columns: %w", err)
	}
	if _, err := s.w.listFlush.exec(ctx); err != nil {
		return fmt.Errorf("updating list columns: %w", err)
	}
	if _, err := s.w.listClear.exec(ctx); err != nil {
		return fmt.Errorf("clearing runs_list_dirty: %w", err)
	}
	return nil
}

// flushLists brings the list columns up to date in a transaction of its
// own. The caller holds the writer turn.
func (s *Store) flushLists(ctx context.Context) error {
	if err := s.inTx(ctx, s.flushListStmts); err != nil {
		return fmt.Errorf("sqlite: updating run lists: %w", err)
	}
	s.listDirty = 0
	clear(s.listMarked)
	return nil
}

// readFor is listRead for a query that reads the list columns, read for
// any other.
func (s *Store) readFor(ctx context.Context, lists bool) (*reading, error) {
	if lists {
		return s.listRead(ctx)
	}
	return s.read(ctx)
}

// listRead is read for a query of the list columns: they are brought up
// to date first, in the same writer turn. A shared store keeps the flush's
// transaction open until release, so that no other process commits
// between the flush and the query.
func (s *Store) listRead(ctx context.Context) (*reading, error) {
	if err := s.takeTurn(ctx); err != nil {
		return nil, err
	}
	wctx := context.WithoutCancel(ctx)
	if !s.shared {
		unlock, err := s.lockRedo(ctx)
		if err != nil {
			<-s.wsem
			return nil, err
		}
		if s.listDirty > 0 {
			if err := s.flushLists(wctx); err != nil {
				unlock()
				<-s.wsem
				return nil, err
			}
		}
		unlock() // the database holds what the read needs; see reading
		return &reading{readerStmts: &s.rw, db: s.wconn, cache: s.cache, redo: s.redo, release: func() { <-s.wsem }}, nil
	}
	err := s.w.run(func() error {
		if _, err := s.w.begin.exec(wctx); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := s.flushListStmts(wctx); err != nil {
			s.rollback(wctx)
			return err
		}
		return nil
	})
	if err != nil {
		<-s.wsem
		return nil, fmt.Errorf("sqlite: updating run lists: %w", err)
	}
	return &reading{readerStmts: &s.rw, db: s.wconn, release: func() {
		// A failed commit loses nothing: the runs stay recorded.
		if err := s.w.run(func() error {
			_, err := s.w.commit.exec(wctx)
			if err != nil {
				s.rollback(wctx)
			}
			return err
		}); err != nil {
			s.log.WarnContext(ctx, "committing the run lists' update failed", "error", err)
		} else {
			s.listDirty = 0
		}
		<-s.wsem
	}}, nil
}
