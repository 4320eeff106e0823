// Package memory is an in-process Store. It keeps deep copies of what it
// is given, so it behaves like the durable backends (a caller's later
// mutation never leaks into the stored state, and every read returns a
// fresh copy), and it is the quickest store for tests. What it returns is
// what a durable store would read back from disk: JSON values in the
// decoder's Go types (numbers as json.Number, arrays as []any), times in
// UTC to the microsecond, so a workflow sees the same values on every
// store. The copies are kept frozen (internal/frozen): each value packed
// into one string, in well under half the memory of cloned maps and out
// of the garbage collector's scan.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
	"github.com/abstractframework/abstractgateway/store"
)

// Store is the in-memory store. The zero value is not usable; call New.
type Store struct {
	mu       sync.RWMutex
	runs     map[string]*entry
	ledgers  map[string][]*frozen.Record
	due      store.DueIndex
	commands []*durable.CommandRecord
	cmdSeq   int64 // last command seq issued; never reused, even after deletes
	cmdByID  map[string]int64
	cursors  map[string]int64
	claims   map[string]claim
	// handed is the last run committed with store.CommitParams.Handoff,
	// returned once by RunGet instead of a thawed copy while the run is at
	// its version. One at most: it costs one run's memory.
	handed atomic.Pointer[durable.RunState]
}

type entry struct {
	frozen.Run
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.AtomicCommitter = (*Store)(nil)
	_ store.LedgerFinder    = (*Store)(nil)
	_ store.RunClaimer      = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{
		runs:    map[string]*entry{},
		ledgers: map[string][]*frozen.Record{},
		cmdByID: map[string]int64{},
		cursors: map[string]int64{},
		claims:  map[string]claim{},
	}
}

// AtomicCommit reports that records and state are committed together.
func (s *Store) AtomicCommit() bool { return true }

// Close does nothing; it exists to satisfy store.Store.
func (s *Store) Close() error { return nil }

// RunCommit implements store.RunStore.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run == nil || p.Run.RunID == "" {
		return fmt.Errorf("memory: commit: run id is required")
	}
	if p.Create {
		if err := store.CheckNewRunIDs(p.Run); err != nil {
			return fmt.Errorf("memory: creating run: %w", err)
		}
	}
	if err := store.CheckRunReadable(p.Run); err != nil {
		return fmt.Errorf("memory: committing run %s: %w", p.Run.RunID, err)
	}
	id := p.Run.RunID
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, exists := s.runs[id]
	switch {
	case p.Create && exists:
		return fmt.Errorf("memory: creating run %s: %w", id, store.ErrAlreadyExists)
	case !p.Create && !exists:
		return fmt.Errorf("memory: committing run %s: %w", id, store.ErrNotFound)
	case !p.Create && cur.Head().Version != p.Run.Version:
		return fmt.Errorf("memory: committing run %s at version %d (stored %d): %w",
			id, p.Run.Version, cur.Head().Version, store.ErrConflict)
	}
	recs, err := s.freezeRecordsLocked(id, p.Records)
	if err != nil {
		return fmt.Errorf("memory: committing run %s: %w", id, err)
	}
	next := *p.Run // the run as committed, at its next version
	next.Version++
	run, err := frozen.NewStoredRun(&next)
	if err != nil {
		return fmt.Errorf("memory: committing run %s: %w", id, err)
	}
	p.Run.Version = next.Version
	if h := s.handed.Load(); h != nil && h.RunID == id {
		s.handed.Store(nil) // stale from now on
	}
	if p.Handoff {
		s.handed.Store(p.Run)
	}
	s.appendLocked(id, p.Records, recs)
	if exists {
		cur.Run = run
	} else {
		cur = &entry{Run: run}
		s.runs[id] = cur
	}
	s.due.Update(&next) // not the frozen head: the deadline depends on vars
	return nil
}

// freezeRecordsLocked returns the frozen copies of records as they would
// be appended to the run's ledger now, in the decoder's types (so that a
// read returns what a durable store would), or the error of one that
// cannot be encoded; the ledger is left unchanged either way.
func (s *Store) freezeRecordsLocked(runID string, records []*durable.StepRecord) ([]*frozen.Record, error) {
	next := int64(len(s.ledgers[runID])) + 1
	out := make([]*frozen.Record, len(records))
	for i, r := range records {
		f, err := frozen.NewStoredRecord(r, next+int64(i))
		if err != nil {
			return nil, fmt.Errorf("ledger record %d: %w", i+1, err)
		}
		out[i] = f
	}
	return out, nil
}

// appendLocked appends the frozen copies of records (freezeRecordsLocked)
// and gives the records the Seq their copies were frozen with.
func (s *Store) appendLocked(runID string, records []*durable.StepRecord, copies []*frozen.Record) {
	for i, r := range records {
		r.Seq = copies[i].Head().Seq
	}
	s.ledgers[runID] = append(s.ledgers[runID], copies...)
}

