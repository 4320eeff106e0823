package postgres

import (
	"context"
	"fmt"

	"github.com/abstractframework/abstractgateway/store"
)

// RunClaim implements store.RunClaimer with one upsert on run_claims: it
// takes the claim when there is none, when it has expired (expires_at <=
// now), when p.Owner holds it or when p.Force says so (from p.From only,
// when set), and then sets expires_at to now + TTL. A p.Renew claim only
// updates p.Owner's row. A refused claim returns who holds the run, read
// by the same statement, in its store.ClaimHeldError. Racing claimers are serialised by the primary key: the loser's upsert
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
	caller := ctx
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: claiming run %s: %w", p.RunID, err)
	}
	defer done()
	if p.Renew {
		// One idempotent statement: the caller's deadline holds (a renewal
		// late by the write timeout is useless to a runner that gives its
		// claim up by its own clock, and holds it up).
		if dl, ok := caller.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl)
			defer cancel()
		}
		tag, err := conn.Exec(ctx, `UPDATE run_claims
			SET expires_at = COALESCE($3::timestamptz, clock_timestamp()) + make_interval(secs => $4::double precision)
			WHERE run_id = $1 AND owner = $2`, keyText(p.RunID), idText(p.Owner), now, p.TTL.Seconds())
		if err != nil {
			return fmt.Errorf("postgres: renewing the claim on run %s: %w", p.RunID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("postgres: run %s is no longer claimed by %s: %w", p.RunID, p.Owner, store.ErrConflict)
		}
		return nil
	}
	// A refused claim leaves the row as it is but still goes through the
	// update, so that RETURNING names the holder as of this statement: a
	// second query could find the claim released or taken by a third
	// runner meanwhile, and a taker passes that name on as From.
	var holder string
	err = conn.QueryRow(ctx, `INSERT INTO run_claims (run_id, owner, expires_at)
		VALUES ($1, $2, COALESCE($4::timestamptz, clock_timestamp()) + make_interval(secs => $3::double precision))
		ON CONFLICT (run_id) DO UPDATE SET (owner, expires_at) = (
			SELECT CASE WHEN t.takes THEN excluded.owner ELSE run_claims.owner END,
				CASE WHEN t.takes THEN excluded.expires_at ELSE run_claims.expires_at END
			FROM (SELECT `+claimTakes+` AS takes) AS t)
		RETURNING owner`,
		keyText(p.RunID), idText(p.Owner), p.TTL.Seconds(), now, p.Force, nullString(idText(p.From))).Scan(&holder)
	if err != nil {
		return fmt.Errorf("postgres: claiming run %s: %w", p.RunID, err)
	}
	// Compared as the column holds both: an owner that is not UTF-8 is
	// stored escaped (idText), which its raw bytes never equal.
	if holder != idText(p.Owner) {
		return fmt.Errorf("postgres: %w", &store.ClaimHeldError{RunID: p.RunID, Owner: idTextOf(holder)})
	}
	return nil
}

// claimTakes is the condition under which a claim replaces the stored
// one: the same owner, an expired claim, or a forced claim (from $6 only,
// when set). It is evaluated once per claim: clock_timestamp() moves
// within a statement, and two readings could keep the holder but extend
// its expiry.
const claimTakes = `(run_claims.owner = excluded.owner OR run_claims.expires_at <= COALESCE($4::timestamptz, clock_timestamp())
			OR ($5::boolean AND ($6::text IS NULL OR run_claims.owner = $6::text)))`

// RunRelease implements store.RunClaimer: it drops the claim if owner
// holds it.
func (s *Store) RunRelease(ctx context.Context, runID, owner string) error {
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: releasing run %s: %w", runID, err)
	}
	defer done()
	if _, err := conn.Exec(ctx, `DELETE FROM run_claims WHERE run_id = $1 AND owner = $2`, keyText(runID), idText(owner)); err != nil {
		return fmt.Errorf("postgres: releasing run %s: %w", runID, err)
	}
	return nil
}
