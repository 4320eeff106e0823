package runtime_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

type badVarsHostConfig struct {
	Name  string
	Extra map[string]any
}

// TestStartRefusesBadGoValueInVarsAtItsPath: Start refuses vars that are
// not JSON with an error naming the key path of the bad value, also when
// it sits inside a Go struct or an int-keyed map (converted through
// encoding/json, whose error names no member), and refuses a value with
// no JSON form (an error value, which encoding/json writes as {}) rather
// than storing it as an empty object, as Python's json.dumps raises
// TypeError. The encoder cases are in internal/pyjson.
func TestStartRefusesBadGoValueInVarsAtItsPath(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		vars map[string]any
		want string
	}{
		{"NaN in a map in a struct", map[string]any{"cfg": &badVarsHostConfig{Name: "x",
			Extra: map[string]any{"scores": []any{1.5, math.Inf(1)}}}}, "vars.cfg.Extra.scores[1]"},
		{"NaN in an int-keyed map", map[string]any{"m": map[int]any{7: math.NaN()}}, "vars.m.7"},
		{"error value", map[string]any{"err": errors.New("boom")}, "vars.err"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w", Vars: c.vars})
			if err == nil {
				run, _ := rt.GetState(ctx, id)
				t.Fatalf("Start accepted vars that are not JSON; the run holds %#v", run.Vars)
			}
			if !strings.Contains(err.Error(), c.want+" ") {
				t.Errorf("error %q does not name the bad value's path %s", err, c.want)
			}
		})
	}
}
