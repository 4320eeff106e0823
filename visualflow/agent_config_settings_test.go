package visualflow

import (
	"testing"
)

// Without pins, the agent's child gets agentConfig's seed, thinking,
// max_iterations and token limits, the config's camelCase aliases
// included (spec §5.6 "pin value else agentConfig value"; child vars
// _limits, scratchpad and _runtime). Dropping any config fallback would
// start the child with the defaults instead.
func TestAgentConfigSettingsReachChildWithoutPins(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg",
		"seed": int64(5), "thinking": "high", "max_iterations": int64(12),
		"maxInputTokens": int64(900), "maxOutputTokens": int64(300)}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
		[]string{"prompt:string"}, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if jsonText(t, rt["seed"]) != "5" || rt["thinking"] != "high" {
		t.Errorf("child _runtime seed/thinking = %s/%s, want agentConfig's 5/\"high\"", jsonText(t, rt["seed"]), jsonText(t, rt["thinking"]))
	}
	limits, _ := seen["_limits"].(map[string]any)
	for k, want := range map[string]string{"max_iterations": "12", "max_input_tokens": "900", "max_output_tokens": "300"} {
		if got := jsonText(t, limits[k]); got != want {
			t.Errorf("child _limits.%s = %s, want agentConfig's %s", k, got, want)
		}
	}
	if sp, _ := seen["scratchpad"].(map[string]any); jsonText(t, sp["max_iterations"]) != "12" {
		t.Errorf("child scratchpad.max_iterations = %s, want 12", jsonText(t, sp["max_iterations"]))
	}
}

// A max_out_tokens pin is the agent's max_output_tokens (spec §5.6 input
// normalisation: max_out_tokens|max_output_tokens|maxOutputTokens) and
// wins over agentConfig's: the child's _limits.max_output_tokens is the pin.
func TestAgentMaxOutTokensPinSetsChildLimit(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg", "max_output_tokens": int64(300)}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "max_out_tokens": "250"},
		"agentConfig": cfg}, []string{"prompt:string", "max_out_tokens:number"}, nil)
	limits, _ := seen["_limits"].(map[string]any)
	if got := jsonText(t, limits["max_output_tokens"]); got != "250" {
		t.Errorf("child _limits.max_output_tokens = %s, want the pin's 250", got)
	}
}

// An empty messages list in the context pin does not replace the
// inherited history (spec §5.6: "replaced by context.messages from the pin
// when non-empty"): with include_context the child still gets the
// parent's messages rather than none.
func TestAgentEmptyPinMessagesKeepInheritedHistory(t *testing.T) {
	vars := map[string]any{"context": map[string]any{"messages": []any{chatMsg("user", "u1")}}}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "include_context": true,
		"context": map[string]any{"messages": []any{}}},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string", "include_context:boolean", "context:object"}, vars)
	ctx, _ := seen["context"].(map[string]any)
	if got, want := jsonText(t, ctx["messages"]), jsonText(t, []any{chatMsg("user", "u1")}); got != want {
		t.Fatalf("child context.messages = %s, want the inherited %s", got, want)
	}
}
