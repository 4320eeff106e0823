package builtin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// agentTraceReportNode renders scratchpad.node_traces as the reference's
// render_agent_trace_markdown does (AbstractRuntime
// rendering/agent_trace_report.py, default config): a "## Timeline" of
// every trace step in timestamp order; LLM steps show model, finish
// reason, requested tools and the assistant content; tool steps pair each
// call with its result by call_id; nothing is truncated. The one
// deliberate difference: JSON blocks and same-timestamp steps follow
// sorted key order, as Go maps keep no insertion order.
func agentTraceReportNode(_ *Env, inputs map[string]any) (any, error) {
	report, err := renderAgentTrace(inputs["scratchpad"])
	if err != nil {
		return nil, err
	}
	return report, nil
}

// traceStep is one node-trace entry with the node that recorded it.
type traceStep struct {
	ts, node string
	entry    map[string]any
}

func renderAgentTrace(scratchpad any) (string, error) {
	const title = "# Agent Trace Report"
	pad, ok := scratchpad.(map[string]any)
	if !ok {
		return title + "\n\n_No scratchpad provided._\n", nil
	}
	traces, ok := pad["node_traces"].(map[string]any)
	if !ok {
		// A single node trace may be passed directly.
		_, hasSteps := pad["steps"]
		_, hasNode := pad["node_id"]
		if !hasSteps || !hasNode {
			return title + "\n\n_No node_traces found in scratchpad._\n", nil
		}
		traces = map[string]any{pyval.Str(pad["node_id"]): pad}
	}

	lines := []string{title}
	for _, key := range []string{"sub_run_id", "workflow_id"} {
		if s, _ := pad[key].(string); s != "" {
			lines = append(lines, fmt.Sprintf("- **%s**: `%s`", key, s))
		}
	}
	lines = append(lines, "")

	steps := collectTraceSteps(traces)
	if len(steps) == 0 {
		return strings.Join(append(lines, "_No trace steps found._", ""), "\n"), nil
	}
	lines = append(lines, "## Timeline", "")
	for i, st := range steps {
		var err error
		if lines, err = renderTraceStep(lines, i+1, st); err != nil {
			return "", err
		}
	}
	return pyval.RStrip(strings.Join(lines, "\n")) + "\n", nil
}

