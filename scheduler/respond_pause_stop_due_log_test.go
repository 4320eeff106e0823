package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
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
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// hookAfterGetStore calls hook (once) after the first RunGet of a run, before
// returning what that RunGet read: another actor acting between a caller's
// look at a run and its next step.
type hookAfterGetStore struct {
	store.Wrapper
	mu   sync.Mutex
	hook func()
}

func (s *hookAfterGetStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	run, err := s.Wrapper.RunGet(ctx, runID)
	s.mu.Lock()
	h := s.hook
	s.hook = nil
	s.mu.Unlock()
	if h != nil {
		h()
	}
	return run, err
}

// askThenSleepFlow asks the user (wait key "answer"), then waits an hour
// (WAIT_UNTIL, no wait key), then completes with what it holds.
func askThenSleepFlow() *runtime.Workflow {
	return &runtime.Workflow{ID: "ask-sleep", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "go?", "wait_key": "answer"}, ResultKey: "answer"}, "sleep"), nil
		},
		"sleep": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, ResultKey: "slept",
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(time.Hour))}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": run.Vars["answer"], "slept": run.Vars["slept"]}), nil
		},
	}}
}

// TestRespondDoesNotAnswerATimeWaitEnteredMeanwhile checks
// Scheduled.Respond's promise "Time waits (no key) cannot be answered"
// (scheduler/scheduled.go, Respond doc; spec runtime-model.md §5.3:
// respond needs a wait with a non-null wait_key, "so not WAIT_UNTIL"),
// and ResumeParams.strict's reason (runtime/resume.go: "a wait without a
// key, entered after the caller looked, is not taken for theirs"). Two
// answers to one question (a double submit): the first moves the run on
// into an hour's WAIT_UNTIL while the second is between its look
// (GetState) and its Resume; the second must be refused as stale, not
// release the hour's wait at once.
func TestRespondDoesNotAnswerATimeWaitEnteredMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hs := &hookAfterGetStore{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(askThenSleepFlow())
	rt, err := runtime.New(runtime.Config{Store: hs, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{Clock: c.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	id, st, err := sch.Run(ctx, askThenSleepFlow(), nil)
	if err != nil || st.Status != durable.RunWaiting || st.Waiting.WaitKey != "answer" {
		t.Fatalf("setup: %v %v", st, err)
	}
	var firstErr error
	hs.mu.Lock()
	hs.hook = func() { // the first answer lands while the second looks
		_, firstErr = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "answer", Payload: map[string]any{"n": 1}})
	}
	hs.mu.Unlock()
	got, err := sch.Respond(ctx, id, map[string]any{"n": 2})
	if firstErr != nil {
		t.Fatalf("first answer: %v", firstErr)
	}
	var stale *runtime.StaleResumeError
	if !errors.As(err, &stale) {
		status := ""
		if got != nil {
			status = string(got.Status)
		}
		t.Fatalf("second answer to a question already answered: err %v, run %s; want a StaleResumeError", err, status)
	}
	cur, _ := rt.GetState(ctx, id)
	if cur.Status != durable.RunWaiting || cur.Waiting == nil || cur.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("run after the stale answer: %s (output %v); want still waiting for its hour", cur.Status, cur.Output)
	}
}

// keptLogs is an slog handler that keeps the records it receives.
type keptLogs struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *keptLogs) Enabled(context.Context, slog.Level) bool { return true }
func (h *keptLogs) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *keptLogs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *keptLogs) WithGroup(string) slog.Handler      { return h }

// atLeast returns the messages of the records at level or above.
func (h *keptLogs) atLeast(level slog.Level) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if r.Level >= level {
			out = append(out, r.Message)
		}
	}
	return out
}

