package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run X whose tick failed past its wait is left running, in unfinished
// and in retry, both for one poll interval later. When that time comes the
// host is driving X (its lock is held): driveUnfinished moved X's
// unfinished time a poll interval on but left its retry entry at the time
// just passed. With another run due and held (H, of a workflow this
// runner does not serve), nextWait answered 0 and the loop polled without
// pause (as in TestStaleRetryOfAnUnfinishedRunDoesNotSpinTheLoop, for
// Recover's path). The retry entry now moves with the unfinished time.
func TestBusyUnfinishedRunDoesNotSpinTheLoop(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := memory.New()
	flaky := &commitFailures{Wrapper: store.Wrapper{Store: inner}}
	gs := &gateGetStore{Wrapper: store.Wrapper{Store: flaky}}
	slow := slowAfterWait(time.Minute)
	theirs := waitFlow(time.Minute)
	theirs.ID = "theirs"
	otherReg, _ := runtime.NewRegistry(theirs)
	other, _ := runtime.New(runtime.Config{Store: inner, Registry: otherReg, Clock: c.Now})
	reg, _ := runtime.NewRegistry(slow)
	rt, err := runtime.New(runtime.Config{Store: gs, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls++; calls == 1 {
			flaky.left.Store(1) // the commit of the effect's completion fails
		}
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	x, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if st, _ := rt.Tick(ctx, x, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("x %s", st.Status)
	}
	h, _ := other.Start(ctx, runtime.StartParams{WorkflowID: "theirs"})
	if st, _ := other.Tick(ctx, h, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("h %s", st.Status)
	}
	c.Advance(2 * time.Minute) // both due
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	if n, err := s.PollOnce(ctx); n != 1 || err != nil || s.Stats().RunsFailed != 1 {
		t.Fatalf("setup: poll ticked %d (%v), %d failed; want X ticked and failed, H passed over", n, err, s.Stats().RunsFailed)
	}
	if cur, _ := inner.RunGet(ctx, x); cur.Status != durable.RunRunning {
		t.Fatalf("setup: x not left running: %s", cur.Status)
	}
	c.Advance(time.Second) // X's back-off is over: to be driven again now
	letGo := holdRun(t, rt, gs, x)
	defer letGo()
	if _, err := s.Pass(ctx); err != nil { // X is busy: its drive moves 1s on
		t.Fatal(err)
	}
	if w := scheduler.NextWait(s, ctx); w <= 0 {
		t.Errorf("nothing can be done for a second (X is driven again in 1s, H is held for 5 min), yet the loop would sleep %v: it polls without pause", w)
	}
	// The loop itself, for 100ms of real time (the test clock stands still,
	// so nothing becomes due meanwhile): a poll or two, not a hot loop.
	before := s.Stats().PollCycles
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	s.Stop()
	if polls := s.Stats().PollCycles - before; polls > 10 {
		t.Errorf("the loop polled %d times in 100ms with nothing to do: it spins at full CPU", polls)
	}
}
