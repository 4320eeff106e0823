package visualflow

import (
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// An agent without a prompt pin has the task "" (spec §5.6: prompt →
// task, a string), in its bucket and in the child's context. Reading the
// absent pin as Python's str(None) would send the child the task "None".
func TestAgentWithoutPromptHasEmptyTask(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-np"},
	}, nil)
	var seen map[string]any
	react := outputReact("react-np", map[string]any{"answer": "ok", "iterations": int64(1), "messages": []any{}}, &seen)
	st := runAgentFlow(t, flow, react, nil, nil)
	ctx, _ := seen["context"].(map[string]any)
	if task, ok := ctx["task"].(string); !ok || task != "" {
		t.Errorf("child context.task = %#v, want \"\"", ctx["task"])
	}
	ri, _ := agentBucketOf(st, "ag")["resolved_inputs"].(map[string]any)
	if ri["task"] != "" {
		t.Errorf("bucket resolved_inputs.task = %#v, want \"\"", ri["task"])
	}
}

// One default marker is enough to make the runtime fallback explicit
// (Python: explicit_default = provider or model is a marker): a "default"
// provider with a configured model takes the run's provider without a
// #FALLBACK warning. Requiring both markers would warn here.
func TestAgentDefaultProviderMarkerAloneDoesNotWarn(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "default", "model": "qwen", "_react_workflow_id": "react-def1"},
	}, []string{"prompt:string"})
	var seen map[string]any
	react := outputReact("react-def1", map[string]any{"answer": "ok", "iterations": int64(1), "messages": []any{}}, &seen)
	st := runAgentFlow(t, flow, react, nil, map[string]any{"_runtime": map[string]any{"provider": "lmstudio", "model": "other"}})
	rt, _ := seen["_runtime"].(map[string]any)
	if rt["provider"] != "lmstudio" || rt["model"] != "qwen" {
		t.Fatalf("child _runtime provider/model = %v/%v, want lmstudio (run default)/qwen (configured)", rt["provider"], rt["model"])
	}
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if slices.Contains(warnings, any("#FALLBACK: missing provider/model; using runtime defaults")) {
		t.Errorf("a default provider marker produced a fallback warning: _flow_warnings = %v", warnings)
	}
}

// Keys missing from the parent's _limits, without node settings, take the
// spec's defaults in the child (§5.6 child vars), max_iterations 50 among
// them; a wrong default would change how long an agent of a run started
// with its own partial _limits may loop. (Runs started without _limits get
// the runtime's full limits, which hide these defaults.)
func TestAgentChildLimitsDefaults(t *testing.T) {
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow("", "response")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
		nil, map[string]any{"_limits": map[string]any{}})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	want := map[string]any{"max_iterations": 50, "current_iteration": 0, "max_tokens": 32768,
		"max_output_tokens": nil, "max_input_tokens": nil, "max_history_messages": -1,
		"estimated_tokens_used": 0, "warn_iterations_pct": 80, "warn_tokens_pct": 80}
	if got, w := jsonText(t, child["_limits"]), jsonText(t, want); got != w {
		t.Errorf("child _limits = %s\nwant %s", got, w)
	}
}
