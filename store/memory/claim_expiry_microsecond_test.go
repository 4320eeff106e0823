package memory_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A claim's expiry must be
// judged as the durable stores judge it. SQLite keeps expires_at as
// durable.FormatTime text and compares it with FormatTime(now)
// (store/sqlite/stmts.go claimUpsert: `expires_at <= ?`), PostgreSQL as a
// timestamptz (pgx sends times truncated to the microsecond): both read
// Now and the expiry to the microsecond, so a's claim made at
// base+0.9µs with a 10s TTL has expired for a claim made at
// base+10s+0.5µs (both truncate to base+10s, and expires_at <= now takes
// it). The memory store compared nanoseconds (claims.go RunClaim:
// c.expires.After(now)) and refused b's claim with a ClaimHeldError: the
// same calls give another answer than on SQLite and PostgreSQL, while the
// memory store is the reference of the differential tests and "keeps ...
// times in UTC to the microsecond" like the durable stores (memory.go
// package doc; store.RunClaimParams: "Now is the time expiry is judged
// by").
func TestClaimExpiryJudgedToTheMicrosecondAsSQLite(t *testing.T) {
	ctx := t.Context()
	sq, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sq.Close() })
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	answers := map[string]error{}
	for _, b := range []struct {
		name string
		c    store.RunClaimer
	}{{"sqlite", sq}, {"memory", memory.New()}} {
		if err := b.c.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "a", TTL: 10 * time.Second,
			Now: base.Add(900 * time.Nanosecond)}); err != nil {
			t.Fatal(err)
		}
		answers[b.name] = b.c.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "b", TTL: 10 * time.Second,
			Now: base.Add(10*time.Second + 500*time.Nanosecond)})
	}
	if (answers["memory"] == nil) != (answers["sqlite"] == nil) {
		t.Errorf("claim of an expiring claim within its last microsecond: memory %v, sqlite %v; want the same answer",
			answers["memory"], answers["sqlite"])
	}
}
