package observe_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// pauseLog records the pause Follow logs before each new attempt, so a
// test reads the back-off Follow chose rather than timing it.
type pauseLog struct {
	mu     sync.Mutex
	pauses []time.Duration
}

func (p *pauseLog) Enabled(context.Context, slog.Level) bool { return true }
func (p *pauseLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *pauseLog) WithGroup(string) slog.Handler            { return p }
func (p *pauseLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "pause" {
			p.mu.Lock()
			p.pauses = append(p.pauses, a.Value.Duration())
			p.mu.Unlock()
		}
		return true
	})
	return nil
}

func (p *pauseLog) got() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.pauses...)
}

// followUntilListening runs Follow over l until it has called Ready want
// times, then stops it and returns the pauses it logged.
func followUntilListening(t *testing.T, l store.Store, want int) []time.Duration {
	t.Helper()
	log := &pauseLog{}
	ctx, stop := context.WithCancel(context.Background())
	readies := make(chan struct{}, want)
	done := make(chan error, 1)
	go func() {
		done <- observe.Wrap(l).Follow(ctx, observe.FollowConfig{Logger: slog.New(log), Ready: func() { readies <- struct{}{} }})
	}()
	for range want {
		select {
		case <-readies:
		case <-time.After(30 * time.Second): // a liveness guard, not a measure
			t.Fatal("Follow did not listen again")
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
	return log.got()
}

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
// of working connections wait 1, 2, 4 s, and a gateway up for long ends
// up deaf to other processes for 30 s at each drop.
func TestFollowPausesAfreshAfterListening(t *testing.T) {
	t.Parallel()
	pauses := followUntilListening(t, &droppingListener{Store: memory.New(), drops: 3}, 4)
	want := []time.Duration{time.Second, time.Second, time.Second}
	if !slices.Equal(pauses, want) {
		t.Errorf("pauses after 3 drops of working connections: %v; want %v", pauses, want)
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
	pauses := followUntilListening(t, &failingListener{Store: memory.New(), fails: 2}, 1)
	want := []time.Duration{time.Second, 2 * time.Second}
	if !slices.Equal(pauses, want) {
		t.Errorf("pauses after 2 failed attempts: %v; want %v", pauses, want)
	}
}
