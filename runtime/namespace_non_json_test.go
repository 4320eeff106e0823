package runtime_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node that leaves a value that is not JSON in vars has its run failed
// with an error naming the path: vars.scratchpad.bad for a
// map[string]float64 holding a NaN under scratchpad. Under _temp or
// _runtime, which the kernel writes into on its own (namespace), the
// value was replaced by a new empty object when it could not be
// normalised: the NaN and its valid sibling "keep" vanished without a
// word. It must fail the run the same way.
func TestNaNInTypedTempNamespaceFailsRunNamingPath(t *testing.T) {
	ctx := context.Background()
	for _, ns := range []string{"_temp", "_runtime"} {
		wf := &runtime.Workflow{ID: "p", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				run.Vars[ns] = map[string]float64{"keep": 1, "bad": math.NaN()}
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "?"}, ResultKey: "answer"}, "b")
			}),
			"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}}
		f := setup(t, wf)
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != durable.RunFailed || !strings.Contains(st.Error, "vars."+ns+".bad") {
			_, kept := asMap(st.Vars[ns])["keep"]
			t.Errorf("%s: run %s, error %q, vars.%s.keep kept: %v; want the run failed naming vars.%s.bad, as under scratchpad",
				ns, st.Status, st.Error, ns, kept, ns)
		}
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// The same for an effect's result stored at a dotted result key through a
// value that is not JSON (SetPath): the result written in its place erased
// the NaN and its valid sibling, and the run went on.
func TestNaNUnderResultKeyPathFailsRunNamingPath(t *testing.T) {
	ctx := context.Background()
	const custom = durable.EffectType("test_local")
	wf := &runtime.Workflow{ID: "p", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			run.Vars["scratchpad"] = map[string]float64{"keep": 1, "bad": math.NaN()}
			return runtime.Request(&durable.Effect{Type: custom, Payload: map[string]any{}, ResultKey: "scratchpad.answer"}, "b")
		}),
		"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	f := setup(t, wf)
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: f.st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		custom: {Local: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed("done"), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "vars.scratchpad.bad") {
		t.Errorf("run %s, error %q, scratchpad %v; want the run failed naming vars.scratchpad.bad", st.Status, st.Error, st.Vars["scratchpad"])
	}
}
