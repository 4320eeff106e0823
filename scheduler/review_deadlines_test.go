package scheduler_test

import (
	"context"
	"errors"
	"github.com/abstractframework/abstractgateway/store"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestHeldRunDoesNotDelayLaterDeadline: one due run whose tick fails (the
// store refuses its commits) is held for its retry. Another run's
// deadline falls 100ms later. The package doc promises the loop sleeps
// "until the next deadline (or the poll interval, whichever is first)",
// and nextWait's doc says held runs "count from the time they are" tried
// again; yet nextWait, seeing the held run's past deadline as the store's
// next one, slept until the held run's retry (PollInterval) and released
// the healthy run up to a whole PollInterval late.
func TestHeldRunDoesNotDelayLaterDeadline(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	old, _ := runtime.NewRegistry(waitFlow(time.Minute+100*time.Millisecond), gone)
	before, _ := runtime.New(runtime.Config{Store: st, Registry: old, Clock: c.Now})
	ctx := context.Background()
	g, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "gone"})
	before.Tick(ctx, g, runtime.TickOptions{}) // due at T+1m
	h, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if s, _ := before.Tick(ctx, h, runtime.TickOptions{}); s.Status != durable.RunWaiting { // due at T+1m+100ms
		t.Fatalf("healthy run: %s", s.Status)
	}
	rt, _ := runtime.New(runtime.Config{Store: refusing(st, "gone"), Registry: old, Clock: c.Now})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	c.Advance(time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil || s.Stats().RunsFailed != 1 {
		t.Fatalf("poll: ticked %d (%v), failed %d; want the gone run ticked and failed", n, err, s.Stats().RunsFailed)
	}
	if w := scheduler.NextWait(s, ctx); w > 100*time.Millisecond {
		t.Fatalf("loop would sleep %v; the healthy run falls due in 100ms (the held run's retry is in 1s)", w)
	}
}

// outageStore is a store that, once armed, fails every RunCommit and RunGet
// for a short window: a transient outage of the database.
type outageStore struct {
	store.Wrapper
	mu    sync.Mutex
	armed bool
	until time.Time
}

func (o *outageStore) down() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.armed {
		o.armed = false
		o.until = time.Now().Add(50 * time.Millisecond)
	}
	return time.Now().Before(o.until)
}

func (o *outageStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if o.down() {
		return errors.New("injected: store unreachable")
	}
	return o.Wrapper.RunCommit(ctx, p)
}

func (o *outageStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	o.mu.Lock()
	down := time.Now().Before(o.until)
	o.mu.Unlock()
	if down {
		return nil, errors.New("injected: store unreachable")
	}
	return o.Wrapper.RunGet(ctx, runID)
}

// TestRunLeftRunningDuringAnOutageIsDrivenAgain: a due run's tick
// releases the wait, checkpoints it running before an external effect,
// and the commit after the effect fails because the store became
// unreachable for 50ms. drive then reads the run back to decide whether
// to drive it again later, but that read failed too (the same outage),
// and drive dropped the run: it was running, no longer due, and without
// claims Recover only runs at Start, so nothing drove it again though the
// store was back a moment later. drive now drives it again when it cannot
// read it.
func TestRunLeftRunningDuringAnOutageIsDrivenAgain(t *testing.T) {
	flaky := &outageStore{Wrapper: store.Wrapper{Store: memory.New()}}
	runLeftRunningIsDrivenAgain(t, flaky, func() {
		flaky.mu.Lock()
		flaky.armed = true // the commit of this effect's completion fails, and reads for 50ms
		flaky.mu.Unlock()
	})
}
