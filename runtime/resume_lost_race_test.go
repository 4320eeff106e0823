package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// racingAsks is a workflow that asks, then (at "mid") calls hold for the
// answer given, then asks again on wait key "k2": a resume held in "mid"
// has not committed yet, so another writer can answer the same wait.
func racingAsks(hold func(answer map[string]any)) *runtime.Workflow {
	return &runtime.Workflow{ID: "two", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "a?"}, ResultKey: "a"}, "mid")
		}),
		"mid": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			hold(run.Vars["a"].(map[string]any))
			return runtime.Next("ask2"), nil
		},
		"ask2": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "b?", "wait_key": "k2"}, ResultKey: "b"}, "")
		}),
	}}
}

// holdAnswer returns a hold for racingAsks that blocks the resume
// answering {"who": who} until release is called, signalling entered.
func holdAnswer(who string) (hold func(map[string]any), entered <-chan struct{}, release func()) {
	in := make(chan struct{}, 1)
	out := make(chan struct{})
	var once sync.Once
	return func(a map[string]any) {
			if a["who"] == who {
				in <- struct{}{}
				<-out
			}
		}, in, func() {
			once.Do(func() { close(out) })
		}
}

// Two writers without a shared run lock (a second runtime on the same
// store, as a Python host resuming through the same database is) answer
// the same wait. The loser's commit is refused, and it learns so in the
// contract's terms (spec §2.6: a wait is resumed at most once; Resume's
// doc): a *StaleResumeError, even when the winner left the run live
// (waiting on its next key) rather than ended or paused, not the raw
// version conflict a host cannot tell from a store failure to retry.
func TestResumeLostToAnotherWriterIsStaleWhenTheRunMovedOn(t *testing.T) {
	ctx := context.Background()
	hold, entered, release := holdAnswer("B")
	defer release()
	wf := racingAsks(hold)
	f := setup(t, wf)
	reg, _ := runtime.NewRegistry(wf)
	rtB, err := runtime.New(runtime.Config{Store: f.st, Registry: reg, Clock: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "two"})
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{})
	key := st.Waiting.WaitKey
	errB := make(chan error, 1)
	go func() {
		_, err := rtB.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"who": "B"}})
		errB <- err
	}()
	<-entered
	stA, errA := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"who": "A"}})
	if errA != nil || stA.Status != durable.RunWaiting || stA.Waiting.WaitKey != "k2" {
		t.Fatalf("winner: %v, %s", errA, stA.Status)
	}
	release()
	e := <-errB
	fin, _ := f.rt.GetState(ctx, id)
	if a, _ := fin.Vars["a"].(map[string]any); a["who"] != "A" {
		t.Fatalf("the loser's answer landed: a = %v", fin.Vars["a"])
	}
	var stale *runtime.StaleResumeError
	if !errors.As(e, &stale) {
		t.Fatalf("loser's Resume error = %v; want a *StaleResumeError", e)
	}
	if stale.Status != string(durable.RunWaiting) || stale.Expected != "k2" || stale.Got != key {
		t.Errorf("stale = %+v; want the run as the winner left it (waiting on k2)", stale)
	}
}

// A conflict on the resume's own commit while the run still waits on the
// same wait (another writer saved it unchanged, as a limits update does)
// is no lost resume: the wait is still there to answer, and the conflict
// is returned as such, for the caller to retry.
func TestResumeConflictOnAnUnansweredWaitIsNotStale(t *testing.T) {
	ctx := context.Background()
	hold, entered, release := holdAnswer("B")
	defer release()
	f := setup(t, racingAsks(hold))
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "two"})
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{})
	key := st.Waiting.WaitKey
	errB := make(chan error, 1)
	go func() {
		_, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"who": "B"}})
		errB <- err
	}()
	<-entered
	bumpVersion(t, f, id)
	release()
	e := <-errB
	var stale *runtime.StaleResumeError
	if errors.As(e, &stale) || !errors.Is(e, store.ErrConflict) {
		t.Fatalf("Resume error = %v; want the version conflict", e)
	}
}

// A conflict after the resume's own commit landed (here at the commit
// that ends an external effect's attempt, made after the one carrying the
// resume's records) does not make the resume stale: the answer is in.
func TestResumeConflictAfterItsCommitIsNotStale(t *testing.T) {
	ctx := context.Background()
	const work durable.EffectType = "test_slow_work"
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	wf := &runtime.Workflow{ID: "work", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "a?"}, ResultKey: "a"}, "work")
		}),
		"work": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: work, Payload: map[string]any{}, ResultKey: "w"}, "")
		}),
	}}
	f := setup(t, wf)
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: f.st, Registry: reg, Clock: func() time.Time { return f.now },
		Handlers: map[durable.EffectType]runtime.Handler{
			// Not Local: its STARTED record, with the resume's, is
			// committed before it runs.
			work: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				entered <- struct{}{}
				<-release
				return runtime.Completed(map[string]any{}), nil
			}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "work"})
	st, _ := rt.Tick(ctx, id, runtime.TickOptions{})
	key := st.Waiting.WaitKey
	errR := make(chan error, 1)
	go func() {
		_, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"who": "A"}})
		errR <- err
	}()
	<-entered
	bumpVersion(t, f, id)
	close(release)
	e := <-errR
	var stale *runtime.StaleResumeError
	if errors.As(e, &stale) || !errors.Is(e, store.ErrConflict) {
		t.Fatalf("Resume error = %v; want the version conflict of the later commit", e)
	}
	run, _ := f.st.RunGet(ctx, id)
	if a, _ := run.Vars["a"].(map[string]any); a["who"] != "A" {
		t.Fatalf("the resume's answer is not in the store: a = %v", run.Vars["a"])
	}
}

// bumpVersion saves run id as stored, as another writer's save does: its
// version moves, nothing else.
func bumpVersion(t *testing.T, f *fixture, id string) {
	t.Helper()
	ctx := context.Background()
	run, err := f.st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
}
