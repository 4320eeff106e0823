package bundle

import "testing"

// FlowID reads the id under each of its spellings, workflow_id last:
// a flow file carrying only workflow_id still has an id (Pack would
// otherwise refuse it as a root flow without id).
func TestFlowIDReadsEverySpelling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		flow map[string]any
		want string
	}{
		{map[string]any{"id": " a ", "flow_id": "b", "workflow_id": "c"}, "a"},
		{map[string]any{"id": "", "flow_id": "b", "workflow_id": "c"}, "b"},
		{map[string]any{"flow_id": nil, "workflow_id": " c "}, "c"},
		{map[string]any{}, ""},
	} {
		if got := FlowID(c.flow); got != c.want {
			t.Errorf("FlowID(%v) = %q, want %q", c.flow, got, c.want)
		}
	}
}

// A join_exec node is exec whatever its pins say (spec §2 rule 2 comes
// before the pin rule): one whose pins carry no execution type is still
// exec, so what follows it stays reachable.
func TestJoinExecIsExecWhateverItsPins(t *testing.T) {
	t.Parallel()
	node := map[string]any{"id": "j", "type": "join_exec", "data": map[string]any{
		"inputs": []any{map[string]any{"id": "x", "type": "string"}},
	}}
	if !isExecNode(node) {
		t.Errorf("join_exec with only a data pin classified pure; spec §2 makes it exec")
	}
	node["type"] = "concat"
	if isExecNode(node) {
		t.Errorf("control: a concat node with only a data pin classified exec")
	}
}

// A start node's output pin with id "exec" is an exec pin, not an input,
// even when its type is not "execution" (as Python's
// _extract_entrypoint_inputs_from_visualflow skips "exec-out" and "exec").
func TestStartPinsSkipExecPinIDs(t *testing.T) {
	t.Parallel()
	flow := map[string]any{"nodes": []any{map[string]any{"id": "s", "type": "on_flow_start", "data": map[string]any{
		"outputs": []any{
			map[string]any{"id": "exec", "type": "string"},
			map[string]any{"id": "exec-out", "type": ""},
			map[string]any{"id": "prompt", "type": "string"},
		},
	}}}}
	pins := StartPins(flow)
	if len(pins) != 1 || pins[0]["id"] != "prompt" {
		t.Fatalf("StartPins = %v; want only prompt", pins)
	}
}

// A node without a type (missing or blank) takes data.nodeType, as the
// Python packer's _node_type reads it: such a subflow node is still a
// subflow to pack and to namespace.
func TestNodeTypeFallsBackToDataNodeType(t *testing.T) {
	t.Parallel()
	for _, node := range []map[string]any{
		{"data": map[string]any{"nodeType": "subflow"}},
		{"type": "  ", "data": map[string]any{"nodeType": " subflow "}},
		{"type": map[string]any{"value": ""}, "data": map[string]any{"nodeType": "NodeType.SUBFLOW"}},
	} {
		if got := NodeType(node); got != "subflow" {
			t.Errorf("NodeType(%v) = %q, want subflow", node, got)
		}
	}
}

// InputSchema's pin schemas and input_data_schema.properties are separate
// copies: a caller adding to one pin's schema (as a host decorating the
// inputs list) does not change the JSON Schema it serves.
func TestInputSchemaPropertiesAreNotThePinSchemas(t *testing.T) {
	t.Parallel()
	s := InputSchema(simpleFlow("main", "child"))
	pin := s["inputs"].([]any)[0].(map[string]any)
	pin["schema"].(map[string]any)["x-host"] = true
	id := pin["id"].(string)
	props := s["input_data_schema"].(map[string]any)["properties"].(map[string]any)
	if _, leaked := props[id].(map[string]any)["x-host"]; leaked {
		t.Fatalf("editing inputs[0].schema changed input_data_schema.properties[%s]", id)
	}
}