// RunGet implements store.RunStore.
func (s *Store) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.runs[runID]
	if !ok {
		return nil, fmt.Errorf("memory: run %s: %w", runID, store.ErrNotFound)
	}
	// The read lock lets other reads in: the swap makes sure one of them
	// at most gets the handed-over state.
	if h := s.handed.Load(); h != nil && h.RunID == runID && h.Version == e.Head().Version && s.handed.CompareAndSwap(h, nil) {
		return h, nil
	}
	return e.Thaw(), nil
}

// RunList implements store.RunStore.
func (s *Store) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	s.mu.RLock()
	var found []frozen.Run // copies: commits replace an entry's run; frozen values are never changed
	for _, e := range s.runs {
		if p.Matches(e.Head()) {
			found = append(found, e.Run)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(found, func(a, b frozen.Run) int {
		if c := b.Head().UpdatedAt.Compare(a.Head().UpdatedAt.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.Head().RunID, a.Head().RunID)
	})
	found = found[:min(len(found), store.EffectiveLimit(p.Limit))]
	out := make([]*durable.RunState, len(found))
	for i := range found {
		out[i] = found[i].Thaw()
	}
	return out, nil
}

// RunListDue implements store.RunStore.
func (s *Store) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.due.ListDue(p.Now, store.EffectiveLimit(p.Limit)), nil
}

// RunNextDue implements store.RunStore.
func (s *Store) RunNextDue(ctx context.Context) (durable.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.due.Next(), nil
}

// RunListChildren implements store.RunStore.
func (s *Store) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	if parentID == "" {
		return nil, nil // a root run has no parent: "" names none
	}
	s.mu.RLock()
	var es []entry // copies: commits replace an entry's run; frozen values are never changed
	for _, e := range s.runs {
		if r := e.Head(); r.ParentRunID == parentID && (status == "" || r.Status == status) {
			es = append(es, *e)
		}
	}
	s.mu.RUnlock()
	// Oldest first, then by run id: the order of every store.
	slices.SortFunc(es, func(a, b entry) int {
		ha, hb := a.Head(), b.Head()
		return cmp.Or(ha.CreatedAt.Compare(hb.CreatedAt.Time), strings.Compare(ha.RunID, hb.RunID))
	})
	out := make([]*durable.RunState, len(es))
	for i := range es {
		out[i] = es[i].Thaw()
	}
	return out, nil
}

// RunIndex implements store.RunStore.
func (s *Store) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	s.mu.RLock()
	var rows []store.RunIndexRow
	for _, e := range s.runs {
		row := store.IndexRow(e.Head()) // the head has no vars: the lifecycle is read below
		if lc, ok := e.Var(store.RunLifecycleKey); ok {
			row.RunLifecycle = store.RunLifecycle(map[string]any{store.RunLifecycleKey: lc})
		}
		if p.Matches(&row) {
			rows = append(rows, row)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(rows, func(a, b store.RunIndexRow) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.RunID, a.RunID)
	})
	return rows[:min(len(rows), store.EffectiveLimit(p.Limit))], nil
}

// RunDelete implements store.RunStore.
func (s *Store) RunDelete(ctx context.Context, runID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.runs[runID]
	delete(s.runs, runID)
	if h := s.handed.Load(); h != nil && h.RunID == runID {
		s.handed.Store(nil)
	}
	s.due.Remove(runID)
	return ok, nil
}

// LedgerAppend implements store.LedgerStore.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if runID == "" {
		return fmt.Errorf("memory: ledger append: run id is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.freezeRecordsLocked(runID, records)
	if err != nil {
		return fmt.Errorf("memory: appending to the ledger of run %s: %w", runID, err)
	}
	s.appendLocked(runID, records, recs)
	return nil
}

// LedgerList implements store.LedgerStore.
func (s *Store) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	led := s.ledgers[p.RunID]
	start := int(min(max(p.After, 0), int64(len(led))))
	end := len(led)
	if p.Limit > 0 && p.Limit < end-start { // not start+p.Limit: it may overflow
		end = start + p.Limit
	}
	out := make([]*durable.StepRecord, 0, end-start)
	for _, r := range led[start:end] {
		out = append(out, r.Thaw())
	}
	return out, nil
}

// LedgerCount implements store.LedgerStore.
func (s *Store) LedgerCount(ctx context.Context, runID string) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.ledgers[runID])), nil
}

// LedgerDelete implements store.LedgerStore.
func (s *Store) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.ledgers[runID])
	delete(s.ledgers, runID)
	return int64(n), nil
}

// LedgerFindCompleted implements store.LedgerFinder.
func (s *Store) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	if key == "" {
		return nil, nil // names no effect (store.FindCompleted)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.ledgers[runID] {
		if h := r.Head(); h.Status == durable.StepCompleted && h.IdempotencyKey == key {
			return r.Thaw(), nil
		}
	}
	return nil, nil
}
