package builtin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// agentTraceReportNode renders scratchpad.node_traces as best-effort
// Markdown: one section per step in timestamp order, with the effect type,
// status and untruncated JSON of the effect payload and result. The exact
// layout of the reference renderer is not specified (spec §6.7).
func agentTraceReportNode(_ *Env, inputs map[string]any) (any, error) {
	pad, _ := inputs["scratchpad"].(map[string]any)
	traces, _ := pad["node_traces"].(map[string]any)
	type step struct {
		node string
		ts   string
		data map[string]any
	}
	var steps []step
	for _, node := range pyval.SortedKeys(traces) {
		trace, _ := traces[node].(map[string]any)
		list, _ := trace["steps"].([]any)
		for _, s := range list {
			if m, ok := s.(map[string]any); ok {
				ts, _ := m["ts"].(string)
				steps = append(steps, step{node: node, ts: ts, data: m})
			}
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].ts < steps[j].ts })

	var b strings.Builder
	b.WriteString("# Agent trace\n")
	if len(steps) == 0 {
		b.WriteString("\n_No steps recorded._\n")
		return strings.TrimSpace(b.String()), nil
	}
	for i, s := range steps {
		effect, _ := s.data["effect"].(map[string]any)
		kind := strOr(effect["type"])
		if kind == "" {
			kind = "step"
		}
		fmt.Fprintf(&b, "\n## %d. %s (node %s)\n", i+1, kind, s.node)
		if s.ts != "" {
			fmt.Fprintf(&b, "\n- time: %s\n", s.ts)
		}
		if st := strOr(s.data["status"]); st != "" {
			fmt.Fprintf(&b, "- status: %s\n", st)
		}
		for _, part := range []struct{ title, key string }{{"Payload", "payload"}, {"Result", "result"}} {
			var v any
			if part.key == "payload" {
				v = effect["payload"]
			} else {
				v = s.data["result"]
			}
			if v == nil {
				continue
			}
			text, err := pyval.Dumps(v, pyval.DumpOptions{Indent: 2})
			if err != nil {
				text = pyval.Str(v)
			}
			fmt.Fprintf(&b, "\n%s:\n\n```json\n%s\n```\n", part.title, text)
		}
	}
	return strings.TrimSpace(b.String()), nil
}
