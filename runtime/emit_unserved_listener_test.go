package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// servingRuntime is a runner on st serving only wfs, claiming runs as
// owner (unless "").
func servingRuntime(t *testing.T, st store.Store, owner string, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Store: st, Registry: reg}
	if owner != "" {
		cfg.Claims = &runtime.Claims{Owner: owner, TTL: 30 * time.Second}
	}
	rt, err := runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// pingEmitter emits the global event "ping" with maxSteps, its result at
// "emitted".
func pingEmitter(maxSteps int64) *runtime.Workflow {
	return &runtime.Workflow{ID: "emitter", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
		"emit": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "emitted",
				Payload: map[string]any{"name": "ping", "scope": "global", "max_steps": maxSteps,
					"payload": map[string]any{"x": int64(1)}}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{})
		}),
	}}
}

// pingListener waits on the global event "ping", its envelope at "got".
func pingListener() *runtime.Workflow {
	return &runtime.Workflow{ID: "listener", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "got",
				Payload: map[string]any{"name": "ping", "scope": "global"}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"got": run.Vars["got"]})
		}),
	}}
}

// Runner A serves the emitting workflow, runner B the listening one, on
// one store (runners sharing a store may each serve some workflows). A's
// EMIT_EVENT skipped B's listener as "workflow_not_registered" and the
// event was lost: the listener waited for ever. A now commits the resume
// (it runs no workflow code), counts the listener delivered, and leaves it
// running at its resume node for B to drive, whatever max_steps asked.
func TestEmitReachesListenerServedByAnotherRuntime(t *testing.T) {
	for _, maxSteps := range []int64{0, 5} {
		t.Run(fmt.Sprintf("max_steps=%d", maxSteps), func(t *testing.T) {
			ctx := context.Background()
			shared := memory.New()
			a := servingRuntime(t, shared, "runner-a", pingEmitter(maxSteps))
			b := servingRuntime(t, shared, "runner-b", pingListener())
			lid, err := b.Start(ctx, runtime.StartParams{WorkflowID: "listener"})
			if err != nil {
				t.Fatal(err)
			}
			if st, err := b.Tick(ctx, lid, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
				t.Fatalf("listener's first tick: %v, %v; want waiting on the event", st, err)
			}
			eid, err := a.Start(ctx, runtime.StartParams{WorkflowID: "emitter"})
			if err != nil {
				t.Fatal(err)
			}
			est, err := a.Tick(ctx, eid, runtime.TickOptions{})
			if err != nil || est.Status != durable.RunCompleted {
				t.Fatalf("emitter's tick: %v, %v; want completed", est, err)
			}
			res, _ := est.Vars["emitted"].(map[string]any)
			resumed, _ := res["resumed"].([]any)
			entry, _ := resumed[0].(map[string]any)
			if res["delivered"] != int64(1) || fmt.Sprint(res["delivered_to"]) != fmt.Sprint([]any{lid}) ||
				len(resumed) != 1 || entry["run_id"] != lid || entry["status"] != "running" || len(entry) != 2 {
				t.Fatalf("emit result %v; want the listener delivered, resumed {run_id, status: running}", res)
			}

			lst, err := b.GetState(ctx, lid)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := lst.Vars["got"].(map[string]any)
			if lst.Status != durable.RunRunning || lst.CurrentNode != "end" || fmt.Sprint(got["payload"]) != "map[x:1]" {
				t.Fatalf("listener after the emit: %s at %q, got %v; want running at end with the envelope",
					lst.Status, lst.CurrentNode, lst.Vars["got"])
			}
			wantLastRecordResume(t, shared, lid, "listener")

			// Runner B drives what it serves (as its scheduler's Recover
			// would); A holds no claim on the listener any more.
			st, err := b.Tick(ctx, lid, runtime.TickOptions{})
			if err != nil || st.Status != durable.RunCompleted {
				t.Fatalf("listener ticked by runner B: %v, %v; want completed", st, err)
			}
		})
	}
}

// unregisteredListener waits on the session event "go" of session S.
func unregisteredListener(id string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev",
				Payload: map[string]any{"name": "go", "scope": "session", "session_id": "S"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ev": run.Vars["ev"]}), nil
		},
	}}
}

// A single process whose registry lacks the listener's workflow (no
// runner serves it, or it was unregistered): the host's EmitEvent resumes
// the listener, returns it among the ids delivered, and leaves it running
// with the event at its result key. It goes on once a runtime serving its
// workflow recovers it (scheduler.Recover), here over the same store.
func TestEmitEventLeavesUnservedListenerRunningForRecover(t *testing.T) {
	ctx := context.Background()
	shared := memory.New()
	reg, err := runtime.NewRegistry(unregisteredListener("x"), unregisteredListener("y"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: shared, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, wf := range []string{"x", "y"} {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("listener %s: %v %v", wf, st, err)
		}
		ids[wf] = id
	}
	if err := reg.Unregister("y"); err != nil {
		t.Fatal(err)
	}
	delivered, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "S", Payload: map[string]any{"a": 1}})
	if err != nil || len(delivered) != 2 {
		t.Fatalf("EmitEvent = %v, %v; want both listeners delivered, no error", delivered, err)
	}
	if st, _ := rt.GetState(ctx, ids["x"]); st.Status != durable.RunCompleted {
		t.Fatalf("listener x is %s; want completed (driven by the emit)", st.Status)
	}
	st, _ := rt.GetState(ctx, ids["y"])
	ev, _ := st.Vars["ev"].(map[string]any)
	if st.Status != durable.RunRunning || st.CurrentNode != "done" || fmt.Sprint(ev["payload"]) != "map[a:1]" {
		t.Fatalf("unserved listener y: %s at %q, ev %v; want running at done with the event", st.Status, st.CurrentNode, ev)
	}

	// A runtime serving y recovers it.
	serving := servingRuntime(t, shared, "", unregisteredListener("y"))
	s, err := scheduler.New(scheduler.Config{Runtime: serving})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := serving.GetState(ctx, ids["y"]); st.Status != durable.RunCompleted {
		t.Fatalf("listener y after a Recover by a runtime serving it: %s; want completed", st.Status)
	}
}

// Resume without a tick (MaxSteps < 0) runs no workflow code either: a
// runtime that does not serve the run's workflow commits it, leaving the
// run running; one asked to tick it reports the workflow missing and
// leaves the run waiting.
func TestResumeWithoutTickNeedsNoWorkflow(t *testing.T) {
	ctx := context.Background()
	shared := memory.New()
	b := servingRuntime(t, shared, "", pingListener())
	other := servingRuntime(t, shared, "", pingEmitter(0))
	id, err := b.Start(ctx, runtime.StartParams{WorkflowID: "listener"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener's first tick: %v, %v", st, err)
	}
	key := st.Waiting.WaitKey
	_, err = other.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"n": 1}})
	var nf *runtime.WorkflowNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Resume with a tick by a runtime without the workflow = %v; want WorkflowNotFoundError", err)
	}
	if st, _ := b.GetState(ctx, id); st.Status != durable.RunWaiting {
		t.Fatalf("run after the refused resume: %s; want waiting", st.Status)
	}
	st, err = other.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"n": 1}, MaxSteps: -1})
	if err != nil || st.Status != durable.RunRunning || st.CurrentNode != "end" {
		t.Fatalf("Resume without a tick = %v, %v; want running at end", st, err)
	}
	if st, err := b.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick by the serving runtime: %v, %v; want completed", st, err)
	}
}
