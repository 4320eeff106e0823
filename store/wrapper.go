package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
)

// Wrapper is the base of store decorators (hash chain, subscriptions,
// offloading, wake-ups…). A decorator embeds it, overrides the methods it
// changes, and keeps the optional abilities of the store it wraps: Go's
// embedding of the Store interface alone would hide them, and the kernel
// would then treat an atomic store as non-atomic.
type Wrapper struct {
	Store
}

// Unwrap returns the decorated store.
func (w Wrapper) Unwrap() Store { return w.Store }

// HasClaims reports whether st claims runs: whether the innermost store
// under its decorators implements RunClaimer. Every Wrapper has RunClaim
// (passing it on, or failing with errors.ErrUnsupported), so a type check
// of a decorated store says nothing.
func HasClaims(st Store) bool {
	for {
		u, ok := st.(interface{ Unwrap() Store })
		if !ok {
			_, claims := st.(RunClaimer)
			return claims
		}
		st = u.Unwrap()
	}
}

// AtomicCommit reports the wrapped store's atomicity.
func (w Wrapper) AtomicCommit() bool { return IsAtomic(w.Store) }

// LedgerFindCompleted uses the wrapped store's fast path, or scans.
func (w Wrapper) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	return FindCompleted(ctx, w.Store, runID, key)
}

// ListenLedger forwards to the wrapped store's listener, or fails with
// errors.ErrUnsupported when it has none.
func (w Wrapper) ListenLedger(ctx context.Context, ready func(), wake func(runID string, deleted bool)) error {
	l, ok := w.Store.(LedgerListener)
	if !ok {
		return fmt.Errorf("the wrapped store has no ListenLedger: %w", errors.ErrUnsupported)
	}
	return l.ListenLedger(ctx, ready, wake)
}

// RunClaim forwards to the wrapped store's claims, or fails with
// errors.ErrUnsupported when it has none.
func (w Wrapper) RunClaim(ctx context.Context, p *RunClaimParams) error {
	c, ok := w.Store.(RunClaimer)
	if !ok {
		return fmt.Errorf("the wrapped store has no RunClaim: %w", errors.ErrUnsupported)
	}
	return c.RunClaim(ctx, p)
}

// RunRelease forwards to the wrapped store's claims, or fails with
// errors.ErrUnsupported when it has none.
func (w Wrapper) RunRelease(ctx context.Context, runID, owner string) error {
	c, ok := w.Store.(RunClaimer)
	if !ok {
		return fmt.Errorf("the wrapped store has no RunRelease: %w", errors.ErrUnsupported)
	}
	return c.RunRelease(ctx, runID, owner)
}
