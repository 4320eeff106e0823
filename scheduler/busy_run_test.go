package scheduler_test

import (
	"context"
	"slices"
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

// hookDueStore runs hook (once) after the first due listing, before
// returning it: another actor acting between the scheduler's listing and
// its drive.
type hookDueStore struct {
	store.Wrapper
	mu   sync.Mutex
	hook func()
}

func (s *hookDueStore) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	due, err := s.Wrapper.RunListDue(ctx, p)
	s.mu.Lock()
	h := s.hook
	s.hook = nil
	s.mu.Unlock()
	if h != nil {
		h()
	}
	return due, err
}

// TestPollPassesOverADueRunTheHostIsDriving: a due run that the host is
// driving in this process right now (its own Tick, a Respond or an event
// delivery that took the run's lock just after the poll listed it) made
// the poll's drive wait on the run's lock for as long as the host's drive
// lasted (an LLM call: minutes), and every other due run of the process
// waited behind it; the run was then counted as resumed, and reported to
// OnRunResumed, though the poll did nothing to it. The poll passes over
// it, as Recover does, and releases the others on time.
func TestPollPassesOverADueRunTheHostIsDriving(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hs := &hookDueStore{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(rvSlowFlow())
	rt, err := runtime.New(runtime.Config{Store: hs, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 { // the host's drive: a long effect
			close(entered)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	busy := startWaiting(t, rt, "slow")
	c.Advance(time.Second)
	other := startWaiting(t, rt, "slow") // due a second after busy: listed after it
	c.Advance(2 * time.Minute)

	var mu sync.Mutex
	var resumed []string
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, OnRunResumed: func(st *durable.RunState) {
		mu.Lock()
		resumed = append(resumed, st.RunID)
		mu.Unlock()
	}})
	hostDone := make(chan struct{})
	hs.hook = func() {
		go func() {
			defer close(hostDone)
			rt.Tick(ctx, busy, runtime.TickOptions{}) // the host drives the due run itself
		}()
		<-entered
	}
	pollDone := make(chan struct{})
	go func() {
		defer close(pollDone)
		s.PollOnce(ctx)
	}()
	released := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := rt.GetState(ctx, other); err == nil && st.Status == durable.RunCompleted {
			released = true
			break
		}
	}
	close(release)
	<-hostDone
	<-pollDone
	if st, err := rt.GetState(ctx, other); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("setup: the other due run was not released even after the host's drive: %v %v", st, err)
	}
	if !released {
		t.Fatal("a due run was held up for as long as the host drove another due run: the poll waited on that run's lock")
	}
	mu.Lock()
	defer mu.Unlock()
	if n := s.Stats().RunsResumed; n != 1 || !slices.Equal(resumed, []string{other}) {
		t.Fatalf("resumed %d, reported %v; want only the other run: the poll did nothing to the host's", n, resumed)
	}
}

// startWaiting starts a run of workflow wf and ticks it into its wait.
func startWaiting(t *testing.T, rt *runtime.Runtime, wf string) string {
	t.Helper()
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, Vars: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", st, err)
	}
	return id
}

// gateGetStore holds the first RunGet of run id after arm until release
// is closed: a host update of the run (it reads the run under the run's
// lock) holding the lock for as long.
type gateGetStore struct {
	store.Wrapper
	mu      sync.Mutex
	id      string
	entered chan struct{}
	release chan struct{}
}

func (s *gateGetStore) arm(id string) (entered, release chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id, s.entered, s.release = id, make(chan struct{}), make(chan struct{})
	return s.entered, s.release
}

func (s *gateGetStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	s.mu.Lock()
	var entered, release chan struct{}
	if runID == s.id {
		entered, release = s.entered, s.release
		s.id = ""
	}
	s.mu.Unlock()
	if entered != nil {
		close(entered)
		<-release
	}
	return s.Wrapper.RunGet(ctx, runID)
}

