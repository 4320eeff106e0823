package visualflow

import (
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
	d.EntryNode = pyval.Strip(d.EntryNode)
	nodes, _ := flow["nodes"].([]any)
	typeByID := map[string]string{}
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
		typ := bundle.NodeType(m)
		typeByID[id] = typ
		migratePromptPins(typ, data)
		d.Nodes = append(d.Nodes, &rawNode{
			ID: id, Type: typ, Data: data,
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
		if typeByID[e.Source] == "on_flow_start" && legacyPromptPins[e.SourceHandle] {
			e.SourceHandle = "prompt"
		}
		if promptInputNode(typeByID[e.Target]) && legacyPromptPins[e.TargetHandle] {
			e.TargetHandle = "prompt"
		}
		d.Edges = append(d.Edges, e)
	}
	return d
}

// legacyPromptPins are the deprecated ids of the prompt pin, in the order
// the reference renames them (a "request" default beats a "task" one).
var legacyPromptPins = map[string]bool{"request": true, "task": true}

// legacyPromptOrder is legacyPromptPins in rename order.
var legacyPromptOrder = [...]string{"request", "task"}

// promptInputNode reports whether nodes of type typ take the prompt as an
// input pin that may carry a legacy id.
func promptInputNode(typ string) bool { return typ == "agent" || typ == "llm_call" }

// migratePromptPins renames the deprecated prompt pin ids "request" and
// "task" to "prompt" in data, as the reference's load_visualflow_json does
// (_migrate_node_prompt_pins), so flows saved before the rename still feed
// their prompt: on_flow_start's outputs, agent's and llm_call's inputs, and
// the pinDefaults keys of those nodes. Only these node types: other nodes'
// "request"/"task" pins are unrelated. Edges are renamed by parseDocument.
func migratePromptPins(typ string, data map[string]any) {
	key := "inputs"
	switch {
	case typ == "on_flow_start":
		key = "outputs"
	case !promptInputNode(typ):
		return
	}
	if pins, ok := data[key].([]any); ok {
		data[key] = renamePromptPinIDs(pins)
	}
	if defaults, ok := data["pinDefaults"].(map[string]any); ok {
		for _, old := range legacyPromptOrder {
			v, has := defaults[old]
			if !has {
				continue
			}
			if _, taken := defaults["prompt"]; !taken {
				defaults["prompt"] = v
			}
			delete(defaults, old)
		}
	}
}

// renamePromptPinIDs renames legacy prompt pins in a pin list (and their
// label when it was the old id), keeping the first pin of each id: the
// reference's _rename_pin_ids drops later duplicates of any id in the
// list, so a legacy pin next to a "prompt" one disappears.
func renamePromptPinIDs(pins []any) []any {
	out := make([]any, 0, len(pins))
	seen := map[string]bool{}
	for _, p := range pins {
		m, ok := p.(map[string]any)
		if !ok {
			out = append(out, p)
			continue
		}
		id, _ := m["id"].(string)
		next := id
		if legacyPromptPins[id] {
			next = "prompt"
		}
		if next != "" {
			if seen[next] {
				continue
			}
			seen[next] = true
		}
		if next != id {
			m["id"] = next
			if label, ok := m["label"].(string); ok && label == id {
				m["label"] = next
			}
		}
		out = append(out, m)
	}
	return out
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
	return pyval.Strip(s)
}
