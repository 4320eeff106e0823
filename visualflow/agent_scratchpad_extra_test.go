package visualflow

import (
	"testing"
)

// §5.6 phase subworkflow: scratchpad.context_extra holds the context pin's
// keys other than task and messages (the child got those separately);
// letting the pin's messages through would duplicate the transcript there.
func TestAgentScratchpadContextExtraExcludesMessages(t *testing.T) {
	saved := map[string]any{
		"phase": "subworkflow",
		"resolved_inputs": map[string]any{"task": "do it", "provider": nil, "model": nil, "system": "", "tools": []any{},
			"context": map[string]any{"topic": "x", "task": "t", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}},
		"sub": map[string]any{"sub_run_id": "child-1", "output": map[string]any{"answer": "A", "iterations": int64(1),
			"messages": []any{}}, "node_traces": map[string]any{}},
	}
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-term"}
	never := outputReact("react-term", map[string]any{"answer": "child started again"}, nil)
	st := runAgentFlow(t, terminalAgentFlow(cfg), never, nil, map[string]any{"_temp": map[string]any{"agent": map[string]any{"ag": saved}}})
	sp, _ := agentBucketOf(st, "ag")["scratchpad"].(map[string]any)
	if got, want := jsonText(t, sp["context_extra"]), jsonText(t, map[string]any{"topic": "x"}); got != want {
		t.Fatalf("scratchpad.context_extra = %s, want %s", got, want)
	}
}

// §5.6 phase subworkflow: meta carries the child's iterations, and a
// terminal agent completes with that meta; dropping meta.iterations there
// would leave only the pins (rebuilt from the bucket) with it.
func TestAgentTerminalMetaHasChildIterations(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-term"}
	st := runAgentFlow(t, terminalAgentFlow(cfg), outputReact("react-term",
		map[string]any{"answer": "A", "iterations": int64(3), "messages": []any{}}, nil), nil, nil)
	meta, _ := st.Output["meta"].(map[string]any)
	if got := jsonText(t, meta["iterations"]); got != "3" {
		t.Fatalf("run output meta = %s, want iterations 3", jsonText(t, meta))
	}
}