// holdRun makes the host hold run id's lock, through an update that does
// not move the run on, until the returned function is first called (it
// waits for the update to end).
func holdRun(t *testing.T, rt *runtime.Runtime, gs *gateGetStore, id string) (letGo func()) {
	t.Helper()
	entered, release := gs.arm(id)
	done := make(chan error, 1)
	go func() {
		done <- rt.UpdateLimits(context.Background(), id, map[string]any{"max_tokens": 1000})
	}()
	<-entered
	if !rt.Busy(id) {
		t.Fatal("setup: the host's update does not hold the run")
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(release)
			if err := <-done; err != nil {
				t.Errorf("setup: host update: %v", err)
			}
		})
	}
}

// withinASecond runs f, failing the test when it does not return within a
// second (it waits on the run the host holds: then letGo lets it end).
func withinASecond(t *testing.T, what string, letGo, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Errorf("%s waited on the run the host holds", what)
		letGo()
		<-done
	}
}

// TestDueRunPassedOverWhileTheHostHeldItIsReleasedAfterOnePollInterval: a
// due run the poll passed over because the host held it, with an update
// that leaves it due, is released by a poll one PollInterval later (the
// loop sleeps until then: no hot loop meanwhile), like a run another
// runner held.
func TestDueRunPassedOverWhileTheHostHeldItIsReleasedAfterOnePollInterval(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gs := &gateGetStore{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: gs, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	held, other := startWaiting(t, rt, "wait"), startWaiting(t, rt, "wait")
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})

	letGo := holdRun(t, rt, gs, held)
	var n int
	withinASecond(t, "the poll", letGo, func() { n, _ = s.PollOnce(ctx) })
	letGo()
	if st, _ := rt.GetState(ctx, other); n != 1 || st.Status != durable.RunCompleted {
		t.Fatalf("poll ticked %d, other run %s; want the other run released", n, st.Status)
	}
	if st, _ := rt.GetState(ctx, held); st.Status != durable.RunWaiting {
		t.Fatalf("setup: the host's update moved the run on: %s", st.Status)
	}
	if w := scheduler.NextWait(s, ctx); w != time.Second {
		t.Fatalf("loop sleeps %v after passing over the held run; want the poll interval", w)
	}
	if n, _ := s.PollOnce(ctx); n != 0 {
		t.Fatalf("a poll before the retry ticked %d runs", n)
	}
	c.Advance(time.Second)
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("a poll one interval later ticked %d runs; want the run the host held", n)
	}
	if st, _ := rt.GetState(ctx, held); st.Status != durable.RunCompleted {
		t.Fatalf("run the host held, one poll interval after: %s", st.Status)
	}
	if n := s.Stats().RunsResumed; n != 2 {
		t.Fatalf("runs resumed: %d, want 2", n)
	}
}

// TestUnfinishedRunTheHostIsDrivingIsDrivenLater: a run a drive left
// running (its tick bound reached) that the host is driving when the loop
// comes back to it is not waited for (that would hold the whole pass up);
// it is driven again one PollInterval later.
func TestUnfinishedRunTheHostIsDrivingIsDrivenLater(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gs := &gateGetStore{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(loopFlow(150))
	rt, err := runtime.New(runtime.Config{Store: gs, Registry: reg, Clock: c.Now, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := startWaiting(t, rt, "loop")
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("setup: poll ticked %d", n)
	}
	before, _ := rt.GetState(ctx, id)
	if before.Status != durable.RunRunning {
		t.Fatalf("setup: run %s after one drive; want left running", before.Status)
	}

	letGo := holdRun(t, rt, gs, id)
	withinASecond(t, "the pass", letGo, func() { s.Pass(ctx) })
	letGo()
	if st, _ := rt.GetState(ctx, id); st.Vars["n"] != before.Vars["n"] {
		t.Fatalf("the pass drove the run the host held, from n=%v to n=%v", before.Vars["n"], st.Vars["n"])
	}
	c.Advance(time.Second)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run the host held, one poll interval after: %s (n=%v); want driven on to its end", st.Status, st.Vars["n"])
	}
}
