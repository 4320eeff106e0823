package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/store"
)

// RunClaim implements store.RunClaimer with one upsert on run_claims: it
// takes the claim when there is none, when it has expired (expires_at <=
// now), when p.Owner holds it or when p.Force says so (from p.From only,
// when set), and then sets expires_at to now + TTL. A p.Renew claim only
// updates p.Owner's row. A refused claim reads who holds the run for its
// store.ClaimHeldError. Racing claimers are serialised by the primary key: the loser's upsert
// waits for the winner's commit and then finds a live claim.
//
// A zero p.Now means the database server's clock, so runners on several
// machines judge expiry by one clock however far theirs drift; an explicit
// p.Now (a test clock) is used as given.
func (s *Store) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	var now any // NULL: the server's clock_timestamp()
	if !p.Now.IsZero() {
		now = p.Now
	}
	ctx, cancel, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: claiming run %s: %w", p.RunID, err)
	}
	defer cancel()
	if p.Renew {
		tag, err := s.pool.Exec(ctx, `UPDATE run_claims
			SET expires_at = COALESCE($3::timestamptz, clock_timestamp()) + make_interval(secs => $4::double precision)
			WHERE run_id = $1 AND owner = $2`, p.RunID, p.Owner, now, p.TTL.Seconds())
		if err != nil {
			return fmt.Errorf("postgres: renewing the claim on run %s: %w", p.RunID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("postgres: run %s is no longer claimed by %s: %w", p.RunID, p.Owner, store.ErrConflict)
		}
		return nil
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO run_claims (run_id, owner, expires_at)
		VALUES ($1, $2, COALESCE($4::timestamptz, clock_timestamp()) + make_interval(secs => $3::double precision))
		ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE run_claims.owner = excluded.owner OR run_claims.expires_at <= COALESCE($4::timestamptz, clock_timestamp())
			OR ($5::boolean AND ($6::text IS NULL OR run_claims.owner = $6::text))`,
		p.RunID, p.Owner, p.TTL.Seconds(), now, p.Force, nullString(p.From))
	if err != nil {
		return fmt.Errorf("postgres: claiming run %s: %w", p.RunID, err)
	}
	if tag.RowsAffected() == 0 {
		var holder string
		// Who holds it, for the error (gone by now if it was released).
		if err := s.pool.QueryRow(ctx, `SELECT owner FROM run_claims WHERE run_id = $1`, p.RunID).Scan(&holder); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: reading who claims run %s: %w", p.RunID, err)
		}
		return fmt.Errorf("postgres: %w", &store.ClaimHeldError{RunID: p.RunID, Owner: holder})
	}
	return nil
}

// RunRelease implements store.RunClaimer: it drops the claim if owner
// holds it.
func (s *Store) RunRelease(ctx context.Context, runID, owner string) error {
	ctx, cancel, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: releasing run %s: %w", runID, err)
	}
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM run_claims WHERE run_id = $1 AND owner = $2`, runID, owner); err != nil {
		return fmt.Errorf("postgres: releasing run %s: %w", runID, err)
	}
	return nil
}