// TestFailedDueRunIsLogged checks Config.Logger's promise
// ("Logger receives operational logs", scheduler/scheduler.go Config)
// against Python's scheduler, which logs every run it fails to resume
// (src/abstractruntime/scheduler/scheduler.py, _do_poll_cycle:
// logger.error("Failed to resume run %s: %s", ...)). A due run whose tick
// fails (the store refuses its commits) is recorded in
// Stats.Errors only: a host that gave a Logger and no OnRunFailed never
// hears of it.
func TestFailedDueRunIsLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, st := setup(t, c, waitFlow(time.Minute))
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if s, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", s, err)
	}
	c.Advance(2 * time.Minute)
	// A runner whose commits of the run the store refuses.
	other, err := runtime.New(runtime.Config{Store: refusing(st, "wait"), Registry: rt.Registry(), Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	logs := &keptLogs{}
	s, _ := scheduler.New(scheduler.Config{Runtime: other, Clock: c.Now, Logger: slog.New(logs)})
	if _, err := s.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats(); got.RunsFailed != 1 {
		t.Fatalf("setup: the tick did not fail: %+v", got)
	}
	if msgs := logs.atLeast(slog.LevelWarn); len(msgs) == 0 {
		t.Fatalf("a run the scheduler failed to tick was not logged (Stats.Errors: %v)", s.Stats().Errors)
	}
}

// TestDueListingDoesNotWalkEveryDueRun checks the promise the
// scheduler's polls rely on: due runs come from an index, "never by
// scanning every run" (store/store.go RunStore.RunListDue doc), and the
// memory and JSON-file backends' DueIndex "setting, removing and listing
// due runs never scans every run" (store/dueindex.go). After downtime
// every waiting run may be due: DueIndex.ListDue then walks every due
// entry of the heap, copies them all into a slice and sorts it, to return
// the first Limit, at every poll and under the store's read lock (every
// commit waits meanwhile). Draining 50,000 due runs at BatchSize 100 is
// 500 such polls. Measured by bytes allocated by one listing of 100
// (deterministic, unlike time): a walk bounded by the limit allocates a
// few kB; the current one allocates ~11 MB.
func TestDueListingDoesNotWalkEveryDueRun(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 50_000
	for i := range n {
		run := &durable.RunState{RunID: fmt.Sprintf("r%06d", i), WorkflowID: "w", Status: durable.RunWaiting,
			Vars: map[string]any{}, Waiting: &durable.WaitState{Reason: durable.WaitUntil,
				Until: durable.NewTime(t0.Add(time.Duration(n-i) * time.Millisecond))}}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, RandomID: true}); err != nil {
			t.Fatal(err)
		}
	}
	var m0, m1 goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&m0)
	due, err := st.RunListDue(ctx, &store.RunListDueParams{Now: t0.Add(time.Hour), Limit: 100})
	goruntime.ReadMemStats(&m1)
	if err != nil || len(due) != 100 || due[0].RunID != fmt.Sprintf("r%06d", n-1) {
		t.Fatalf("setup: listed %d (%v)", len(due), err)
	}
	if b := m1.TotalAlloc - m0.TotalAlloc; b > 1<<20 {
		t.Fatalf("listing 100 of %d due runs allocated %d bytes: it walked and sorted every due run", n, b)
	}
}

type countGets struct {
	store.Wrapper
	n atomic.Int64
}

func (s *countGets) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	s.n.Add(1)
	return s.Wrapper.RunGet(ctx, runID)
}

// TestPausedRunningRunDoesNotSpinTheLoop checks that the scheduler
// skips a paused run (spec runtime-model.md §2.7: "While paused: tick
// returns immediately, resume errors, the scheduler and event delivery
// skip the run"; docs/run-states.md: "A paused run ... is skipped by
// Tick, the scheduler and event delivery") and that its loop sleeps
// when nothing is due (scheduler.go package doc: "the loop sleeps until
// the next deadline (or the poll interval, whichever is first) instead
// of polling blindly"). A run that is running with the host pause flag
// set (here started with vars that carry it, as Start keeps a caller's
// _runtime like Python does) is driven by Recover: a Tick of a paused
// run does nothing and leaves it running, so drive gives it 100 no-op
// ticks, counts it resumed, calls OnRunResumed, and puts it in
// "unfinished" to be driven again at once: the loop then spins at full
// CPU, forever, with PollInterval an hour.
func TestPausedRunningRunDoesNotSpinTheLoop(t *testing.T) {
	ctx := context.Background()
	cs, rt := pausedRunningRun(t)
	var resumed atomic.Int32
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour,
		OnRunResumed: func(*durable.RunState) { resumed.Add(1) }})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	s.Stop()
	st := s.Stats()
	if st.PollCycles > 5 || resumed.Load() > 0 {
		t.Fatalf("with one paused run and nothing due, in 200 ms: %d polls, %d run reads, %d OnRunResumed calls "+
			"(want the loop asleep and the paused run skipped)", st.PollCycles, cs.n.Load(), resumed.Load())
	}
}

