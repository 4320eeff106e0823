package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// testClaimWithoutRun: a claim's id need not name a run. A host leases
// what only one runner may do at a time under a reserved id (a gateway's
// command consumer, gateway-api §4.2, with several runner processes): the
// lease is taken, refused to another owner while live, renewed, released
// and taken by the other; it creates no run.
func testClaimWithoutRun(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	const lease = "__commands__:gateway_runner"
	claim := func(owner string, now time.Duration, renew bool) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: lease, Owner: owner, TTL: 10 * time.Second,
			Now: base.Add(now), Renew: renew})
	}
	if err := claim("a", 0, false); err != nil {
		t.Fatalf("lease without a run: %v", err)
	}
	if err := claim("b", time.Second, false); !errors.Is(err, store.ErrConflict) {
		t.Errorf("lease of a live lease: err = %v, want ErrConflict", err)
	}
	if err := claim("a", 5*time.Second, true); err != nil {
		t.Errorf("renewal: %v", err)
	}
	if err := claim("b", 12*time.Second, false); !errors.Is(err, store.ErrConflict) {
		t.Errorf("lease of a renewed lease: err = %v, want ErrConflict", err)
	}
	if err := c.RunRelease(t.Context(), lease, "a"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := claim("b", 13*time.Second, false); err != nil {
		t.Errorf("lease after its release: %v", err)
	}
	if err := claim("a", 14*time.Second, true); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal by the owner that released it: err = %v, want ErrConflict", err)
	}
	if _, err := s.RunGet(t.Context(), lease); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet of the lease id: %v, want ErrNotFound (a lease is not a run)", err)
	}
}

// testClaimRenewOfLapsedForeignClaim: a renewal extends only a claim its
// owner holds, even when the holder's claim has lapsed. a loses the run to
// b, b's claim runs out, and a's renewal is still refused (ErrConflict):
// a runner whose claim was taken over must never take the run back by
// renewing, only by claiming it again. The lapsed claim stays b's, so a
// renewal by b still succeeds.
func testClaimRenewOfLapsedForeignClaim(t *testing.T, s store.Store) {
	claim := claimRun1(t, s)
	if err := claim("a", 0, false); err != nil {
		t.Fatalf("claim by a: %v", err)
	}
	if err := claim("b", 11*time.Second, false); err != nil {
		t.Fatalf("claim by b of a's lapsed claim: %v", err)
	}
	// b's claim lapsed at 21s.
	if err := claim("a", 30*time.Second, true); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal by a of b's lapsed claim: err = %v, want ErrConflict", err)
	}
	if err := claim("b", 31*time.Second, true); err != nil {
		t.Errorf("renewal by b of its own lapsed claim, after a's refused renewal: %v", err)
	}
}

// testClaimFromWithoutForce: From names the owner a forced claim may take
// the run from; without Force it changes nothing, and a claim of another
// owner's live claim is refused (a ClaimHeldError naming the holder) even
// when From names that holder. A store that read From alone as a takeover
// would let a runner that merely saw the holder take its live run.
func testClaimFromWithoutForce(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	create(t, s, newRun("run-1", runOpts{}))
	claim := func(owner, from string, now time.Duration) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: 10 * time.Second,
			Now: base.Add(now), From: from})
	}
	if err := claim("a", "", 0); err != nil {
		t.Fatalf("claim by a: %v", err)
	}
	var held *store.ClaimHeldError
	if err := claim("b", "a", time.Second); !errors.As(err, &held) || held.Owner != "a" {
		t.Errorf("claim by b From a, without Force, of a's live claim: err = %v, want a ClaimHeldError naming a", err)
	}
	if err := claim("a", "", 2*time.Second); err != nil {
		t.Errorf("renewal by a after b's refused claim: %v", err)
	}
	// Once a's claim has lapsed, the same claim takes the run as any
	// claim of a lapsed claim does.
	if err := claim("b", "a", 12*time.Second); err != nil {
		t.Errorf("claim by b From a of a's lapsed claim: %v", err)
	}
}

// testClaimRenewExtendsByOneTTL: a renewal moves the claim's expiry to
// its own now plus the TTL, no further: a 10s claim renewed at 5s is
// refused to another owner at 14s and is theirs at 16s. A renewal that
// extended by more (twice the TTL, or from the old expiry) would keep a
// dead runner's run from every other runner past the lease it promised.
func testClaimRenewExtendsByOneTTL(t *testing.T, s store.Store) {
	claim := claimRun1(t, s)
	if err := claim("a", 0, false); err != nil {
		t.Fatalf("claim by a: %v", err)
	}
	if err := claim("a", 5*time.Second, true); err != nil {
		t.Fatalf("renewal by a: %v", err)
	}
	if err := claim("b", 14*time.Second, false); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim by b at 14s of a's claim renewed at 5s: err = %v, want ErrConflict", err)
	}
	if err := claim("b", 16*time.Second, false); err != nil {
		t.Errorf("claim by b at 16s of a's claim renewed at 5s (lapsed at 15s): %v", err)
	}
}

// claimRun1 creates run-1 in s and returns a claim (or, with renew, a
// renewal) of it by owner with a 10s TTL at base+now; it skips t when s
// has no claims.
func claimRun1(t *testing.T, s store.Store) func(owner string, now time.Duration, renew bool) error {
	t.Helper()
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	create(t, s, newRun("run-1", runOpts{}))
	return func(owner string, now time.Duration, renew bool) error {
		return c.RunClaim(t.Context(), &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: 10 * time.Second,
			Now: base.Add(now), Renew: renew})
	}
}
