package visualflow

import (
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// pin is a declared pin: only id and type matter at run time (§1.4).
type pin struct {
	ID   string
	Type string
}

// edge is one edge of the document (§1.5).
type edge struct {
	Source, SourceHandle, Target, TargetHandle string
}

// isExec reports whether e is an exec edge (targetHandle exec-in).
func (e edge) isExec() bool { return e.TargetHandle == "exec-in" }

// rawNode is a node as read from the document, before classification.
type rawNode struct {
	ID      string
	Type    string
	Data    map[string]any
	Inputs  []pin
	Outputs []pin
}

// document is a parsed VisualFlow.
type document struct {
	ID        string
	EntryNode string
	Nodes     []*rawNode
	Edges     []edge
}

// parseDocument reads the parts of a flow the runtime uses. The flow is
// normalised (json.Number → int64/float64) and deep-copied first, so the
// compiled program shares nothing with the caller's map.
func parseDocument(flow map[string]any) *document {
	flow, _ = pyval.Normalize(flow).(map[string]any)
	d := &document{ID: bundle.FlowID(flow)}
	d.EntryNode, _ = flow["entryNode"].(string)
	d.EntryNode = strings.TrimSpace(d.EntryNode)
	nodes, _ := flow["nodes"].([]any)
	for _, raw := range nodes {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		id := bundle.IDText(m["id"])
		if id == "" {
			continue
		}
		data, _ := m["data"].(map[string]any)
		if data == nil {
			data = map[string]any{}
		}
		d.Nodes = append(d.Nodes, &rawNode{
			ID: id, Type: bundle.NodeType(m), Data: data,
			Inputs: parsePins(data["inputs"]), Outputs: parsePins(data["outputs"]),
		})
	}
	edges, _ := flow["edges"].([]any)
	for _, raw := range edges {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		e := edge{bundle.IDText(m["source"]), str(m["sourceHandle"]), bundle.IDText(m["target"]), str(m["targetHandle"])}
		if e.Source == "" || e.Target == "" || e.SourceHandle == "" || e.TargetHandle == "" {
			continue
		}
		d.Edges = append(d.Edges, e)
	}
	return d
}

func parsePins(v any) []pin {
	list, _ := v.([]any)
	out := make([]pin, 0, len(list))
	for _, p := range list {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		if id == "" {
			continue
		}
		t, _ := m["type"].(string)
		out = append(out, pin{ID: id, Type: t})
	}
	return out
}

// str returns v trimmed when it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}
