package scheduler

import (
	"context"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// WakeStore wraps a store so that a scheduler in the same process learns
// at once about a deadline written by a commit, instead of at its next
// poll: give the runtime a WakeStore and the scheduler built on that
// runtime listens to it (every scheduler on it, while its loop runs).
// Commits are passed through unchanged; the signal never blocks them.
type WakeStore struct {
	store.Wrapper
	mu        sync.Mutex
	listeners map[chan struct{}]struct{}
}

var (
	_ store.Store         = (*WakeStore)(nil)
	_ store.CopyingWriter = (*WakeStore)(nil)
)

// NewWakeStore wraps inner.
func NewWakeStore(inner store.Store) *WakeStore {
	return &WakeStore{Wrapper: store.Wrapper{Store: inner}, listeners: map[chan struct{}]struct{}{}}
}

// listen returns a channel that receives a signal (coalesced: one slot)
// after each commit of a deadline, and the function that stops it.
func (w *WakeStore) listen() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.listeners[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.listeners, ch)
		w.mu.Unlock()
	}
}

// signal wakes every listener without blocking: a full slot already
// holds a wake its loop has not taken yet.
func (w *WakeStore) signal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.listeners {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// RunCommit commits, then signals when the run now waits with a deadline.
func (w *WakeStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	_, err := w.RunCommitStored(ctx, p)
	return err
}

// RunCommitStored is RunCommit returning the records as the inner store
// stored them (store.CopyingWriter), for a decorator above this one.
func (w *WakeStore) RunCommitStored(ctx context.Context, p *store.CommitParams) ([]*durable.StepRecord, error) {
	var deadline bool
	if p.Run != nil {
		_, deadline = store.Deadline(p.Run) // before the commit: it may hand p.Run over
	}
	stored, err := store.CommitStored(ctx, w.Store, p)
	if err == nil && deadline {
		w.signal()
	}
	return stored, err
}

// LedgerAppendStored passes the inner store's stored records on
// (store.CopyingWriter).
func (w *WakeStore) LedgerAppendStored(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error) {
	return store.AppendStored(ctx, w.Store, runID, records)
}
