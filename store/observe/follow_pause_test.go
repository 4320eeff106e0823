package observe_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// droppingListener starts listening and then loses the connection, drops
// times in a row; after that it listens until ctx ends.
type droppingListener struct {
	store.Store
	drops   int32
	listens atomic.Int32
}

func (d *droppingListener) ListenLedger(ctx context.Context, ready func(), _ func(string, bool)) error {
	ready()
	if d.listens.Add(1) <= d.drops {
		return errors.New("connection reset")
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestFollowPausesAfreshAfterListening: a connection that was listening
// when it dropped is listened on again after the first pause (1 s), not
// after a pause that kept doubling over earlier drops. What would break:
// not resetting the pause once listening starts, so three drops in a row
// of working connections wait 1+2+4 s instead of 1+1+1 s, and a gateway
// up for long ends up deaf to other processes for 30 s at each drop.
func TestFollowPausesAfreshAfterListening(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(&droppingListener{Store: memory.New(), drops: 3})
	ctx, stop := context.WithCancel(context.Background())
	readies := make(chan struct{}, 4)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- st.Follow(ctx, observe.FollowConfig{Ready: func() { readies <- struct{}{} }}) }()
	for range 4 {
		select {
		case <-readies:
		case <-time.After(20 * time.Second): // a liveness guard
			t.Fatal("Follow did not listen again")
		}
	}
	// 3 s of pauses; 7 s if they doubled. The margin absorbs a slow machine.
	if took := time.Since(start); took > 5500*time.Millisecond {
		t.Errorf("listening again after 3 drops of working connections took %v; want about 3 s (1 s each)", took)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
}

// failingListener fails before it listens, fails times in a row; after
// that it listens until ctx ends.
type failingListener struct {
	store.Store
	fails   int32
	listens atomic.Int32
}

func (f *failingListener) ListenLedger(ctx context.Context, ready func(), _ func(string, bool)) error {
	if f.listens.Add(1) <= f.fails {
		return errors.New("connection refused")
	}
	ready()
	<-ctx.Done()
	return ctx.Err()
}

// TestFollowBacksOffWhileListeningFails: attempts that fail before
// listening wait longer each time (1 s, then 2 s). What would break: a
// pause that does not grow, so Follow retries a database that is down
// once a second for as long as it stays down.
func TestFollowBacksOffWhileListeningFails(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(&failingListener{Store: memory.New(), fails: 2})
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan struct{}, 1)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- st.Follow(ctx, observe.FollowConfig{Ready: func() { ready <- struct{}{} }}) }()
	select {
	case <-ready:
	case <-time.After(20 * time.Second): // a liveness guard
		t.Fatal("Follow did not listen again")
	}
	// 1 s + 2 s; timers never fire early, so the bound cannot flake.
	if took := time.Since(start); took < 2900*time.Millisecond {
		t.Errorf("listening after 2 failed attempts took %v; want at least 3 s (1 s, then 2 s)", took)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
}
