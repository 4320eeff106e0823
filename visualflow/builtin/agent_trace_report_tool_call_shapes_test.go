package builtin

import "testing"

// toolStepReport renders one completed tool_calls step whose payload calls
// are calls and whose result is result.
func toolStepReport(t *testing.T, calls any, result map[string]any) string {
	t.Helper()
	pad := obj{"node_traces": obj{"n": obj{"steps": arr{obj{"ts": "1", "status": "completed",
		"effect": obj{"type": "tool_calls", "payload": obj{"tool_calls": calls}}, "result": result}}}}}
	out, _ := callNode(t, nil, "agent_trace_report", obj{"scratchpad": pad}).(string)
	return out
}

const toolStepHead = "# Agent Trace Report\n\n## Timeline\n\n### 1. `n` — `tool_calls` (completed)\n\n"

// The reference renderer lists a lone call object (not an array) as one
// call, shows a call without arguments with "{}", prints success only when
// it is a boolean, and pairs a call_id with the last result carrying it.
// Breaks if the lone call is dropped ("tool_calls: none"), missing
// arguments render as null, a non-boolean success prints "false", or the
// first of two same-id results wins.
func TestAgentTraceReportToolCallShapes(t *testing.T) {
	call := obj{"name": "ls", "call_id": "c1"}
	results := obj{"results": arr{
		obj{"call_id": "c1", "success": "yes", "output": "first"},
		obj{"call_id": "c1", "success": "yes", "output": "second"},
	}}
	want := toolStepHead + "#### Tool: `ls` (call_id=c1)\n\n**Arguments**\n```json\n{}\n```\n\n" +
		"**Result**\n```text\nsecond\n```\n"
	if got := toolStepReport(t, call, results); got != want {
		t.Errorf("lone call object:\n%s\nwant:\n%s", got, want)
	}
	if got := toolStepReport(t, arr{call}, results); got != want {
		t.Errorf("call list:\n%s\nwant:\n%s", got, want)
	}
}

// A call in the list that is itself an offloaded "$artifact" reference is
// left out (the reference skips it rather than rendering "Tool: None").
// Breaks if such entries are rendered.
func TestAgentTraceReportSkipsArtifactCallEntries(t *testing.T) {
	calls := arr{obj{"$artifact": "art-1"}, obj{"name": "ls", "call_id": "c1", "arguments": obj{}}}
	want := toolStepHead + "#### Tool: `ls` (call_id=c1)\n\n**Arguments**\n```json\n{}\n```\n\n" +
		"**Result**\n_missing tool result in trace entry_\n"
	if got := toolStepReport(t, calls, obj{}); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
