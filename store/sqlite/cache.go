package sqlite

import (
	"container/list"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
)

// DefaultCacheBytes is the cache bound of a store opened exclusively when
// Config.CacheBytes is 0: the JSON of some 4,000 runs the size of the
// benchmark's W2 (state and ledger), a working set of active runs; older
// ones are read from the file (tens of µs). The cache costs about twice
// what it counts in heap, and filling a larger one costs fresh memory: at
// 64 MB, 10,000-run W2 peaked at 145 MB of RSS with 2.5 page faults per
// run, at 16 MB at 90–94 MB with 1.2 (1,000-run workloads never fill it).
const DefaultCacheBytes = 16 << 20

// hotCache keeps the runs (their run_json) and ledgers (frozen
// StepRecord.StoredCopy copies) the store committed or read most
// recently (a waiting run's records excepted: see Store.cacheCommitted).
// It exists only for a database the store opened exclusively:
// no other connection can change the file, so what the store committed is
// what the file holds, and a hot read skips the query and the JSON decode
// and returns the same values a read from disk would. It is bounded by the
// JSON size of what it holds, least recently used runs going first. It is
// only touched under Store.redo.mu in a store with a redo log (which also
// serves hits and commits from it without the writer turn), and otherwise
// while the writer turn (Store.wsem) is held.
type hotCache struct {
	limit int64
	size  int64
	runs  map[string]*list.Element // values are *hotRun
	lru   list.List                // front: most recently used
	// handedRun is the entry holding a handed-over state, if any: one at
	// most, so that such states, which the size does not count, cost one
	// run's memory.
	handedRun *hotRun
}

// hotRun is what the cache knows of one run. The state and the ledger are
// known independently: a run's ledger may be cached while its state is
// not (and a ledger may exist without a run).
type hotRun struct {
	id string
	// stateText is the run_json of the cached state ("" when not cached)
	// and stateVersion its version. The cache keeps text, not decoded
	// values: a hit decodes it, so it returns exactly what a read of the
	// row would, and the cache costs what it counts, in memory the
	// collector does not scan.
	stateText    string
	stateVersion int64
	stateSize    int64
	// stateIndexed: the cached state has a deadline, so wait_index has a
	// row for the run (the store keeps the two in step).
	stateIndexed bool
	// handed is the state object a committer gave up with the state text
	// (store.CommitParams.Handoff): the next state read returns it instead
	// of a decode of the text, once.
	handed *durable.RunState

	ledger      []*frozen.Record // the whole ledger when ledgerKnown
	ledgerSize  int64
	ledgerKnown bool
	lastSeq     int64 // the run's highest seq when seqKnown
	seqKnown    bool
}

// entryOverhead is what an entry counts for beyond its JSON, so that
// entries holding only a last seq are bounded too.
const entryOverhead = 128

func newHotCache(limit int64) *hotCache {
	return &hotCache{limit: limit, runs: map[string]*list.Element{}}
}

// entry returns the run's entry, marking it most recently used; create
// adds one when missing.
func (c *hotCache) entry(id string, create bool) *hotRun {
	if el, ok := c.runs[id]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*hotRun)
	}
	if !create {
		return nil
	}
	h := &hotRun{id: id}
	c.runs[id] = c.lru.PushFront(h)
	c.size += entryOverhead
	return h
}

// state returns the cached state of id, decoded afresh (or the object
// handed over with it), or nil.
func (c *hotCache) state(id string) *durable.RunState {
	h := c.entry(id, false)
	if h == nil || h.stateText == "" {
		return nil
	}
	if r := h.handed; r != nil {
		c.unhand(h)
		return r
	}
	r, err := durable.UnmarshalRunString(h.stateText)
	if err != nil { // not reached: the text was encoded by this store
		c.dropState(id)
		return nil
	}
	r.Version = h.stateVersion
	return r
}

// putState caches the run_json text of a run at version, and whether it
// has a wait_index row; the cache keeps text, so the caller passes a
// string no buffer will overwrite.
func (c *hotCache) putState(id, text string, version int64, indexed bool) {
	size := int64(len(text))
	if size > c.limit/8 || text == "" {
		c.dropState(id)
		return
	}
	h := c.entry(id, true)
	c.size += size - h.stateSize
	h.stateText, h.stateVersion, h.stateSize, h.stateIndexed = text, version, size, indexed
	c.unhand(h)
	c.evict()
}

// hand keeps r, whose text the cache holds at r's version, to be returned
// by the next state read of the run instead of a decode (see
// store.CommitParams.Handoff). A state handed earlier for another run is
// let go.
func (c *hotCache) hand(r *durable.RunState) {
	el, ok := c.runs[r.RunID] // a peek: putState has just used the entry
	if !ok {
		return
	}
	h := el.Value.(*hotRun)
	if h.stateText == "" || h.stateVersion != r.Version {
		return
	}
	if c.handedRun != nil {
		c.unhand(c.handedRun)
	}
	h.handed, c.handedRun = r, h
}

func (c *hotCache) unhand(h *hotRun) {
	if h.handed != nil {
		h.handed, c.handedRun = nil, nil
	}
}

