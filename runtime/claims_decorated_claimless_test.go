package runtime_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestClaimsThroughDecoratorOfClaimlessStore: runtime.New
// refuses Config.Claims on a store without claims ("Config.Claims needs a
// store that implements store.RunClaimer"). store.Wrapper, the base of
// every decorator (observe, hashchain, offload, scheduler.WakeStore),
// always has RunClaim/RunRelease methods, failing with
// errors.ErrUnsupported when the wrapped store has none; so the same
// JSON-file store wrapped in observe passes New's check, and every run
// then fails at its first tick ("claiming run …: the wrapped store has no
// RunClaim"): the misconfiguration surfaces per run, after the run was
// created, instead of at New. Either New refuses, or the run must work.
func TestClaimsThroughDecoratorOfClaimlessStore(t *testing.T) {
	t.Parallel()
	js, err := jsonfile.New(jsonfile.Config{Dir: filepath.Join(t.TempDir(), "js"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.Close() })
	wf := &runtime.Workflow{ID: "wf", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.New(runtime.Config{Store: js, Registry: reg, Claims: &runtime.Claims{}}); err == nil {
		t.Fatal("precondition: New accepted Claims on a store without claims")
	}
	var st store.Store = observe.Wrap(js)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{}})
	if err != nil {
		return // refused at New, as for the undecorated store: fine
	}
	ctx := t.Context()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wf"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatalf("New accepted Claims on observe(jsonfile), yet every tick fails: %v (unsupported: %v)",
			err, errors.Is(err, errors.ErrUnsupported))
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("status %s", run.Status)
	}
}
