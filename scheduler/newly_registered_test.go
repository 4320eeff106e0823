package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// twoStepChain is a two-node workflow: "a" moves to "b", which completes.
func twoStepChain(id string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// leftRunningByCrash returns st with a run of twoStepChain(wf) started and
// never ticked: what a process that crashed right after Start leaves.
func leftRunningByCrash(t *testing.T, st store.Store, wf string) string {
	t.Helper()
	reg, _ := runtime.NewRegistry(twoStepChain(wf))
	prev, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := prev.Start(context.Background(), runtime.StartParams{WorkflowID: wf})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// runtimeWithNoWorkflows is a runtime over st whose registry holds no
// workflow yet, and that registry.
func runtimeWithNoWorkflows(t *testing.T, st store.Store) (*runtime.Runtime, *runtime.Registry) {
	t.Helper()
	reg, _ := runtime.NewRegistry()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt, reg
}

// fastPollingScheduled is a Scheduled, polling every 5 ms, over a runtime
// on st whose registry holds no workflow yet.
func fastPollingScheduled(t *testing.T, st store.Store) *scheduler.Scheduled {
	t.Helper()
	rt, _ := runtimeWithNoWorkflows(t, st)
	sc, err := scheduler.NewScheduled(context.Background(), rt, scheduler.Config{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	return sc
}

// A host using Scheduled lets Run register each workflow when it first
// runs it. Start's Recover skipped the run a crash left running, its
// workflow not registered yet, and without claims no other Recover comes:
// once Run registers that workflow, the loop must continue the run.
func TestScheduledRunContinuesRunsLeftRunningOfTheWorkflowItRegisters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	left := leftRunningByCrash(t, st, "chain")
	sc := fastPollingScheduled(t, st)
	if _, s, err := sc.Run(ctx, twoStepChain("chain"), nil); err != nil || s.Status != durable.RunCompleted {
		t.Fatalf("Run: %v %v", s, err)
	}
	got, ok := completesWithin(sc.Runtime, left, 10*time.Second)
	if ok {
		return
	}
	t.Fatalf("run %s a crash left running is still %s at %q 10 s after Scheduled.Run registered its "+
		"workflow; want it continued to completed", left, got.Status, got.CurrentNode)
}

// The same for a workflow the host registers on the runtime's registry
// itself, after Recover: the next pass drives the workflow's running runs
// (found from the store's status listing of that workflow, once), and
// only then; before, they are left for a runtime that serves them.
func TestRunsLeftRunningAreDrivenOnceTheHostRegistersTheirWorkflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	left := leftRunningByCrash(t, st, "chain")
	rt, reg := runtimeWithNoWorkflows(t, st)
	s, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, left); got.Status != durable.RunRunning {
		t.Fatalf("before its workflow is registered, run %s is %s; want left running", left, got.Status)
	}
	if err := reg.Register(twoStepChain("chain")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, left); got.Status != durable.RunCompleted {
		t.Fatalf("after the host registered its workflow, run %s is %s at %q; want completed by the pass",
			left, got.Status, got.CurrentNode)
	}
}
