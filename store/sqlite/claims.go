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
// now), when p.Owner holds it or when p.Force says so, and then sets
// expires_at to now + TTL. A p.Renew claim only updates p.Owner's row.
// A zero p.Now means the current time.
func (s *Store) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	nowText := durable.FormatTime(now)
	var taken bool
	err := s.write(ctx, func(ctx context.Context) error {
		var n int64
		var err error
		if p.Renew {
			n, err = s.w.claimRenew.exec(ctx, durable.FormatTime(now.Add(p.TTL)), p.RunID, p.Owner)
		} else {
			n, err = s.w.claimUpsert.exec(ctx, p.RunID, p.Owner, durable.FormatTime(now.Add(p.TTL)), nowText, boolInt(p.Force))
		}
		taken = n > 0
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: claiming run %s: %w", p.RunID, err)
	}
	if !taken {
		return fmt.Errorf("sqlite: run %s is claimed by another owner: %w", p.RunID, store.ErrConflict)
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
