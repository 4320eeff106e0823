package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// TestClaimByNonUTF8OwnerIsNotReportedHeldByItself: a claim whose owner
// is not valid UTF-8 (Claims.Owner as a host built it) is stored escaped
// (idText; U+FFFD for the bad byte before). The holder RETURNING read back was
// compared with the owner as given, so the claim was taken yet reported
// refused, naming the runner itself as the holder: every claim of that
// runner was "refused" while it held the run for a TTL, and no runner
// worked on the run meanwhile. The memory and SQLite stores take the
// claim; so must PostgreSQL, and renew and release it as that owner.
func TestClaimByNonUTF8OwnerIsNotReportedHeldByItself(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	s := openSchema(t, testSchema(t))
	const owner = "runner-\xff"
	claim := func(owner string, renew bool) error {
		return s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: owner, TTL: time.Minute, Renew: renew})
	}
	if err := claim(owner, false); err != nil {
		var held *store.ClaimHeldError
		if errors.As(err, &held) {
			t.Fatalf("claim by owner %q = %v (holder %q), a second owner's claim then = %v: "+
				"the claim was taken but reported held", owner, err, held.Owner, claim("runner-b", false))
		}
		t.Fatalf("claim by owner %q = %v; want it taken", owner, err)
	}
	if err := claim(owner, false); err != nil {
		t.Errorf("claim again by its holder %q = %v", owner, err)
	}
	if err := claim(owner, true); err != nil {
		t.Errorf("renewal by its holder %q = %v", owner, err)
	}
	var held *store.ClaimHeldError
	if err := claim("runner-b", false); !errors.As(err, &held) || held.Owner != owner {
		t.Errorf("claim by another owner = %v; want it refused, naming the holder %q", err, owner)
	}
	if err := s.RunRelease(ctx, "r", owner); err != nil {
		t.Fatal(err)
	}
	if err := claim("runner-b", false); err != nil {
		t.Errorf("claim by another owner after the holder %q released it = %v", owner, err)
	}
}

// TestDistinctNonUTF8OwnersDoNotShareAClaim: a claim is mutual exclusion
// between owners. Owners were stored with U+FFFD for each byte that is
// not UTF-8 (keyText), so "runner-\xff" and "runner-\xfe" were one owner
// "runner-\uFFFD": the second runner's claim on a run the first held was
// taken as a renewal by its holder, and both drove the run at once; its
// release dropped the other's claim. As in the memory store (the model)
// and SQLite, the second claim is refused and its release changes nothing.
// store/storetest's RunClaimer/NonUTF8Owners checks the same on a test
// clock; this one runs on the server's.
func TestDistinctNonUTF8OwnersDoNotShareAClaim(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	s := openSchema(t, testSchema(t))
	const a, b = "runner-\xff", "runner-\xfe"
	claim := func(owner string) error {
		return s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: owner, TTL: time.Minute})
	}
	if err := claim(a); err != nil {
		t.Fatalf("claim by %q: %v", a, err)
	}
	var held *store.ClaimHeldError
	if err := claim(b); !errors.As(err, &held) || held.Owner != a {
		t.Errorf("claim by %q while %q holds the run = %v; want a ClaimHeldError naming %q", b, a, err, a)
	}
	if err := s.RunRelease(ctx, "r", b); err != nil {
		t.Fatal(err)
	}
	if err := s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: a, TTL: time.Minute, Renew: true}); err != nil {
		t.Errorf("renewal by the holder %q after %q released = %v; want its claim kept", a, b, err)
	}
}
