package sqlite

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// keyIndexBytes bounds the memory of a store's keyIndex: the keys of some
// 80,000 completed records.
const keyIndexBytes = 8 << 20

// keyOverhead is what a key counts for beyond its length (map entry,
// string header, seq).
const keyOverhead = 48

// keyIndex maps, for the runs LedgerFindCompleted looked up last, the
// idempotency key of each completed record (ledger.completed_key) to the
// seq of the first one, over the rows up to a seq it has read. A look-up
// reads only the rows after that seq, so a run that waits in a long loop,
// whose records the hot cache lets go of (Store.cacheCommitted), is not
// scanned whole at every turn: the ledger has no index on completed_key
// (migration 004 dropped it to write fewer pages per commit), and the
// primary key narrows a look-up to the run's rows, all of them.
//
// Nothing is added on the write path: rows are read when looked up, which
// also finds those other processes append to a shared database. Rows are
// never changed once written, except by a deletion of the run's ledger
// (LedgerDelete forgets the run, and a look-up in a shared store checks
// that the last row it read is still there) and by indexPythonRows, which
// fills in the keys of rows Python wrote in a form SQLite's JSON cannot
// read (it clears the index). It is bounded by its own LRU, independently
// of the hot cache, and has its own lock (a shared store looks up from
// the reader pool without the writer turn).
type keyIndex struct {
	mu   sync.Mutex
	size int64
	runs map[string]*list.Element // values are *runKeys
	lru  list.List                // front: most recently used
}

// runKeys is what the index knows of one run's ledger.
type runKeys struct {
	id      string
	through int64            // the rows up to this seq are indexed
	first   map[string]int64 // key -> seq of its first completed record
	size    int64
	// deletesSeen is the top of the ledger_deletes log before the rows
	// were read (a shared store): a delete of the run logged past it
	// means the rows read are gone, whatever is at their seqs now.
	deletesSeen int64
}

// keySeq is a row of completedKeysFrom.
type keySeq struct {
	key string // "" for a row that is not a completed record with a key
	seq int64
}

func newKeyIndex() *keyIndex {
	return &keyIndex{runs: map[string]*list.Element{}}
}

// use returns the run's entry (a new one when missing) and the seq it has
// read through.
func (x *keyIndex) use(id string) (*runKeys, int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if el, ok := x.runs[id]; ok {
		x.lru.MoveToFront(el)
		e := el.Value.(*runKeys)
		return e, e.through
	}
	e := &runKeys{id: id, first: map[string]int64{}, size: entryOverhead}
	x.runs[id] = x.lru.PushFront(e)
	x.size += e.size
	x.evict()
	return e, 0
}

// add records rows, read after e.through up to through, in e, and returns
// the seq of key's first completed record. Rows read by a look-up that
// started before the entry was forgotten or evicted answer that look-up
// only.
func (x *keyIndex) add(e *runKeys, rows []keySeq, through, deletesSeen int64, key string) (int64, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	seq, ok := e.first[key]
	for _, r := range rows {
		if r.key == key && (!ok || r.seq < seq) {
			seq, ok = r.seq, true
		}
	}
	if el, live := x.runs[e.id]; !live || el.Value != e {
		return seq, ok
	}
	for _, r := range rows {
		if r.key == "" {
			continue
		}
		if old, seen := e.first[r.key]; !seen || r.seq < old {
			if !seen {
				n := int64(len(r.key) + keyOverhead)
				e.size += n
				x.size += n
			}
			e.first[r.key] = r.seq
		}
	}
	e.through = max(e.through, through)
	e.deletesSeen = max(e.deletesSeen, deletesSeen)
	x.evict()
	return seq, ok
}

// forget drops what the index knows of the run's ledger.
func (x *keyIndex) forget(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if el, ok := x.runs[id]; ok {
		x.remove(el)
	}
}

// clear drops everything.
func (x *keyIndex) clear() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.runs, x.size = map[string]*list.Element{}, 0
	x.lru.Init()
}

func (x *keyIndex) remove(el *list.Element) {
	e := el.Value.(*runKeys)
	x.lru.Remove(el)
	delete(x.runs, e.id)
	x.size -= e.size
}

func (x *keyIndex) evict() {
	for x.size > keyIndexBytes {
		back := x.lru.Back()
		if back == nil {
			return
		}
		x.remove(back)
	}
}

// errRowGone: the last row the index read of a run is no longer there.
var errRowGone = errors.New("indexed ledger row deleted")

