package store_test

import (
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestWrapperClaimsUnsupportedWithoutClaimer: a Wrapper over a store
// without RunClaimer fails both RunClaim and RunRelease with
// errors.ErrUnsupported. A RunRelease answering nil there would tell a
// runner its claim was dropped when no store ever held it.
func TestWrapperClaimsUnsupportedWithoutClaimer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := store.Wrapper{Store: struct{ store.Store }{memory.New()}} // hides RunClaim
	if err := w.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "a"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("RunClaim over a store without claims = %v, want errors.ErrUnsupported", err)
	}
	if err := w.RunRelease(ctx, "r1", "a"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("RunRelease over a store without claims = %v, want errors.ErrUnsupported", err)
	}
}
