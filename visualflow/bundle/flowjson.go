package bundle

import (
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// FlowID returns the id of a VisualFlow document: the first non-empty of
// id, flow_id, workflow_id, as text (IDText).
func FlowID(flow map[string]any) string {
	for _, k := range []string{"id", "flow_id", "workflow_id"} {
		if s := IDText(flow[k]); s != "" {
			return s
		}
	}
	return ""
}

// IDText reads a flow, node or edge-endpoint id as Python's loader does,
// str(v or "").strip(): ids are strings in the editor's files, but a
// hand-written flow's number ids (1, 2) name nodes "1" and "2" instead of
// being dropped.
func IDText(v any) string {
	if !pyval.Truthy(v) {
		return ""
	}
	return pyval.Strip(pyval.Str(v))
}

// nodeList returns the node objects of a flow (non-objects skipped).
func nodeList(flow map[string]any) []map[string]any {
	raw, _ := flow["nodes"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, n := range raw {
		if m, ok := n.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// nodeID returns a node's id as text (IDText).
func nodeID(node map[string]any) string { return IDText(node["id"]) }

// NodeType returns a node's normalised type: "NodeType.X" becomes "x", an
// object {"value": t} uses t, and an empty type falls back to
// data.nodeType.
func NodeType(node map[string]any) string {
	t := typeString(node["type"])
	if t == "" {
		t = typeString(nodeData(node)["nodeType"])
	}
	return t
}

func typeString(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case map[string]any:
		s, _ = x["value"].(string)
	}
	s = pyval.Strip(s)
	if rest, ok := strings.CutPrefix(s, "NodeType."); ok {
		return strings.ToLower(rest)
	}
	return s
}

// nodeData returns a node's data object ({} when missing).
func nodeData(node map[string]any) map[string]any {
	d, _ := node["data"].(map[string]any)
	if d == nil {
		return map[string]any{}
	}
	return d
}
