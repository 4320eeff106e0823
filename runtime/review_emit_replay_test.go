package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// TestReplayedEmitDrivesItsListeners: on the JSON-file store a kill can
// leave the completed record of an EMIT_EVENT (max_steps 0) without the
// emitter's state. The listeners were resumed (committed running at their
// resume node) and were to be driven after the emitter's tick: that drive
// was a follow-up of the commit the kill cut. The replay reuses the
// record instead of delivering again, and must drive the listeners it
// names (delivered_to) itself, as a replayed async START_SUBWORKFLOW
// drives its child; otherwise they stay running with nothing to drive
// them.
func TestReplayedEmitDrivesItsListeners(t *testing.T) {
	emitter := goEmitter()
	listener := childWaitEvtForReplay()
	var listenerID string
	newRuntime := func(st store.Store) *runtime.Runtime {
		rt := applyRuntime(t, runtime.Config{Store: st}, emitter, listener)
		startWaitingOnce(t, rt, "listener", &listenerID)
		return rt
	}
	run, _, js := replayAfterKill(t, newRuntime, emitOfGo)
	if run.Status != durable.RunCompleted {
		t.Fatalf("emitter after the replay: %s", run.Status)
	}
	l, err := js.RunGet(context.Background(), listenerID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != durable.RunCompleted {
		t.Fatalf("the listener the event resumed is %s at %q after the emitter's replay; want it driven to its end", l.Status, l.CurrentNode)
	}
}

func childWaitEvtForReplay() *runtime.Workflow {
	return &runtime.Workflow{ID: "listener", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "go", "scope": "global"}, ResultKey: "ev"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"got": run.Vars["ev"]})
		}),
	}}
}

// TestReplayedEmitHandsAnEndedListenerToItsParent: the listener the
// event ended (its wait had no resume node) is the child its parent
// waits on; the parent's resume was a follow-up of the emitter's commit
// the kill cut, and the replay that reuses the emit's record must hand
// the parent its child's end itself.
func TestReplayedEmitHandsAnEndedListenerToItsParent(t *testing.T) {
	emitter := goEmitter()
	listener := &runtime.Workflow{ID: "listener", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			// No resume node: the event completes the run.
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "go", "scope": "global"}, ResultKey: "ev"}, "")
		}),
	}}
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "listener", "async": true, "wait": true}}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	var parentID string
	newRuntime := func(st store.Store) *runtime.Runtime {
		rt := applyRuntime(t, runtime.Config{Store: st}, emitter, listener, parent)
		startWaitingOnce(t, rt, "parent", &parentID)
		return rt
	}
	run, _, js := replayAfterKill(t, newRuntime, emitOfGo)
	if run.Status != durable.RunCompleted {
		t.Fatalf("emitter after the replay: %s", run.Status)
	}
	p, err := js.RunGet(context.Background(), parentID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != durable.RunCompleted {
		t.Fatalf("the parent of the listener the event ended is %s (waiting %+v) after the emitter's replay; want it resumed with its child's end", p.Status, p.Waiting)
	}
}

// emitOfGo picks the completed record of the emitter's EMIT_EVENT (not a
// terminal status event, recorded as an emit_event too).
func emitOfGo(r *durable.StepRecord) bool {
	return completedOf(durable.EffectEmitEvent)(r) && r.Effect.Payload["name"] == "go"
}

// goEmitter emits the global event "go" and completes with its summary.
func goEmitter() *runtime.Workflow {
	return &runtime.Workflow{ID: "w", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
		"emit": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "r",
				Payload: map[string]any{"name": "go", "scope": "global"}}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
}

// startWaitingOnce starts a run of workflowID on rt and ticks it to its
// wait, the first time only (*id empty), and records its id in *id.
func startWaitingOnce(t *testing.T, rt *runtime.Runtime, workflowID string, id *string) {
	t.Helper()
	if *id != "" {
		return
	}
	runID, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: workflowID})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(context.Background(), runID, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("%s: %v, %v", workflowID, st, err)
	}
	*id = runID
}