// completedKeysFrom reads the completed keys of runID's rows from seq from
// on (all rows when from is 0) and returns them with the last seq read
// (from when none). Row from must still be there (errRowGone): else the
// ledger was deleted, by another process, since it was read. A Python row
// whose key no process has filled in yet (python_unindexed) ends what
// counts as read just before it, so that the next look-up reads it again,
// with its key once indexPythonRows (of any process) has run.
func (s *Store) completedKeysFrom(ctx context.Context, rd *reading, runID string, from int64) ([]keySeq, int64, error) {
	rows, err := rd.completedKeys.QueryContext(ctx, runID, from)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []keySeq
	last, first := from, true
	var pendingAt int64 // the first row still to be indexed, 0 when none
	for rows.Next() {
		var seq int64
		var key sql.RawBytes // NULL: not a completed record
		var pending bool
		if err := rows.Scan(&seq, &key, &pending); err != nil {
			return nil, 0, err
		}
		s.findRows.Add(1)
		if first && from > 0 && seq != from {
			return nil, 0, errRowGone
		}
		first = false
		last = seq
		if pending && pendingAt == 0 {
			pendingAt = seq
		}
		if len(key) > 0 {
			out = append(out, keySeq{key: string(key), seq: seq})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if first && from > 0 {
		return nil, 0, errRowGone
	}
	if pendingAt > 0 {
		last = pendingAt - 1 // seqs are contiguous: that row exists (or 0: all rows)
	}
	return out, last, nil
}

// findIndexed is LedgerFindCompleted from the key index: the rows after
// the ones it has read are read and added, and the record the index names
// is read and checked. It reports false when it cannot answer: the record
// does not decode or disagrees with its key, and the caller scans.
func (s *Store) findIndexed(ctx context.Context, rd *reading, runID, key string) (*durable.StepRecord, bool, error) {
	e, through := s.keys.use(runID)
	var deletesTop int64
	if s.shared {
		// Another process may have deleted the ledger and written it
		// again since the rows were read, as long as before or longer:
		// the check that the last row read is still there passes, and
		// the rows below it would never be read again (their completed
		// records missed, their effects run again).
		top, deleted, err := s.ledgerDeletedSince(ctx, rd, runID, e)
		if err != nil {
			return nil, false, err
		}
		if deleted && through > 0 {
			s.keys.forget(runID)
			e, through = s.keys.use(runID)
		}
		deletesTop = top
	}
	var last int64
	var known bool
	rd.cached(func(c *hotCache) { last, known = c.lastSeq(runID) })
	var rows []keySeq
	if !known || last != through { // the cache knows when no row came since
		var err error
		rows, last, err = s.completedKeysFrom(ctx, rd, runID, through)
		if errors.Is(err, errRowGone) {
			s.keys.forget(runID)
			e, _ = s.keys.use(runID)
			rows, last, err = s.completedKeysFrom(ctx, rd, runID, 0)
		}
		if err != nil {
			return nil, false, err
		}
	}
	seq, ok := s.keys.add(e, rows, last, deletesTop, key)
	if !ok {
		return nil, true, nil
	}
	var text sql.RawBytes
	r, err := rd.recordAt.QueryContext(ctx, runID, seq)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	if !r.Next() {
		return nil, false, r.Err() // gone since: the scan decides
	}
	if err := r.Scan(&text); err != nil {
		return nil, false, err
	}
	s.findRows.Add(1)
	rec := store.ReadableRecord(ctx, s.log, runID, seq, text)
	if rec == nil || rec.Status != durable.StepCompleted || rec.IdempotencyKey != key {
		return nil, false, nil
	}
	return rec, true, r.Close()
}

// ledgerDeletedSince reads the top of the ledger_deletes log and whether a
// delete of the run was logged since e's rows were read (or may have been:
// the log was trimmed past that point).
func (s *Store) ledgerDeletedSince(ctx context.Context, rd *reading, runID string, e *runKeys) (top int64, deleted bool, err error) {
	s.keys.mu.Lock()
	seen := e.deletesSeen
	s.keys.mu.Unlock()
	var bottom int64
	if err := rd.deletesSince.QueryRowContext(ctx, seen, runID).Scan(&top, &deleted, &bottom); err != nil {
		return 0, false, fmt.Errorf("reading the ledger delete log: %w", err)
	}
	return top, deleted || bottom > seen+1, nil
}
