package builtin

import "testing"

// agent_trace_report must produce the text of the reference renderer,
// render_agent_trace_markdown (AbstractRuntime rendering/agent_trace_report.py),
// because flows show or store the report (agent -> agent_trace_report ->
// answer_user/write_file). Expected values were computed with that renderer
// in CPython 3.11.
func TestAgentTraceReportMatchesReferenceRenderer(t *testing.T) {
	sp := obj{"sub_run_id": "sub-1", "node_traces": obj{"agent": obj{"steps": arr{
		obj{"ts": "2026-01-01T00:00:01+00:00", "status": "completed",
			"effect": obj{"type": "llm_call", "payload": obj{"prompt": "hi"}},
			"result": obj{"content": "Let me look.", "model": "m1", "finish_reason": "tool_calls",
				"tool_calls": arr{obj{"name": "read_file", "call_id": "c1"}}}},
		obj{"ts": "2026-01-01T00:00:02+00:00", "status": "completed",
			"effect": obj{"type": "tool_calls", "payload": obj{"tool_calls": arr{
				obj{"name": "read_file", "call_id": "c1", "arguments": obj{"path": "a.txt"}}}}},
			"result": obj{"results": arr{obj{"call_id": "c1", "success": true, "output": "hello"}}}},
	}}}}
	want := "# Agent Trace Report\n- **sub_run_id**: `sub-1`\n\n## Timeline\n\n" +
		"### 1. `agent` — `llm_call` (completed)\n- **model**: `m1`\n- **finish_reason**: `tool_calls`\n" +
		"- **tool_calls_requested**:\n  - `read_file` (call_id=c1)\n\n**Assistant content**\n```markdown\nLet me look.\n```\n\n" +
		"### 2. `agent` — `tool_calls` (completed)\n\n#### Tool: `read_file` (call_id=c1)\n\n**Arguments**\n" +
		"```json\n{\n  \"path\": \"a.txt\"\n}\n```\n\n**Result**\n- **success**: true\n```text\nhello\n```\n"
	runNodeCases(t, []nodeCase{
		{name: "llm + tool step", typ: "agent_trace_report", in: obj{"scratchpad": sp}, want: want},
		{name: "no scratchpad", typ: "agent_trace_report", in: obj{},
			want: "# Agent Trace Report\n\n_No scratchpad provided._\n"},
		{name: "null scratchpad", typ: "agent_trace_report", in: obj{"scratchpad": nil},
			want: "# Agent Trace Report\n\n_No scratchpad provided._\n"},
		{name: "no node_traces", typ: "agent_trace_report", in: obj{"scratchpad": obj{"task": "x"}},
			want: "# Agent Trace Report\n\n_No node_traces found in scratchpad._\n"},
		{name: "no steps", typ: "agent_trace_report",
			in:   obj{"scratchpad": obj{"workflow_id": "wf", "node_traces": obj{"a": obj{"steps": arr{obj{}}}}}},
			want: "# Agent Trace Report\n- **workflow_id**: `wf`\n\n_No trace steps found._\n"},
	})
}

// Steps are ordered by timestamp across nodes; failed steps show their
// error, other effects their raw result, and a call without a result says
// so. A single node trace (with steps and node_id) may stand in for the
// scratchpad. Expected text follows the reference renderer's rules line by
// line (single-key objects, so key order cannot differ).
func TestAgentTraceReportStepKinds(t *testing.T) {
	pad := obj{"node_traces": obj{
		"n2": obj{"steps": arr{
			obj{"ts": "3", "status": "failed", "error": "boom", "duration_ms": int64(5),
				"effect": obj{"type": "llm_call"}},
			obj{"ts": "2", "status": "completed", "effect": obj{"type": "tool_calls", "payload": obj{"tool_calls": arr{
				obj{"name": "ls", "id": "x9", "arguments": arr{}}}}}, "result": obj{"results": arr{}}},
		}},
		"n1": obj{"steps": arr{
			obj{"ts": "1", "status": "completed", "effect": obj{"type": "ask_user"}, "result": obj{"answer": 1.5}},
			obj{"ts": "4", "effect": obj{"type": "llm_call"}},
		}},
	}}
	want := "# Agent Trace Report\n\n## Timeline\n\n" +
		"### 1. `n1` — `ask_user` (completed)\n\n**Result (raw)**\n```json\n{\n  \"answer\": 1.5\n}\n```\n\n" +
		"### 2. `n2` — `tool_calls` (completed)\n\n#### Tool: `ls` (call_id=x9)\n\n**Arguments**\n```json\n[]\n```\n\n" +
		"**Result**\n_missing tool result in trace entry_\n\n" +
		"### 3. `n2` — `llm_call` (failed)\n- **duration_ms**: 5.000\n\n**Error**\n```text\nboom\n```\n\n" +
		"### 4. `n1` — `llm_call` ()\n- **tool_calls_requested**: none\n"
	single := obj{"node_id": "solo", "steps": arr{obj{"ts": "1", "status": "completed",
		"effect": obj{"type": "tool_calls", "payload": obj{"tool_calls": obj{"$artifact": "art-1"}}}}}}
	runNodeCases(t, []nodeCase{
		{name: "mixed steps", typ: "agent_trace_report", in: obj{"scratchpad": pad}, want: want},
		{name: "single node trace, offloaded calls", typ: "agent_trace_report", in: obj{"scratchpad": single},
			want: "# Agent Trace Report\n\n## Timeline\n\n### 1. `solo` — `tool_calls` (completed)\n" +
				"- **tool_calls**: _offloaded to artifact `art-1` (trace entry exceeded the inline cap; " +
				"the ledger STARTED record holds the full calls)_\n"},
	})
}

// Parts of a step the reference renderer leaves out: a requested tool
// call without a name, assistant content that is only whitespace, and the
// Error block of a failed step whose error is null; a zero duration is
// still shown (the renderer tests d >= 0). Expected text follows the
// renderer's rules line by line, as in TestAgentTraceReportStepKinds.
func TestAgentTraceReportOmitsEmptyParts(t *testing.T) {
	pad := obj{"node_traces": obj{"n": obj{"steps": arr{
		obj{"ts": "1", "status": "completed", "duration_ms": int64(0), "effect": obj{"type": "llm_call"},
			"result": obj{"content": " \n\t", "tool_calls": arr{obj{"call_id": "c0"}, obj{"name": "ls", "call_id": "c1"}}}},
		obj{"ts": "2", "status": "failed", "error": nil, "effect": obj{"type": "llm_call"}},
	}}}}
	want := "# Agent Trace Report\n\n## Timeline\n\n" +
		"### 1. `n` — `llm_call` (completed)\n- **duration_ms**: 0.000\n- **tool_calls_requested**:\n  - `ls` (call_id=c1)\n\n" +
		"### 2. `n` — `llm_call` (failed)\n"
	runNodeCases(t, []nodeCase{
		{name: "empty parts", typ: "agent_trace_report", in: obj{"scratchpad": pad}, want: want},
	})
}