// unindexed reports that the cache holds the run's state and that state
// has no wait_index row.
func (c *hotCache) unindexed(id string) bool {
	el, ok := c.runs[id] // a peek: not a use of the entry
	if !ok {
		return false
	}
	h := el.Value.(*hotRun)
	return h.stateText != "" && !h.stateIndexed
}

func (c *hotCache) dropState(id string) {
	if h := c.entry(id, false); h != nil {
		c.size -= h.stateSize
		h.stateText, h.stateVersion, h.stateSize, h.stateIndexed = "", 0, 0, false
		c.unhand(h)
		c.removeIfEmpty(h)
	}
}

// lastSeq returns the run's highest ledger seq when the cache knows it.
func (c *hotCache) lastSeq(id string) (int64, bool) {
	if h := c.entry(id, false); h != nil && h.seqKnown {
		return h.lastSeq, true
	}
	return 0, false
}

// appended records that recs (owned by the cache now, seqs set, JSON size
// size in all) were committed after the run's previous last seq. A run
// whose ledger was empty before now has a known whole ledger.
func (c *hotCache) appended(id string, recs []*frozen.Record, size int64) {
	if len(recs) == 0 {
		return
	}
	h := c.entry(id, true)
	first := recs[0].Head().Seq
	if h.seqKnown && first != h.lastSeq+1 {
		c.forgetLedger(h) // cannot happen while the store owns the file; stay safe
	}
	switch {
	case h.ledgerKnown:
		h.ledger = append(h.ledger, recs...)
		h.ledgerSize += size
		c.size += size
	case first == 1:
		h.ledger, h.ledgerSize, h.ledgerKnown = recs, size, true
		c.size += size
	}
	h.lastSeq, h.seqKnown = recs[len(recs)-1].Head().Seq, true
	if h.ledgerSize > c.limit/8 {
		c.forgetLedger(h)
	}
	c.evict()
}

// parked forgets the records the cache holds of a run that now waits,
// and records last as its last seq when the commit appended some (else
// the last seq stays as known, or unknown).
func (c *hotCache) parked(id string, last int64, appended bool) {
	h := c.entry(id, true)
	c.forgetLedger(h)
	if appended {
		h.lastSeq, h.seqKnown = last, true
	}
	c.removeIfEmpty(h)
}

// wantsRecords reports whether appended would keep records of id from
// seq first on: they start its ledger, or the cache holds all before them.
func (c *hotCache) wantsRecords(id string, first int64) bool {
	if first == 1 {
		return true
	}
	el, ok := c.runs[id] // a peek: appended or advanced follows
	return ok && el.Value.(*hotRun).ledgerKnown
}

// advanced records last as the run's last seq, for records committed
// after it that the cache does not keep (wantsRecords is false).
func (c *hotCache) advanced(id string, last int64) {
	h := c.entry(id, true)
	h.lastSeq, h.seqKnown = last, true
	c.evict() // a new entry counts too
}

// ledger returns the cached whole ledger of id (shared, not to be
// modified) when it is known.
func (c *hotCache) ledger(id string) ([]*frozen.Record, bool) {
	if h := c.entry(id, false); h != nil && h.ledgerKnown {
		return h.ledger, true
	}
	return nil, false
}

// putLedger caches the whole ledger of id, just read from disk, and last,
// the highest seq of its rows. That is the last record's seq unless rows
// after it were skipped as unreadable (LedgerList): their seqs stay taken,
// so the next append must go above them.
func (c *hotCache) putLedger(id string, recs []*frozen.Record, size, last int64) {
	if size > c.limit/8 {
		return
	}
	h := c.entry(id, true)
	c.size += size - h.ledgerSize
	h.ledger, h.ledgerSize, h.ledgerKnown = recs, size, true
	h.lastSeq, h.seqKnown = last, true
	c.evict()
}

// ledgerDeleted records that the run's ledger is now empty.
func (c *hotCache) ledgerDeleted(id string) {
	h := c.entry(id, true)
	c.size -= h.ledgerSize
	h.ledger, h.ledgerSize, h.ledgerKnown = nil, 0, true
	h.lastSeq, h.seqKnown = 0, true
	c.evict() // a new entry counts too
}

// ledgerUnknown forgets what the cache knew of the run's ledger.
func (c *hotCache) ledgerUnknown(id string) {
	if h := c.entry(id, false); h != nil {
		c.forgetLedger(h)
		h.lastSeq, h.seqKnown = 0, false
		c.removeIfEmpty(h)
	}
}

func (c *hotCache) forgetLedger(h *hotRun) {
	c.size -= h.ledgerSize
	h.ledger, h.ledgerSize, h.ledgerKnown = nil, 0, false
}

func (c *hotCache) removeIfEmpty(h *hotRun) {
	if h.stateText == "" && !h.ledgerKnown && !h.seqKnown {
		c.remove(h)
	}
}

func (c *hotCache) remove(h *hotRun) {
	c.unhand(h)
	if el, ok := c.runs[h.id]; ok {
		c.lru.Remove(el)
		delete(c.runs, h.id)
		c.size -= entryOverhead + h.stateSize + h.ledgerSize
	}
}

// evict drops least recently used runs until the cache is within bounds.
func (c *hotCache) evict() {
	for c.size > c.limit {
		back := c.lru.Back()
		if back == nil {
			return
		}
		c.remove(back.Value.(*hotRun))
	}
}
