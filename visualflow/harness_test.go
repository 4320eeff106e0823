package visualflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// fixedClock is the test clock: 2026-01-01T00:00:00Z.
var fixedClock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// scripted returns a handler that answers each call with the next result
// and records the payloads it saw.
type scripted struct {
	results  []any
	payloads []map[string]any
}

func (s *scripted) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		s.payloads = append(s.payloads, pyjson.CloneObject(req.Effect.Payload))
		if len(s.results) == 0 {
			return runtime.Failed("scripted handler: no result left"), nil
		}
		r := s.results[0]
		s.results = s.results[1:]
		return runtime.Completed(r), nil
	}}
}

// newTestRuntime returns a runtime over st with the workflows registered.
func newTestRuntime(t *testing.T, st store.Store, handlers map[durable.EffectType]runtime.Handler, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, wf := range wfs {
		if err := reg.Put(wf); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	rt, err := runtime.New(runtime.Config{
		Store: st, Registry: reg, Handlers: handlers, MaxSteps: 100000,
		Clock: func() time.Time { return fixedClock },
		NewID: func() string { n++; return fmt.Sprintf("run-%d", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// mustFlow decodes a flow JSON document.
func mustFlow(t testing.TB, src string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decoding flow: %v", err)
	}
	return m
}

// startRunWith compiles flow with opts, starts it with vars and ticks it.
func startRunWith(t *testing.T, flow map[string]any, opts CompileOptions, vars map[string]any) (*runtime.Runtime, *durable.RunState) {
	t.Helper()
	return startRunHandled(t, flow, opts, nil, vars)
}

// startRunHandled is startRunWith with effect handlers.
func startRunHandled(t *testing.T, flow map[string]any, opts CompileOptions, handlers map[durable.EffectType]runtime.Handler, vars map[string]any) (*runtime.Runtime, *durable.RunState) {
	t.Helper()
	wf, err := Compile(flow, opts)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	rt := newTestRuntime(t, memory.New(), handlers, wf)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

// jsonText renders v as canonical indented JSON for comparisons.
func jsonText(t testing.TB, v any) string {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Style{SortKeys: true, Indent: 2})
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return string(b)
}

// ledgerKinds renders each ledger record as "<status> <effect> <node>".
func ledgerKinds(recs []*durable.StepRecord) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		eff := "-"
		if r.Effect != nil {
			eff = string(r.Effect.Type)
		}
		out = append(out, fmt.Sprintf("%s %s %s", r.Status, eff, r.NodeID))
	}
	return out
}

// startNode is an on_flow_start with no data pins.
func startNode() map[string]any {
	return rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil)
}

// setVarNode is a set_var writing name (value from its pins or defaults).
func setVarNode(id, name string, defaults map[string]any) map[string]any {
	d := map[string]any{"name": name}
	for k, v := range defaults {
		d[k] = v
	}
	return rsNode(id, "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
		map[string]any{"pinDefaults": d})
}

// literalStringNode is a literal_string node.
func literalStringNode(id, value string) map[string]any {
	return rsNode(id, "literal_string", nil, []string{"value:string"}, map[string]any{"literalValue": value})
}

// compareNode is a compare node "a <op> b" with b and op as defaults.
func compareNode(id, op string, b int) map[string]any {
	return rsNode(id, "compare", []string{"a:number", "b:number", "op:string"}, []string{"result:boolean"},
		map[string]any{"pinDefaults": map[string]any{"b": int64(b), "op": op}})
}

// getVarNode is a get_var pure node reading name.
func getVarNode(id, name string) map[string]any {
	return rsNode(id, "get_var", []string{"name:string"}, []string{"value:any"},
		map[string]any{"pinDefaults": map[string]any{"name": name}})
}

// whileNode is a while node.
func whileNode(id string, defaults map[string]any) map[string]any {
	return rsNode(id, "while", []string{"exec-in:exec", "condition:boolean"},
		[]string{"loop:exec", "done:exec", "item:any", "index:number"}, map[string]any{"pinDefaults": defaults})
}

// runFlow compiles flow, starts it with vars, ticks it once and returns
// the run state.
func runFlow(t *testing.T, flow map[string]any, vars map[string]any) *durable.RunState {
	t.Helper()
	_, st := startRunWith(t, flow, CompileOptions{}, vars)
	return st
}

// tempControl is the run's _temp._control map (nil when absent).
func tempControl(st *durable.RunState) map[string]any {
	tmp, _ := st.Vars["_temp"].(map[string]any)
	c, _ := tmp["_control"].(map[string]any)
	return c
}
