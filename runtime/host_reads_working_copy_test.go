package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node of the run reading it through the host API sees the steps the
// run made since its last checkpoint. Python saves the run after every
// step, so runtime.get_node_traces(run.run_id) and get_state(run.run_id)
// called by a node read the run saved after the previous step (spec §1.12,
// §2.3 4.5.h). The Go kernel commits only at durable boundaries, and local
// effects (ANSWER_USER, VARS_QUERY, …) are not one, so the store still
// holds the run as it started: GetNodeTraces and GetState read the tick's
// working copy instead, as GetLimitStatus does, and hand out a copy.
func TestGetNodeTracesFromNodeSeesEarlierSteps(t *testing.T) {
	var traces map[string]any
	var state *durable.RunState
	var tracesErr, stateErr error
	wf := &runtime.Workflow{ID: "traces", Entry: "say", Nodes: map[string]runtime.NodeFunc{
		"say": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["said"] = true
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser,
				Payload: map[string]any{"message": "hello"}}, "look"), nil
		},
		"look": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			traces, tracesErr = rc.Runtime().GetNodeTraces(ctx, run.RunID)
			state, stateErr = rc.Runtime().GetState(ctx, run.RunID)
			if state != nil {
				state.Vars["said"] = "changed by the reader" // its own copy
			}
			return runtime.Complete(map[string]any{"said": run.Vars["said"]}), nil
		},
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "traces"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", err, st)
	}
	if tracesErr != nil || stateErr != nil {
		t.Fatal(tracesErr, stateErr)
	}
	if _, ok := traces["say"].(map[string]any); !ok {
		t.Errorf("GetNodeTraces from node \"look\" = %v; want the trace of node \"say\" (its ANSWER_USER step), "+
			"as Python's get_node_traces reads the run saved after that step", traces)
	}
	if state.CurrentNode != "look" || state.Status != durable.RunRunning {
		t.Errorf("GetState from node \"look\": %s at %q; want running at \"look\"", state.Status, state.CurrentNode)
	}
	if st.Output["said"] != true {
		t.Errorf("output %v: the state GetState returned shares the run's vars", st.Output)
	}
}

// Outside a tick of the run (a host, or a node of another run) GetState
// still reads the last checkpoint.
func TestGetStateOutsideTheTickReadsCheckpoint(t *testing.T) {
	var other *durable.RunState
	var otherErr error
	var firstID string
	wf := &runtime.Workflow{ID: "peek", Entry: "look", Nodes: map[string]runtime.NodeFunc{
		"look": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if run.RunID != firstID {
				other, otherErr = rc.Runtime().GetState(ctx, firstID)
			}
			return runtime.Complete(map[string]any{}), nil
		},
	}}
	f := setup(t, wf)
	ctx := context.Background()
	var err error
	if firstID, err = f.rt.Start(ctx, runtime.StartParams{WorkflowID: "peek"}); err != nil {
		t.Fatal(err)
	}
	second, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "peek"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, second, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if otherErr != nil || other == nil || other.Status != durable.RunRunning || other.RunID != firstID {
		t.Fatalf("GetState of another run from a node: %v (err %v); want its stored state", other, otherErr)
	}
}
