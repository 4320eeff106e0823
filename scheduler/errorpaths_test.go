package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failingListDue fails every RunListDue (say, a row of the deadline index
// that no longer decodes) while RunNextDue still answers.
type failingListDue struct {
	store.Store
	calls atomic.Int64
}

func (s *failingListDue) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	s.calls.Add(1)
	return nil, errors.New("injected: listing due runs failed")
}

// When listing the due runs fails while a deadline has passed, the loop
// must wait its poll interval: it polled again at once, without end
// (nextWait saw a past deadline and an empty retry map).
func TestFailingDueListingDoesNotSpin(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := &failingListDue{Store: memory.New()}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: inner, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("not waiting: %s", st.Status)
	}
	c.Advance(2 * time.Minute) // the run is due
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	s.Stop()
	if n := inner.calls.Load(); n > 5 {
		t.Fatalf("RunListDue called %d times in 200ms with a 1h poll interval: the loop spins on a failing listing (%d poll cycles)",
			n, s.Stats().PollCycles)
	}
}

// loopFlow waits until a past deadline, then runs "loop" steps times
// without waiting, then completes.
func loopFlow(steps int) *runtime.Workflow {
	return &runtime.Workflow{ID: "loop", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(time.Minute))}}, "loop"), nil
		},
		"loop": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := strconv.Atoi(fmt.Sprint(run.Vars["n"]))
			n++
			run.Vars["n"] = n
			if n >= steps {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			return runtime.Next("loop"), nil
		},
	}}
}

// A due run released by the loop that still runs after maxTicksPerDrive
// ticks is no longer due, and without claims (RecoverInterval 0) Recover
// runs only at Start: it stayed RUNNING until a restart. The loop now
// drives it again after its next poll.
func TestRunLeftRunningByADriveIsDrivenAgain(t *testing.T) {
	c, rt, id := waitingLongLoop(t, 150)
	ctx := context.Background()
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: 10 * time.Millisecond})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c.Advance(2 * time.Minute)
	s.Wake()
	deadline := time.Now().Add(3 * time.Second) // ~300 polls at 10ms
	var st *durable.RunState
	for time.Now().Before(deadline) {
		st, _ = rt.GetState(ctx, id)
		if st.Status == durable.RunCompleted {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run still %s with n=%v after 3s of polling: left running after its drive, never ticked again", st.Status, st.Vars["n"])
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
