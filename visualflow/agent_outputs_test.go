package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// runFlows compiles flows (the first is the root), registers them with
// extra workflows, starts the root with vars and ticks it.
func runFlows(t *testing.T, flows []string, extra []*runtime.Workflow, handlers map[durable.EffectType]runtime.Handler, vars map[string]any) (*runtime.Runtime, *durable.RunState) {
	t.Helper()
	var wfs []*runtime.Workflow
	for _, src := range flows {
		wf, err := Compile(mustFlow(t, src), CompileOptions{})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		wfs = append(wfs, wf)
	}
	wfs = append(wfs, extra...)
	rt := newTestRuntime(t, memory.New(), handlers, wfs...)
	ctx := context.Background()
	if vars == nil {
		vars = map[string]any{}
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wfs[0].ID, Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

// fakeReact is a ReAct child that completes at once with a fixed answer.
func fakeReact(id, answer string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "done", Nodes: map[string]runtime.NodeFunc{
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": answer, "iterations": int64(1), "messages": []any{}}), nil
		},
	}}
}

// agentFlow: start -> agent (structured output enabled, thinking and
// prompt_cache_binding pins) -> end with a pin wired from agent.<srcPin>.
func agentFlow(structured bool, srcPin string) string {
	schema := `"outputSchema":{"enabled":false}`
	if structured {
		schema = `"outputSchema":{"enabled":true,"jsonSchema":{"type":"object","properties":{"x":{"type":"number"}}}}`
	}
	return `{"id":"ag","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"agent","type":"agent","data":{
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"},{"id":"thinking","type":"any"},{"id":"prompt_cache_binding","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"},{"id":"data","type":"object"},{"id":"result","type":"object"}],
   "pinDefaults":{"prompt":"do it","thinking":"high","prompt_cache_binding":"bind-1"},
   "agentConfig":{"provider":"p","model":"m","_react_workflow_id":"react-ag",` + schema + `}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"r","type":"any"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"agent","targetHandle":"exec-in"},
 {"source":"agent","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"agent","sourceHandle":"` + srcPin + `","target":"end","targetHandle":"r"}]}`
}

// §5.6 Phase structured: "params = {temperature, seed (if ≥0), thinking?,
// prompt_cache_binding?}". The structured-output llm_call must carry the
// agent's thinking and prompt_cache_binding settings.
func TestAgentStructuredPassKeepsThinkingAndCacheBinding(t *testing.T) {
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
	_, st := runFlows(t, []string{agentFlow(true, "data")}, []*runtime.Workflow{fakeReact("react-ag", "one")},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if len(llm.payloads) != 1 {
		t.Fatalf("llm calls = %d, want 1 (structured pass)", len(llm.payloads))
	}
	params, _ := llm.payloads[0]["params"].(map[string]any)
	if params["thinking"] != "high" || params["prompt_cache_binding"] != "bind-1" {
		t.Fatalf("structured llm_call params = %s; want thinking=high and prompt_cache_binding=bind-1 (§5.6)", jsonText(t, params))
	}
}

// §5.6 Output pins: legacy `result` = "raw result when it has keys other
// than success" — for a structured agent _temp.effects.<N> = data, so a
// wire from agent.result must yield the data object.
func TestAgentLegacyResultPinStructured(t *testing.T) {
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
	_, st := runFlows(t, []string{agentFlow(true, "result")}, []*runtime.Workflow{fakeReact("react-ag", "one")},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if got, want := jsonText(t, st.Output["r"]), jsonText(t, map[string]any{"x": int64(1)}); got != want {
		t.Fatalf("agent.result = %s\nwant the structured data %s (§5.6 legacy result pin)", got, want)
	}
}

// §5.6 Output pins: legacy `result` for an unstructured agent (raw is
// {success:true}) is exactly {response, success, meta, scratchpad}.
func TestAgentLegacyResultPinUnstructured(t *testing.T) {
	_, st := runFlows(t, []string{agentFlow(false, "result")}, []*runtime.Workflow{fakeReact("react-ag", "one")}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	r, _ := st.Output["r"].(map[string]any)
	if r == nil {
		t.Fatalf("agent.result unresolved: %s", jsonText(t, st.Output))
	}
	var keys []string
	for k := range r {
		keys = append(keys, k)
	}
	for _, k := range []string{"response", "success", "meta", "scratchpad"} {
		if _, ok := r[k]; !ok {
			t.Fatalf("agent.result lacks %q: %v", k, keys)
		}
	}
	if len(r) != 4 {
		t.Fatalf("agent.result keys = %v; want exactly response, success, meta, scratchpad (§5.6)", keys)
	}
}

// §5.6 Phase init: with provider/model missing the outputs are
// {response, success:false, meta:{schema, version, provider|"unknown",
// model|"unknown", tool_calls:0, tool_results:0}, scratchpad, ...}; a
// terminal agent completes with them. The meta has no output_mode.
func TestAgentConfigErrorMeta(t *testing.T) {
	flow := `{"id":"ag0","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"agent","type":"agent","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"x"},"agentConfig":{}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"agent","targetHandle":"exec-in"}]}`
	_, st := runFlows(t, []string{flow}, nil, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	want := map[string]any{"schema": "abstractcode.agent.v1.meta", "version": int64(1), "provider": "unknown",
		"model": "unknown", "tool_calls": int64(0), "tool_results": int64(0)}
	if got, w := jsonText(t, st.Output["meta"]), jsonText(t, want); got != w {
		t.Fatalf("meta = %s\nwant %s (§5.6 phase init)", got, w)
	}
}
