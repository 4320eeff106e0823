package sqlite

import "context"

// CanonicalDue exposes canonicalDue to the external tests, which check it
// against migration 015's index.
const CanonicalDue = canonicalDue

// ForeignDueQuery exposes foreignDueQuery, whose plan the tests check.
const ForeignDueQuery = foreignDueQuery

// HoldRedoQueue keeps the redo log's goroutine from applying its queue
// (held) or lets it again; a store without a redo log has none to hold.
func HoldRedoQueue(s *Store, held bool) {
	if s.redo != nil {
		s.redo.heldForTest.Store(held)
	}
}

// RedoQueueLen is the number of commits queued in the redo log.
func RedoQueueLen(s *Store) int {
	if s.redo == nil {
		return 0
	}
	s.redo.mu.Lock()
	defer s.redo.mu.Unlock()
	return len(s.redo.pending)
}

// FindCompletedReads returns the number of ledger rows LedgerFindCompleted
// has read through its key index, and how many times it scanned a run's
// whole ledger in the database instead.
func FindCompletedReads(s *Store) (rows, scans int64) { return s.findRows.Load(), s.findScans.Load() }

// KeyIndexReadThrough is how far the key index counts runID's ledger as
// read after reading it from seq from on.
func KeyIndexReadThrough(s *Store, ctx context.Context, runID string, from int64) (int64, error) {
	rd, err := s.read(ctx)
	if err != nil {
		return 0, err
	}
	defer rd.release()
	_, last, err := s.completedKeysFrom(ctx, rd, runID, from)
	return last, err
}

// SetRedoRecordLimit lowers the bound on one redo record (ErrTooLarge), so
// that a test reaches it without a gigabyte write.
func SetRedoRecordLimit(s *Store, n int) {
	if s.redo != nil {
		s.redo.mu.Lock()
		s.redo.file.maxPayload = n
		s.redo.mu.Unlock()
	}
}
