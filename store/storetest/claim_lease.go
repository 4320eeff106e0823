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
