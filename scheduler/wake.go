package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// WakeStore wraps a store so that a scheduler in the same process learns
// at once about a deadline written by a commit, instead of at its next
// poll: give the runtime a WakeStore and the scheduler built on that
// runtime listens to it. Commits are passed through unchanged; the
// signal never blocks them.
type WakeStore struct {
	store.Store
	wake chan struct{}
}

var _ store.Store = (*WakeStore)(nil)

// NewWakeStore wraps inner.
func NewWakeStore(inner store.Store) *WakeStore {
	return &WakeStore{Store: inner, wake: make(chan struct{}, 1)}
}

// RunCommit commits, then signals when the run now waits with a deadline.
func (w *WakeStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if err := w.Store.RunCommit(ctx, p); err != nil {
		return err
	}
	if _, ok := store.Deadline(p.Run); ok {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// AtomicCommit reports the inner store's atomicity.
func (w *WakeStore) AtomicCommit() bool { return store.IsAtomic(w.Store) }

// LedgerFindCompleted forwards the inner store's look-up.
func (w *WakeStore) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	return store.FindCompleted(ctx, w.Store, runID, key)
}

// RunClaim forwards to the inner store's claims.
func (w *WakeStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	c, ok := w.Store.(store.RunClaimer)
	if !ok {
		return fmt.Errorf("scheduler: the wrapped store has no claims: %w", errors.ErrUnsupported)
	}
	return c.RunClaim(ctx, p)
}

// RunRelease forwards to the inner store's claims.
func (w *WakeStore) RunRelease(ctx context.Context, runID, owner string) error {
	c, ok := w.Store.(store.RunClaimer)
	if !ok {
		return fmt.Errorf("scheduler: the wrapped store has no claims: %w", errors.ErrUnsupported)
	}
	return c.RunRelease(ctx, runID, owner)
}
