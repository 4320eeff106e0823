// Package observe lets in-process readers follow ledgers live. It wraps a
// store and, after every successful append, notifies subscribers with the
// records exactly as stored (hashes and sequence numbers included). Over
// a store that several processes share and that reports their appends
// (store.LedgerListener: PostgreSQL, and a SQLite store opened shared),
// Follow also wakes subscribers for what the other processes append, and
// tells them of the ledgers those delete.
//
// Notifications never block the writer: each subscription has a buffer,
// and when it is full the notification is dropped and the subscription is
// marked lagged. Followers therefore treat a notification as a wake-up and
// read the ledger from their cursor (LedgerList with After), which also
// covers what happened before they subscribed, and read once more when
// Lagged reports a drop. A delete (Event.Deleted) is never dropped, since
// no read from a cursor reveals it: it takes the place of the oldest
// buffered notification that is not a delete, and when the buffer holds
// nothing but deletes, they are merged into one for every run.
package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Event is a batch of records appended to one run's ledger. An event
// without Records is a wake-up (Follow): another process appended to the
// run's ledger, or, with an empty RunID, to ledgers this process may have
// missed; the follower reads from its cursor. An event with Deleted set
// says the run's ledger was deleted, through this store or (Follow) by
// another process: a ledger that grows again starts at seq 1, below the
// follower's cursor, so the follower reads it from the start; with an
// empty RunID (deletes merged in a full buffer, or Follow listening again
// after a failure), any of the ledgers it follows may have been deleted,
// and it reads each from the start. Each follower's Records are its own.
type Event struct {
	RunID   string
	Records []*durable.StepRecord
	Deleted bool
}

// Subscription is one follower.
type Subscription struct {
	// C receives the events; it is closed by Cancel.
	C      <-chan Event
	c      chan Event
	runID  string
	lagged atomic.Bool
	cancel func()
	// mu serializes the sends to c, so that a delete that makes room in a
	// full buffer (sendDeleted) finds the room still free.
	mu sync.Mutex
}

// Lagged reports (and clears) whether events were dropped because the
// buffer was full.
func (s *Subscription) Lagged() bool { return s.lagged.Swap(false) }

// Cancel ends the subscription and closes C. It is safe to call twice.
func (s *Subscription) Cancel() { s.cancel() }

// Store wraps a store.Store with ledger subscriptions.
type Store struct {
	store.Wrapper
	mu   sync.RWMutex
	subs map[*Subscription]struct{}
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.CopyingWriter = (*Store)(nil)
)

// Wrap returns inner with subscriptions.
func Wrap(inner store.Store) *Store {
	return &Store{Wrapper: store.Wrapper{Store: inner}, subs: map[*Subscription]struct{}{}}
}

// Subscribe follows the ledger of runID ("" follows every run) with a
// buffer of size events (minimum 1).
func (s *Store) Subscribe(runID string, size int) *Subscription {
	c := make(chan Event, max(size, 1))
	sub := &Subscription{C: c, c: c, runID: runID}
	var once sync.Once
	sub.cancel = func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.subs, sub)
			close(c)
			s.mu.Unlock()
		})
	}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	return sub
}

func (s *Store) notify(runID string, records []*durable.StepRecord) {
	if len(records) == 0 {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.subs) == 0 {
		return
	}
	copies := make([]*durable.StepRecord, len(records))
	for i, r := range records {
		// In the types a read gives, sharing nothing with the caller's
		// values (Clone copies maps and lists only, not a caller's
		// []string or struct). The write took the record, so it encodes.
		c, err := r.StoredCopy()
		if err != nil {
			c = r.Clone()
		}
		copies[i] = c
	}
	s.send(Event{RunID: runID, Records: copies})
}

// send delivers ev to the subscriptions that follow its run (every one
// for an empty RunID), each with records of its own; s.mu is held for
// reading.
func (s *Store) send(ev Event) {
	var to []*Subscription
	for sub := range s.subs {
		if ev.RunID == "" || sub.runID == "" || sub.runID == ev.RunID {
			to = append(to, sub)
		}
	}
	// Every follower but the last gets copies, all made before the last
	// is given ev.Records: a follower may change its records at once, and
	// a copy made from records another follower already owns would share
	// its changes, or race them.
	for i, sub := range to {
		e := ev
		if i < len(to)-1 && len(ev.Records) > 0 {
			e.Records = make([]*durable.StepRecord, len(ev.Records))
			for i, r := range ev.Records {
				e.Records[i] = r.Clone()
			}
		}
		sub.mu.Lock()
		select {
		case sub.c <- e:
		default:
			if e.Deleted {
				sub.sendDeleted(e)
			} else {
				sub.lagged.Store(true)
			}
		}
		sub.mu.Unlock()
	}
}

// sendDeleted delivers a delete that found the buffer full: a follower
// that lagged reads from its cursor, which a delete moves back to the
// start, so the delete must reach it. It is dropped only when a buffered
// delete already covers its run; otherwise it replaces the oldest event
// that is not a delete, or, when every buffered event is one, all of them
// are merged into one for every run (an empty RunID). sub.mu is held, so
// no other send takes the room made; the follower may take events
// meanwhile, which only makes more.
func (sub *Subscription) sendDeleted(e Event) {
	var queued []Event
	for drained := false; !drained; {
		select {
		case ev := <-sub.c:
			queued = append(queued, ev)
		default:
			drained = true
		}
	}
	covered, other := false, -1
	for i, ev := range queued {
		covered = covered || ev.Deleted && (ev.RunID == "" || ev.RunID == e.RunID)
		if !ev.Deleted && other < 0 {
			other = i
		}
	}
	switch {
	case covered:
	case len(queued) < cap(sub.c): // the follower made room meanwhile
		queued = append(queued, e)
	case other >= 0:
		queued = append(slices.Delete(queued, other, other+1), e)
		sub.lagged.Store(true)
	default:
		queued = []Event{{Deleted: true}}
	}
	for _, ev := range queued {
		sub.c <- ev // fits: only this send fills c, and it held these
	}
}

