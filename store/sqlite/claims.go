package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// RunClaim implements store.RunClaimer with one upsert on run_claims: it
// takes the claim when there is none, when it has expired (expires_at <=
// now), when p.Owner holds it or when p.Force says so (from p.From only,
// when set), and then sets expires_at to now + TTL. A p.Renew claim only
// updates p.Owner's row. A refused claim reads who holds the run for its
// store.ClaimHeldError. A zero p.Now means the current time.
func (s *Store) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	nowText := durable.FormatTime(now)
	var taken bool
	var holder string
	err := s.write(ctx, func(ctx context.Context) error {
		var n int64
		var err error
		expires := durable.FormatTime(now.Add(p.TTL))
		switch {
		case p.Renew:
			n, err = s.w.claimRenew.exec(ctx, expires, p.RunID, p.Owner)
		case p.Force && p.From != "":
			n, err = s.w.claimFrom.exec(ctx, p.RunID, p.Owner, expires, nowText, p.From)
		default:
			n, err = s.w.claimUpsert.exec(ctx, p.RunID, p.Owner, expires, nowText, boolInt(p.Force))
		}
		taken = n > 0
		if err == nil && !taken && !p.Renew {
			holder, err = s.w.claimOwner.queryText(ctx, p.RunID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: claiming run %s: %w", p.RunID, err)
	}
	if !taken {
		if p.Renew {
			return fmt.Errorf("sqlite: run %s is no longer claimed by %s: %w", p.RunID, p.Owner, store.ErrConflict)
		}
		return fmt.Errorf("sqlite: %w", &store.ClaimHeldError{RunID: p.RunID, Owner: holder})
	}
	return nil
}

// RunRelease implements store.RunClaimer.
func (s *Store) RunRelease(ctx context.Context, runID, owner string) error {
	err := s.write(ctx, func(ctx context.Context) error {
		_, err := s.w.claimDelete.exec(ctx, runID, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: releasing run %s: %w", runID, err)
	}
	return nil
}

// boolInt is b as SQLite stores a boolean (the writer's raw statements
// bind no Go bool).
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
