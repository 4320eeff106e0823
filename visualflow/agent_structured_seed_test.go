package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A seed of 0 reaches the structured-output llm_call too (spec §5.6 phase
// structured: params seed if >= 0), not only the child.
func TestAgentStructuredPassKeepsSeedZero(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "seed": int64(0)},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-s0",
			"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}},
		[]string{"prompt:string", "seed:number"})
	react := outputReact("react-s0", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
	runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if len(llm.payloads) != 1 {
		t.Fatalf("structured llm_calls = %d, want 1", len(llm.payloads))
	}
	params, _ := llm.payloads[0]["params"].(map[string]any)
	if got := jsonText(t, params["seed"]); got != "0" {
		t.Errorf("structured params.seed = %s, want 0", got)
	}
}

// A child message that is not an object becomes an assistant message with
// its text (spec §5.6 phase subworkflow: "non-objects become assistant
// messages").
func TestAgentChildNonObjectMessageBecomesAssistant(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-no"}},
		[]string{"prompt:string"})
	react := outputReact("react-no", map[string]any{"answer": "A", "messages": []any{"plain"}}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	sp, _ := agentBucketOf(st, "ag")["scratchpad"].(map[string]any)
	if got, w := jsonText(t, sp["messages"]), jsonText(t, []any{chatMsg("assistant", "plain")}); got != w {
		t.Errorf("scratchpad.messages = %s, want %s", got, w)
	}
}
