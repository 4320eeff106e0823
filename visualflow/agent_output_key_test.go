package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestAgent_OutputKeyWritesMappedValue: "If N.outputKey is set, the
// mapped value ... is also written to that vars path when not null"
// (spec §1.3, §5.3). For an agent node the reference's
// _sync_effect_results_to_node_outputs (effect_type == "agent") writes
// mapped_value = raw = _temp.effects.<N>: the structured data, or
// {"success": true} without structured output.
func TestAgent_OutputKeyWritesMappedValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		structured bool
		llm        []any
		want       any
	}{
		{"structured", true, []any{map[string]any{"data": map[string]any{"x": int64(1)}}}, map[string]any{"x": int64(1)}},
		{"unstructured", false, nil, map[string]any{"success": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(agentFlow(c.structured, "response"), `"agentConfig":{`, `"outputKey":"saved.agent","agentConfig":{`, 1)
			llm := &scripted{results: c.llm}
			_, st := runFlows(t, []string{src}, []*runtime.Workflow{fakeReact("react-ag", "one")},
				map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			saved, _ := st.Vars["saved"].(map[string]any)
			if got, want := jsonText(t, saved["agent"]), jsonText(t, c.want); got != want {
				t.Fatalf("vars.saved.agent (agent outputKey) = %s, want the agent's mapped value %s", got, want)
			}
		})
	}
}

// TestAgent_MissingProviderWritesErrorObjectAtOutputKey: an agent with no
// provider or model does not fail the run; the reference
// (compiler.py _create_visual_agent_effect_handler, phase init) stores
// the error object {response, task, context, success: false, error,
// provider, model} at _temp.effects.<N>, and the next node's sync writes
// it at the node's outputKey (spec §5.3). A flow reading that var must
// see the failure.
func TestAgent_MissingProviderWritesErrorObjectAtOutputKey(t *testing.T) {
	t.Parallel()
	src := `{"id":"ag","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"agent","type":"agent","data":{
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],
   "pinDefaults":{"prompt":"do it"},
   "outputKey":"saved",
   "agentConfig":{"_react_workflow_id":"react-ag"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"agent","targetHandle":"exec-in"},
 {"source":"agent","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"}]}`
	_, st := runFlows(t, []string{src}, []*runtime.Workflow{fakeReact("react-ag", "one")}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	want := map[string]any{
		"response": "Agent configuration error: missing provider/model",
		"task":     "do it",
		"context":  map[string]any{},
		"success":  false,
		"error":    "missing provider/model",
		"provider": "unknown",
		"model":    "unknown",
	}
	if got, w := jsonText(t, st.Vars["saved"]), jsonText(t, want); got != w {
		t.Fatalf("vars.saved (agent outputKey) = %s, want the error object %s", got, w)
	}
}
