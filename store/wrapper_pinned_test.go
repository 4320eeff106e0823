package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestHasClaimsLooksAtTheInnermostStore: every Wrapper has a RunClaim
// method, so HasClaims answers for the store under the decorators: false
// for a wrapped store without claims, the inner store's answer otherwise.
func TestHasClaimsLooksAtTheInnermostStore(t *testing.T) {
	t.Parallel()
	noClaims := struct{ store.Store }{memory.New()} // hides RunClaim
	if store.HasClaims(store.Wrapper{Store: store.Wrapper{Store: noClaims}}) {
		t.Error("HasClaims(wrapped store without claims) = true, want false")
	}
	_, innerClaims := store.Store(memory.New()).(store.RunClaimer)
	if got := store.HasClaims(store.Wrapper{Store: memory.New()}); got != innerClaims {
		t.Errorf("HasClaims(wrapped memory store) = %v, want the memory store's %v", got, innerClaims)
	}
}

// TestWrapperListenLedgerUnsupportedWithoutListener: a Wrapper over a
// store without LedgerListener fails ListenLedger with
// errors.ErrUnsupported at once, without calling ready (a follower then
// knows it gets no cross-process wake-ups).
func TestWrapperListenLedgerUnsupportedWithoutListener(t *testing.T) {
	t.Parallel()
	ready := false
	err := store.Wrapper{Store: memory.New()}.ListenLedger(context.Background(), func() { ready = true }, func(string, bool) {})
	if !errors.Is(err, errors.ErrUnsupported) || ready {
		t.Errorf("ListenLedger over the memory store = %v (ready called: %v), want errors.ErrUnsupported", err, ready)
	}
}
