package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// terminalAgentFlow is start -> agent with no successor, so the run
// completes with the agent's final output; agentConfig is cfg.
func terminalAgentFlow(cfg map[string]any) map[string]any {
	return rsFlow("vfe_agent_term", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"},
			[]string{"exec-out:exec", "response:string", "data:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg}),
	}, "start.exec-out>ag.exec-in")
}

// §5.6 phase structured: outputs carry `data`, a non-object result giving
// {}. A structured agent that ends the flow completes with that data too;
// dropping final["data"] (or leaving a non-object result's data unset)
// would complete the run without the object.
func TestAgentTerminalStructuredCompletesWithData(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-term",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}
	for _, c := range []struct {
		name   string
		result map[string]any
		want   string
	}{
		{"object data", map[string]any{"data": map[string]any{"x": int64(1)}}, `{"x":1}`},
		{"list data", map[string]any{"data": []any{int64(1), int64(2)}}, "{}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			llm := &scripted{results: []any{c.result}}
			st := runAgentFlow(t, terminalAgentFlow(cfg), fakeReact("react-term", "one"),
				map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
			d, ok := st.Output["data"]
			if !ok {
				t.Fatalf("run output %s has no data (§5.6 structured outputs)", jsonText(t, st.Output))
			}
			if got, want := jsonText(t, d), jsonText(t, mustJSON(t, c.want)); got != want {
				t.Fatalf("run output data = %s, want %s", got, want)
			}
			if st.Output["response"] != c.want {
				t.Fatalf("run output response = %#v, want %q (compact JSON of data)", st.Output["response"], c.want)
			}
		})
	}
}

// A bucket saved in phase structured without a scratchpad (Python's
// handler defaults it to {node_id, steps: []}) finishes with that
// scratchpad, given the bucket's messages: the run's scratchpad names the
// node and keeps the transcript.
func TestAgentStructuredBucketWithoutScratchpadDefaults(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-term",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}
	msgs := []any{map[string]any{"role": "user", "content": "do it"}, map[string]any{"role": "assistant", "content": "A"}}
	saved := map[string]any{"phase": "structured", "messages": msgs,
		"structured": map[string]any{"data": map[string]any{"x": int64(1)}},
		"resolved_inputs": map[string]any{"task": "do it", "context": map[string]any{}, "provider": nil, "model": nil,
			"system": "", "tools": []any{}}}
	never := outputReact("react-term", map[string]any{"answer": "child started again"}, nil)
	st := runAgentFlow(t, terminalAgentFlow(cfg), never, nil, map[string]any{"_temp": map[string]any{"agent": map[string]any{"ag": saved}}})
	sp, _ := st.Output["scratchpad"].(map[string]any)
	if sp["node_id"] != "ag" {
		t.Fatalf("scratchpad = %s, want node_id ag (default scratchpad)", jsonText(t, sp))
	}
	if got, want := jsonText(t, sp["messages"]), jsonText(t, msgs); got != want {
		t.Fatalf("scratchpad.messages = %s, want the bucket's %s", got, want)
	}
}