// collectTraceSteps flattens node_traces into steps sorted by their ISO
// timestamps (lexicographic order is chronological); a step without one
// sorts first. Empty or non-object entries are skipped, as in the reference.
func collectTraceSteps(traces map[string]any) []traceStep {
	var out []traceStep
	for _, node := range pyval.SortedKeys(traces) {
		trace, _ := traces[node].(map[string]any)
		list, _ := trace["steps"].([]any)
		for _, s := range list {
			if m, ok := s.(map[string]any); ok && len(m) > 0 {
				ts, _ := m["ts"].(string)
				out = append(out, traceStep{ts: ts, node: node, entry: m})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ts < out[j].ts })
	return out
}

// renderTraceStep appends the section of one step to lines.
func renderTraceStep(lines []string, idx int, st traceStep) ([]string, error) {
	status, _ := st.entry["status"].(string)
	effect, _ := st.entry["effect"].(map[string]any)
	effectType, _ := effect["type"].(string)
	lines = append(lines, fmt.Sprintf("### %d. `%s` — `%s` (%s)", idx, st.node, effectType, status))
	if d := st.entry["duration_ms"]; pyval.IsNumber(d) {
		// Python's isinstance(d, (int, float)) admits bools too; d >= 0
		// compares exactly, then float(d) fails the report for an int
		// past the float range.
		if c, ok := pyval.Compare(d, int64(0)); ok && c >= 0 {
			f, err := pyval.ToFloat(d)
			if err != nil {
				return nil, err
			}
			s, _ := pyval.FormatValue(f, ".3f")
			lines = append(lines, "- **duration_ms**: "+s)
		}
	}

	if status == "failed" {
		if err, ok := st.entry["error"]; ok && err != nil {
			lines = append(lines, "", "**Error**", codeBlock(err, "text"))
		}
		return append(lines, ""), nil
	}

	result, _ := st.entry["result"].(map[string]any)
	switch effectType {
	case "llm_call":
		return renderLLMStep(lines, result), nil
	case "tool_calls":
		return renderToolCallsStep(lines, effect, result), nil
	}
	if result != nil {
		lines = append(lines, "", "**Result (raw)**", codeBlock(result, "json"), "")
	}
	return lines, nil
}

// renderLLMStep shows only what the model produced and the tools it asked
// for, keeping the report short.
func renderLLMStep(lines []string, result map[string]any) []string {
	if s, _ := result["model"].(string); s != "" {
		lines = append(lines, fmt.Sprintf("- **model**: `%s`", s))
	}
	if s, _ := result["finish_reason"].(string); s != "" {
		lines = append(lines, fmt.Sprintf("- **finish_reason**: `%s`", s))
	}
	if calls, _ := result["tool_calls"].([]any); len(calls) > 0 {
		lines = append(lines, "- **tool_calls_requested**:")
		for _, c := range calls {
			call, _ := c.(map[string]any)
			name, _ := call["name"].(string)
			if name == "" {
				continue
			}
			suffix := ""
			if id, _ := call["call_id"].(string); id != "" {
				suffix = " (call_id=" + id + ")"
			}
			lines = append(lines, fmt.Sprintf("  - `%s`%s", name, suffix))
		}
	} else {
		lines = append(lines, "- **tool_calls_requested**: none")
	}
	if content, _ := result["content"].(string); pyval.Strip(content) != "" {
		lines = append(lines, "", "**Assistant content**", codeBlock(content, "markdown"))
	}
	return append(lines, "")
}

// renderToolCallsStep shows each requested call next to its result.
func renderToolCallsStep(lines []string, effect, result map[string]any) []string {
	payload, _ := effect["payload"].(map[string]any)
	rawCalls := payload["tool_calls"]
	if m, ok := rawCalls.(map[string]any); ok {
		if ref, offloaded := m["$artifact"]; offloaded {
			// A bounded trace entry whose calls were moved to an artifact.
			return append(lines, fmt.Sprintf("- **tool_calls**: _offloaded to artifact `%s` "+
				"(trace entry exceeded the inline cap; the ledger STARTED record holds the full calls)_",
				pyval.Str(ref)), "")
		}
	}
	var calls []any
	switch x := rawCalls.(type) {
	case []any:
		calls = x
	case nil:
	default:
		calls = []any{x}
	}
	if len(calls) == 0 {
		return append(lines, "- **tool_calls**: none", "")
	}

	byID := map[string]map[string]any{}
	results, _ := result["results"].([]any)
	for _, r := range results {
		if rm, ok := r.(map[string]any); ok && len(rm) > 0 {
			if id, _ := rm["call_id"].(string); id != "" {
				byID[id] = rm
			}
		}
	}
	lines = append(lines, "")
	for _, c := range calls {
		call, _ := c.(map[string]any)
		if len(call) == 0 {
			continue
		}
		if _, ref := call["$artifact"]; ref {
			continue
		}
		id, _ := call["call_id"].(string)
		var r map[string]any
		if id != "" {
			r = byID[id]
		}
		lines = append(lines, renderToolCall(call, r), "")
	}
	return lines
}

// renderToolCall renders one call with its arguments and result (nil when
// the trace holds none).
func renderToolCall(call, result map[string]any) string {
	title := fmt.Sprintf("#### Tool: `%s`", pyval.Str(call["name"]))
	// The title falls back to "id"; pairing with a result uses call_id only.
	id := call["call_id"]
	if !pyval.Truthy(id) {
		id = call["id"]
	}
	if s, _ := id.(string); s != "" {
		title += " (call_id=" + s + ")"
	}
	args, ok := call["arguments"]
	if !ok {
		args = map[string]any{}
	}
	lines := []string{title, "", "**Arguments**", codeBlock(args, "json")}
	if result == nil {
		lines = append(lines, "", "**Result**", "_missing tool result in trace entry_")
		return strings.Join(lines, "\n")
	}

	lines = append(lines, "", "**Result**")
	if ok, isBool := result["success"].(bool); isBool {
		lines = append(lines, fmt.Sprintf("- **success**: %t", ok))
	}
	if err := result["error"]; err != nil {
		lines = append(lines, "- **error**: "+pyval.Str(err))
	}
	output := result["output"]
	switch output.(type) {
	case map[string]any, []any, bool, nil:
		lines = append(lines, codeBlock(output, "json"))
	default:
		if pyval.IsNumber(output) {
			lines = append(lines, codeBlock(output, "json"))
		} else {
			lines = append(lines, codeBlock(output, "text"))
		}
	}
	return strings.Join(lines, "\n")
}

// codeBlock fences value: as indented JSON for "json", else as its str()
// (nil as empty text).
func codeBlock(value any, lang string) string {
	var text string
	switch {
	case lang == "json":
		s, err := pyval.Dumps(value, pyval.DumpOptions{Indent: 2, ItemSep: ",", KeySep: ": "})
		if err != nil {
			s = pyval.Str(value)
		}
		text = s
	case value != nil:
		text = pyval.Str(value)
	}
	return "```" + lang + "\n" + text + "\n```"
}
