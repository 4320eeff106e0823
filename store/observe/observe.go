// Package observe lets in-process readers follow ledgers live. It wraps a
// store and, after every successful append, notifies subscribers with the
// records exactly as stored (hashes and sequence numbers included).
//
// Notifications never block the writer: each subscription has a buffer,
// and when it is full the notification is dropped and the subscription is
// marked lagged. Followers therefore treat a notification as a wake-up and
// read the ledger from their cursor (LedgerList with After), which also
// covers what happened before they subscribed.
package observe

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Event is a batch of records appended to one run's ledger.
type Event struct {
	RunID   string
	Records []*durable.StepRecord
}

// Subscription is one follower.
type Subscription struct {
	// C receives the events; it is closed by Cancel.
	C      <-chan Event
	c      chan Event
	runID  string
	lagged atomic.Bool
	cancel func()
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

var _ store.Store = (*Store)(nil)

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
		copies[i] = r.Clone()
	}
	ev := Event{RunID: runID, Records: copies}
	for sub := range s.subs {
		if sub.runID != "" && sub.runID != runID {
			continue
		}
		select {
		case sub.c <- ev:
		default:
			sub.lagged.Store(true)
		}
	}
}

// RunCommit commits, then notifies.
func (s *Store) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if err := s.Store.RunCommit(ctx, p); err != nil {
		return err
	}
	s.notify(p.Run.RunID, p.Records)
	return nil
}

// LedgerAppend appends, then notifies.
func (s *Store) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if err := s.Store.LedgerAppend(ctx, runID, records); err != nil {
		return err
	}
	s.notify(runID, records)
	return nil
}