// wake delivers a wake-up for runID ("" for every subscription).
func (s *Store) wake(runID string) { s.heard(runID, false) }

// heard delivers what the listener of Follow reports: a wake-up for
// runID, or the delete of its ledger (Deleted set).
func (s *Store) heard(runID string, deleted bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.send(Event{RunID: runID, Deleted: deleted})
}

// FollowConfig configures Follow.
type FollowConfig struct {
	// Logger receives the listening failures; none when nil.
	Logger *slog.Logger
	// Ready, when set, is called each time listening starts: appends
	// committed from then on wake the subscribers.
	Ready func()
}

// Follow wakes subscribers for the appends other processes make, and
// sends them a Deleted event for each ledger those delete, through the
// wrapped store's store.LedgerListener, until ctx ends; it returns
// ctx's error, or at once an error wrapping errors.ErrUnsupported when the
// store reports no appends (a store one process owns needs none). When
// listening fails, it listens again after a pause (1 s, doubling up to
// 30 s) and then sends every subscription a Deleted event with an empty
// RunID: the appends and deletes made meanwhile went unreported, and a
// delete, unlike an append, is not found by a read from the cursor (a
// ledger deleted and grown again past it would be read from its middle).
func (s *Store) Follow(ctx context.Context, cfg FollowConfig) error {
	l, ok := s.Store.(store.LedgerListener)
	if !ok {
		return fmt.Errorf("observe: the store does not report other processes' appends: %w", errors.ErrUnsupported)
	}
	const firstPause, maxPause = time.Second, 30 * time.Second
	pause := firstPause
	for failures := 0; ; failures++ {
		ready := func() {
			pause = firstPause
			if failures > 0 {
				// Deletes made while nobody listened went unreported
				// too, and no read from a cursor reveals them.
				s.heard("", true)
			}
			if cfg.Ready != nil {
				cfg.Ready()
			}
		}
		err := l.ListenLedger(ctx, ready, s.heard)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errors.ErrUnsupported) {
			return err
		}
		if cfg.Logger != nil {
			cfg.Logger.WarnContext(ctx, "following other processes' ledger appends failed; listening again", "error", err, "pause", pause)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, maxPause)
	}
}

// LedgerDelete deletes the run's ledger, then tells its followers (see
// Event.Deleted), also when the delete failed: it may have removed part
// of the ledger.
func (s *Store) LedgerDelete(ctx context.Context, runID string) (int64, error) {
	n, err := s.Store.LedgerDelete(ctx, runID)
	if n > 0 || err != nil {
		s.mu.RLock()
		s.send(Event{RunID: runID, Deleted: true})
		s.mu.RUnlock()
	}
	return n, err
}

// RunCommit commits, then notifies the records as stored (see
// store.CopyingWriter).
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	_, err := s.RunCommitStored(ctx, p)
	return err
}

// RunCommitStored is RunCommit returning the records as the inner store
// stored them (store.CopyingWriter), so that a decorator above this one
// (another observe.Store) shows those, not the caller's.
func (s *Store) RunCommitStored(ctx context.Context, p *store.CommitParams) ([]*durable.StepRecord, error) {
	if p.Run == nil {
		return store.CommitStored(ctx, s.Store, p) // the inner store's error; nothing to notify
	}
	runID := p.Run.RunID // before the commit: it may hand p.Run over
	clearSeqs(p.Records)
	stored, err := store.CommitStored(ctx, s.Store, p)
	if err != nil {
		s.notifyAppended(runID, stored)
		return stored, err
	}
	s.notify(runID, stored)
	return stored, nil
}

// LedgerAppend appends, then notifies the records as stored.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	_, err := s.LedgerAppendStored(ctx, runID, records)
	return err
}

// LedgerAppendStored is LedgerAppend returning the records as the inner
// store stored them (store.CopyingWriter).
func (s *Store) LedgerAppendStored(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error) {
	clearSeqs(records)
	stored, err := store.AppendStored(ctx, s.Store, runID, records)
	if err != nil {
		s.notifyAppended(runID, stored)
		return stored, err
	}
	s.notify(runID, stored)
	return stored, nil
}

// clearSeqs zeroes the seqs a caller left in records (the store sets them
// whatever they hold): after a failed write, a Seq then says the store
// appended the record.
func clearSeqs(records []*durable.StepRecord) {
	for _, r := range records {
		r.Seq = 0
	}
}

// notifyAppended notifies, after a failed write, the records the store
// appended anyway (it gave them a Seq): a non-atomic store appends the
// records before it fails to save the state, and a replay does not append
// them again, so no later notification would carry them. When records are
// left without a Seq it also wakes the run's followers: a write whose
// answer was lost (a connection cut after the server committed) may be in
// the ledger all the same, and if it ended the run nothing later would
// wake them; a follower that finds nothing new reads once for nothing.
func (s *Store) notifyAppended(runID string, records []*durable.StepRecord) {
	n := 0
	for n < len(records) && records[n].Seq > 0 {
		n++
	}
	s.notify(runID, records[:n])
	if n < len(records) && runID != "" {
		s.wake(runID)
	}
}
