package scheduler

import (
	"context"

	"github.com/abstractframework/abstractgateway/durable"
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

var (
	_ store.Store         = (*WakeStore)(nil)
	_ store.CopyingWriter = (*WakeStore)(nil)
)

// NewWakeStore wraps inner.
func NewWakeStore(inner store.Store) *WakeStore {
	return &WakeStore{Wrapper: store.Wrapper{Store: inner}, wake: make(chan struct{}, 1)}
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
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return stored, err
}

// LedgerAppendStored passes the inner store's stored records on
// (store.CopyingWriter).
func (w *WakeStore) LedgerAppendStored(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error) {
	return store.AppendStored(ctx, w.Store, runID, records)
}
