package scheduler

import (
	"context"

	"github.com/abstractframework/abstractgateway/store"
)

// WakeStore wraps a store so that a scheduler in the same process learns
// at once about a deadline written by a commit, instead of at its next
// poll: give the runtime a WakeStore and the scheduler built on that
// runtime listens to it. Commits are passed through unchanged; the
// signal never blocks them.
type WakeStore struct {
	store.Wrapper
	wake chan struct{}
}

var _ store.Store = (*WakeStore)(nil)

// NewWakeStore wraps inner.
func NewWakeStore(inner store.Store) *WakeStore {
	return &WakeStore{Wrapper: store.Wrapper{Store: inner}, wake: make(chan struct{}, 1)}
}

// RunCommit commits, then signals when the run now waits with a deadline.
func (w *WakeStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	_, deadline := store.Deadline(p.Run) // before the commit: it may hand p.Run over
	if err := w.Store.RunCommit(ctx, p); err != nil {
		return err
	}
	if deadline {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return nil
}