// slowCompletionCommit holds the commit that records a completed "call"
// effect until its context is cancelled, then passes it on with that
// context: a Stop that lands after the session checked its context and
// before the store did (while the commit waits for a pool connection, or
// while a decorator below the runtime reads before writing).
type slowCompletionCommit struct {
	store.Wrapper
	inCommit chan struct{}
	release  chan struct{} // closed by the test a while after Stop
	once     sync.Once
}

func (s *slowCompletionCommit) RunCommit(ctx context.Context, p *store.CommitParams) error {
	for _, r := range p.Records {
		if r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == "call" {
			hold := false
			s.once.Do(func() { hold = true })
			if hold {
				close(s.inCommit)
				select {
				case <-ctx.Done(): // the commit's context is the caller's: Stop ends it
				case <-s.release: // it is not: the commit goes on after Stop
				}
			}
		}
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// TestStopDuringACompletionCommitDoesNotReplayTheEffect checks the
// promise of runtime/session.go (session.commit): "The caller went away
// (a shutdown) after this work was done: keep it, an external effect's
// completion above all, rather than replay it", which is what makes the
// scheduler's Stop safe (docs/compatibility.md, scheduler Start/Stop:
// "Stop cancels the context of a tick in flight"). The session checks
// ctx.Err() once and then commits with the caller's context: a Stop that
// arrives during the commit cancels it on PostgreSQL (store/postgres
// writing() refuses a cancelled context, and its pool wait honours it),
// the completion of an effect that already ran is lost, and the next
// runner calls the external effect a second time.
func TestStopDuringACompletionCommitDoesNotReplayTheEffect(t *testing.T) {
	ctx := context.Background()
	url := os.Getenv("TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("set TEST_POSTGRES_URL to run this PostgreSQL test")
	}
	schema := fmt.Sprintf("sched_stop_commit_%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Error(err)
		}
	})
	db, err := postgres.New(ctx, postgres.Config{URL: url, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	slow := &slowCompletionCommit{Wrapper: store.Wrapper{Store: db}, inCommit: make(chan struct{}), release: make(chan struct{})}
	wf := &runtime.Workflow{ID: "c", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "call", ResultKey: "r"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: slow, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	rt.SetHandler("call", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1) // an external call: an e-mail sent, a payment made
		return runtime.Completed(map[string]any{"sent": true}), nil
	}})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "c"}) // left running, as after a crash
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt})
	started := make(chan error, 1)
	go func() { started <- s.Start(ctx) }() // Start's Recover drives the run
	<-slow.inCommit
	// Stop cancels the tick's context at once and waits for the tick; the
	// held commit goes on a while later if Stop did not end it.
	time.AfterFunc(200*time.Millisecond, func() { close(slow.release) })
	s.Stop()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	again, _ := scheduler.New(scheduler.Config{Runtime: rt})
	if err := again.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, id)
	if st.Status != durable.RunCompleted || calls.Load() != 1 {
		t.Fatalf("after a stop during the commit of its completion and a recovery: run %s, the external effect called %d times (want once)",
			st.Status, calls.Load())
	}
}

// TestResumeRunDrivesARunPausedWhileRunning: a run paused while running
// (its vars said so at Start) is skipped by the scheduler, so ResumeRun
// must drive it itself, as it drives a run lifted from its pause wait
// (ResumeRun: "continues where it stopped (and is driven)").
func TestResumeRunDrivesARunPausedWhileRunning(t *testing.T) {
	ctx := context.Background()
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait",
		Vars: map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunWaiting || runtime.IsPaused(st) {
		t.Fatalf("after ResumeRun: %s paused=%v, want waiting on its time wait", st.Status, runtime.IsPaused(st))
	}
}

// pausedRunningRun is a run started paused (so left running, not yet at
// its wait) on a store that counts its run reads.
func pausedRunningRun(t *testing.T) (*countGets, *runtime.Runtime) {
	t.Helper()
	ctx := context.Background()
	cs := &countGets{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: cs, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait",
		Vars: map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning || !runtime.IsPaused(st) {
		t.Fatalf("setup: %s paused=%v", st.Status, runtime.IsPaused(st))
	}
	return cs, rt
}
