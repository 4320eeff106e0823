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
