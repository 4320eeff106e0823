package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestClaimRefusalNamesTheHolder: a refused claim is a
// store.ClaimHeldError whose Owner names the runner holding the run (the
// runtime passes it on as RunClaimParams.From, where "" means "take it
// from anyone"). RunClaim read the holder in a statement of its own,
// after the refused upsert committed, so a holder that released the run
// in between left Owner "" (and one that was replaced named the wrong
// runner). The upsert now returns the holder itself.
func TestClaimRefusalNamesTheHolder(t *testing.T) {
	testURL(t)
	t.Parallel()
	rs := openRunners(t, 2)
	holderStore, taker := rs[0], rs[1]
	ctx := t.Context()

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A runner that takes the run briefly (an event delivery, a
			// tick between waits) and lets it go.
			if err := holderStore.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "holder", TTL: time.Minute}); err == nil {
				_ = holderStore.RunRelease(ctx, "r", "holder")
			}
		}
	}()
	defer func() { close(stop); <-done }()

	// Before the fix about one refusal in three named no one, the first
	// within ~0.1 s: 300 refusals or 5 s, whichever comes first.
	refused := 0
	deadline := time.Now().Add(5 * time.Second)
	for refused < 300 && time.Now().Before(deadline) {
		err := taker.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "taker", TTL: time.Minute})
		if err == nil {
			if err := taker.RunRelease(ctx, "r", "taker"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var held *store.ClaimHeldError
		if !errors.As(err, &held) {
			t.Fatalf("claim: %v; want nil or a ClaimHeldError", err)
		}
		refused++
		if held.Owner != "holder" {
			t.Fatalf("claim refused %d times; this refusal names owner %q (%v), want %q: the only other runner",
				refused, held.Owner, err, "holder")
		}
	}
	t.Logf("%d refusals, each naming the holder", refused)
}

// TestListenLedgerReturnsWhenCtxEnds: ListenLedger listens "until
// ctx ends (it returns ctx's error)". Its connection is built from the
// pool's config, whose context watcher answered a cancelled context with
// a cancel request and then waited up to cancelAnswerWait (10 s) for the
// server: an idle LISTEN connection has no statement to cancel, so the
// server never answered and every stop of a follower (observe.Follow, a
// gateway shutting down) took 10 s.
func TestListenLedgerReturnsWhenCtxEnds(t *testing.T) {
	testURL(t)
	t.Parallel()
	s := openSchema(t, testSchema(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- s.ListenLedger(ctx, func() { close(ready) }, func(string, bool) {}) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("ListenLedger: %v", err)
	}
	start := time.Now()
	cancel()
	err := <-done
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("ListenLedger returned %v %v after its context ended; want it at once", err, took.Round(time.Millisecond))
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ListenLedger = %v; want context.Canceled", err)
	}
}

// TestCancelledWriteWaitingForAConnection: the caller's cancellation
// "counts only until the write begins" (Store.writing), yet the write's
// context dropped it before the connection was even acquired, so a write
// whose caller gave up while it queued for a pool connection (every
// connection busy, e.g. behind slow lock waits) stayed blocked for up to
// WriteTimeout (30 s by default) and was then committed after all.
func TestCancelledWriteWaitingForAConnection(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
		Logger: testLogger(t), MaxConns: 1, WriteTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// The pool's only connection is busy.
	tx, err := s.BeginOnPool(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			_ = tx.Rollback(context.Background())
		}
	}
	defer release()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.RunCommit(ctx, &store.CommitParams{Run: testRun("queued"), Create: true})
	}()
	time.Sleep(200 * time.Millisecond) // queued for the connection
	start := time.Now()
	cancel()
	var commitErr error
	select {
	case commitErr = <-done:
		t.Logf("RunCommit returned %v %v after its caller cancelled", commitErr, time.Since(start).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		// Free the connection: the cancelled write goes ahead.
		release()
		commitErr = <-done
		t.Errorf("RunCommit, cancelled while it waited for a pool connection, was still blocked 2 s later; "+
			"once a connection freed up it returned %v", commitErr)
	}
	release()
	if commitErr != nil && !errors.Is(commitErr, context.Canceled) {
		t.Errorf("RunCommit cancelled before it began = %v; want context.Canceled", commitErr)
	}
}
