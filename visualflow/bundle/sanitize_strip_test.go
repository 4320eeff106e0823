package bundle

import "testing"

// Spec §5.6 (agent node): the default ReAct workflow id is
// visual_react_agent_<sanitize(flowId)>_<sanitize(nodeId)>, "empty →
// unknown". The reference (AbstractRuntime
// visualflow_compiler/visual/agent_ids.py, _sanitize) strips the value
// first — `value = str(value or "").strip(); if not value: return
// "unknown"` — and only then replaces runs outside [A-Za-z0-9_-] by "_".
// IDs "must be stable across hosts", so a flow or node id with
// surrounding whitespace must give the same workflow id as in Python
// (" my flow " → "my_flow", "   " → "unknown"), for direct callers of
// Sanitize/ReactWorkflowID/ListenerWorkflowID too (the compiler passes ids
// already stripped).
func TestSanitizeStripsLikePython(t *testing.T) {
	cases := map[string]string{
		" my flow ":  "my_flow",
		"   ":        "unknown",
		"\tnode-1\n": "node-1",
		"a b@1.0":    "a_b_1_0", // unchanged behaviour, for reference
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q (Python _sanitize strips first)", in, got, want)
		}
	}
	if got, want := ReactWorkflowID("flow ", " ag"), "visual_react_agent_flow_ag"; got != want {
		t.Errorf("ReactWorkflowID = %q, want %q", got, want)
	}
}
