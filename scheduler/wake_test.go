package scheduler_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A WakeStore between an observer and an offloading store passed the
// records on through store.Wrapper, which is no CopyingWriter: the
// observer then notified the caller's records (the large value inline)
// instead of the stored ones (a ref in its place). It now passes the
// stored records on, for commits and appends.
func TestWakeStorePassesStoredRecordsOn(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	obs := observe.Wrap(scheduler.NewWakeStore(offload.Wrap(inner, artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})))
	sub := obs.Subscribe("r", 4)
	defer sub.Cancel()
	big := map[string]any{"content": strings.Repeat("x", 1000)}
	run := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{}}
	recs := []*durable.StepRecord{{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1, Result: big}}
	if err := obs.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{{RunID: "r", StepID: "s2", NodeID: "n", Status: durable.StepCompleted, Attempt: 1, Result: big}}); err != nil {
		t.Fatal(err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	for i := range 2 {
		ev := <-sub.C
		if got := ev.Records[0].Result; !reflect.DeepEqual(got, stored[i].Result) {
			t.Errorf("record %d notified with result %.60v…, stored %v (the ref)", i+1, got, stored[i].Result)
		}
	}
}

// failingCommitStore fails every RunCommit.
type failingCommitStore struct{ *memory.Store }

func (s failingCommitStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	return errors.New("injected: commit failed")
}

// A WakeStore signals a deadline only once the commit that wrote it went
// through: a failed commit wrote none, and must not make the loop poll.
func TestWakeStoreDoesNotSignalAFailedCommit(t *testing.T) {
	t.Parallel()
	ws, s := wakeLoopAsleep(t, failingCommitStore{memory.New()})
	ctx := context.Background()
	before := s.Stats().PollCycles
	run := &durable.RunState{RunID: "r1", WorkflowID: "wait", Status: durable.RunWaiting,
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Now().Add(time.Minute))},
		Vars:    map[string]any{}}
	if err := ws.RunCommit(ctx, &store.CommitParams{Run: run}); err == nil {
		t.Fatal("setup: the commit did not fail")
	}
	time.Sleep(200 * time.Millisecond)
	if after := s.Stats().PollCycles; after != before {
		t.Fatalf("the loop polled %d more times after a failed commit; want none (a wake for a deadline never written)",
			after-before)
	}
}

// wakeLoopAsleep starts a scheduler (PollInterval one hour) over a
// WakeStore on inner, and returns once its loop has made its first poll
// and gone to sleep: any poll after that was woken by the store.
func wakeLoopAsleep(t *testing.T, inner store.Store) (*scheduler.WakeStore, *scheduler.Scheduler) {
	t.Helper()
	ws := scheduler.NewWakeStore(inner)
	return ws, asleepOn(t, ws)
}

// Scheduled.Respond wakes the loop: an answer whose run then waits on a
// new deadline (written by this process) is released on time, not after
// the loop's PollInterval sleep.
func TestScheduledRespondWakesTheLoopForTheNextDeadline(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "ask_then_wait", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "answer"}, ResultKey: "a"}, "wait"), nil
		},
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(100 * time.Millisecond))}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg}) // no WakeStore
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sd, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	id, st, err := sd.Run(ctx, wf, nil)
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("Run = %v, %v", st, err)
	}
	time.Sleep(50 * time.Millisecond) // the loop goes to sleep for its hour
	if st, err := sd.Respond(ctx, id, map[string]any{"text": "yes"}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("Respond = %v, %v; want the run waiting on its timer", st, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if st, _ := rt.GetState(ctx, id); st.Status == durable.RunCompleted {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the timer written by Respond's tick was not released within 3s: the loop slept on (Respond did not wake it)")
}

// Every scheduler built over one WakeStore learns of a deadline it
// commits: the store had one signal slot, which the first loop to read
// took, leaving the others asleep until their PollInterval.
func TestWakeStoreWakesEverySchedulerOnIt(t *testing.T) {
	t.Parallel()
	ws, first := wakeLoopAsleep(t, memory.New())
	second := asleepOn(t, ws)
	beforeFirst, beforeSecond := first.Stats().PollCycles, second.Stats().PollCycles
	run := &durable.RunState{RunID: "r1", WorkflowID: "wait", Status: durable.RunWaiting,
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Now().Add(time.Minute))},
		Vars:    map[string]any{}}
	if err := ws.RunCommit(context.Background(), &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if first.Stats().PollCycles > beforeFirst && second.Stats().PollCycles > beforeSecond {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("after a commit with a deadline, the first scheduler polled %d more times and the second %d; want both woken",
		first.Stats().PollCycles-beforeFirst, second.Stats().PollCycles-beforeSecond)
}

// asleepOn starts one more scheduler (PollInterval one hour) over ws and
// returns once its loop has made its first poll and gone to sleep.
func asleepOn(t *testing.T, ws *scheduler.WakeStore) *scheduler.Scheduler {
	t.Helper()
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: ws, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().PollCycles < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.Stats().PollCycles < 1 {
		t.Fatal("setup: the loop's first poll did not come within 10 s")
	}
	time.Sleep(50 * time.Millisecond) // the loop is asleep for its hour
	return s
}
