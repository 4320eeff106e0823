package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

var ledgerFinderTests = []subtest{
	{"FindCompleted", testLedgerFinder},
	{"EmptyKey", testFinderEmptyKey},
}

func testLedgerFinder(t *testing.T, s store.Store) {
	f, ok := s.(store.LedgerFinder)
	if !ok {
		t.Skip("store does not implement store.LedgerFinder")
	}
	started := newRecord("run-1", "a", durable.StepStarted)
	started.IdempotencyKey = "k1"
	failed := newRecord("run-1", "a", durable.StepFailed)
	failed.IdempotencyKey = "k1"
	other := newRecord("run-1", "b", durable.StepCompleted)
	other.IdempotencyKey = "k2"
	done := newRecord("run-1", "a", durable.StepCompleted)
	done.IdempotencyKey = "k1"
	done.Result = map[string]any{"content": "first"}
	later := newRecord("run-1", "a", durable.StepCompleted)
	later.IdempotencyKey = "k1"
	create(t, s, newRun("run-1", runOpts{}), started, failed, other)
	if err := s.LedgerAppend(t.Context(), "run-1", []*durable.StepRecord{done, later}); err != nil {
		t.Fatal(err)
	}
	got, err := f.LedgerFindCompleted(t.Context(), "run-1", "k1")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted(k1) = %v, %v", got, err)
	}
	if got.StepID != done.StepID || got.Seq != 4 {
		t.Errorf("LedgerFindCompleted(k1) = step %s seq %d, want the first completed record (%s, seq 4)", got.StepID, got.Seq, done.StepID)
	}
	if g, w := recordJSON(t, got), recordJSON(t, done); g != w {
		t.Errorf("found record:\n got %s\nwant %s", g, w)
	}
	for _, c := range []struct{ run, key string }{{"run-1", "missing"}, {"run-2", "k1"}} {
		if got, err := f.LedgerFindCompleted(t.Context(), c.run, c.key); err != nil || got != nil {
			t.Errorf("LedgerFindCompleted(%s, %s) = %v, %v; want nil, nil", c.run, c.key, got, err)
		}
	}
}

var claimerTests = []subtest{
	{"ClaimExpireRelease", testClaimer},
	{"StoreClock", testClaimStoreClock},
	{"Edges", testClaimEdges},
	{"ExpiresAtTTL", testClaimExpiresAtTTL},
	{"NonUTF8Owners", testClaimNonUTF8Owners},
	{"WithoutRun", testClaimWithoutRun},
	{"RenewOfLapsedForeignClaim", testClaimRenewOfLapsedForeignClaim},
	{"RenewExtendsByOneTTL", testClaimRenewExtendsByOneTTL},
	{"FromWithoutForce", testClaimFromWithoutForce},
}

// testClaimExpiresAtTTL: a claim is live until its TTL has passed and
// another owner takes it at exactly claim time + TTL (expires_at <= now),
// on every backend alike.
func testClaimExpiresAtTTL(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	create(t, s, newRun("run-1", runOpts{}))
	claim := func(owner string, now time.Duration) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: 10 * time.Second, Now: base.Add(now)})
	}
	if err := claim("a", 0); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := claim("b", 10*time.Second-time.Millisecond); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim a millisecond before the TTL ends: err = %v, want ErrConflict", err)
	}
	if err := claim("b", 10*time.Second); err != nil {
		t.Errorf("claim when the TTL ends: %v, want it taken", err)
	}
}

func testClaimer(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	create(t, s, newRun("run-1", runOpts{}))
	claim := func(owner string, now time.Duration) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: 10 * time.Second, Now: base.Add(now)})
	}
	if err := claim("a", 0); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := claim("b", 5*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim of a live claim: err = %v, want ErrConflict", err)
	}
	// The owner renews: the claim now lives until +15s.
	if err := claim("a", 5*time.Second); err != nil {
		t.Errorf("renewal: %v", err)
	}
	if err := claim("b", 12*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim of a renewed claim: err = %v, want ErrConflict", err)
	}
	// After expiry another owner takes it.
	if err := claim("b", 16*time.Second); err != nil {
		t.Errorf("claim of an expired claim: %v", err)
	}
	if err := claim("a", 17*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("old owner reclaiming: err = %v, want ErrConflict", err)
	}
	// Releasing by a non-owner does nothing; the owner's release frees it.
	if err := c.RunRelease(t.Context(), "run-1", "a"); err != nil {
		t.Errorf("release by a non-owner: %v", err)
	}
	if err := claim("a", 18*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim after a non-owner release: err = %v, want ErrConflict", err)
	}
	if err := c.RunRelease(t.Context(), "run-1", "b"); err != nil {
		t.Errorf("release: %v", err)
	}
	if err := claim("a", 19*time.Second); err != nil {
		t.Errorf("claim after release: %v", err)
	}
	if err := c.RunRelease(t.Context(), "unknown", "a"); err != nil {
		t.Errorf("release of an unclaimed run: %v", err)
	}
	// A forced claim takes a live claim; its owner's renewal then fails.
	force := &store.RunClaimParams{RunID: "run-1", Owner: "b", TTL: 10 * time.Second, Now: base.Add(20 * time.Second), Force: true}
	if err := c.RunClaim(t.Context(), force); err != nil {
		t.Errorf("forced claim of a live claim: %v", err)
	}
	if err := claim("a", 21*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal by the owner a forced claim took it from: err = %v, want ErrConflict", err)
	}
	if err := claim("b", 22*time.Second); err != nil {
		t.Errorf("renewal by the forced claim's owner: %v", err)
	}
	// A renewal only extends the owner's own claim: never one another
	// owner holds, nor one released meanwhile.
	renew := func(owner string, now time.Duration) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: 10 * time.Second, Now: base.Add(now), Renew: true})
	}
	if err := renew("b", 23*time.Second); err != nil {
		t.Errorf("renewal of the owner's claim: %v", err)
	}
	if err := renew("a", 24*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal of a claim another owner holds: err = %v, want ErrConflict", err)
	}
	if err := c.RunRelease(t.Context(), "run-1", "b"); err != nil {
		t.Fatal(err)
	}
	if err := renew("b", 25*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal of a released claim: err = %v, want ErrConflict", err)
	}
	if err := claim("a", 26*time.Second); err != nil {
		t.Errorf("claim after the refused renewal: %v", err)
	}
	// A refused claim names the holder; a forced claim From an owner takes
	// the claim from that owner only (a runner taking over a run it saw
	// idle under a dead runner must not take it from one that took it
	// over first).
	var held *store.ClaimHeldError
	if err := claim("b", 27*time.Second); !errors.As(err, &held) || held.Owner != "a" || !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim of a's live claim: err = %v, want a ClaimHeldError naming a (an ErrConflict)", err)
	}
	forceFrom := func(owner, from string, now time.Duration) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: 10 * time.Second, Now: base.Add(now), Force: true, From: from})
	}
	if err := forceFrom("b", "x", 28*time.Second); !errors.As(err, &held) || held.Owner != "a" {
		t.Errorf("forced claim from x of a's claim: err = %v, want a ClaimHeldError naming a", err)
	}
	if err := forceFrom("b", "a", 29*time.Second); err != nil {
		t.Errorf("forced claim from a of a's claim: %v", err)
	}
	if err := forceFrom("c", "a", 30*time.Second); !errors.As(err, &held) || held.Owner != "b" {
		t.Errorf("forced claim from a once b took it over: err = %v, want a ClaimHeldError naming b", err)
	}
	if err := renew("b", 31*time.Second); err != nil {
		t.Errorf("renewal by the owner a second forced claim left alone: %v", err)
	}
}
