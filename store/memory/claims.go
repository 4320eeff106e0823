package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

type claim struct {
	owner   string
	expires time.Time
}

// RunClaim implements store.RunClaimer.
func (s *Store) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	// Expiry is judged to the microsecond, as the SQL stores keep times.
	expires := durable.NewTime(now.Add(p.TTL)).Time
	now = durable.NewTime(now).Time
	if c, ok := s.claims[p.RunID]; p.Renew && (!ok || c.owner != p.Owner) {
		return fmt.Errorf("memory: run %s is no longer claimed by %s: %w", p.RunID, p.Owner, store.ErrConflict)
	}
	if c, ok := s.claims[p.RunID]; ok && c.owner != p.Owner && c.expires.After(now) && (!p.Force || p.From != "" && c.owner != p.From) {
		return fmt.Errorf("memory: %w", &store.ClaimHeldError{RunID: p.RunID, Owner: c.owner})
	}
	s.claims[p.RunID] = claim{owner: p.Owner, expires: expires}
	return nil
}

// RunRelease implements store.RunClaimer.
func (s *Store) RunRelease(ctx context.Context, runID, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.claims[runID]; ok && c.owner == owner {
		delete(s.claims, runID)
	}
	return nil
}
