package bundle_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// startFlowWithOutputs returns a flow whose on_flow_start node has the given data
// outputs (after the exec pin) and pinDefaults.
func startFlowWithOutputs(outputs []any, pinDefaults map[string]any) map[string]any {
	outs := append([]any{map[string]any{"id": "exec-out", "label": "", "type": "execution"}}, outputs...)
	data := map[string]any{"nodeType": "on_flow_start", "label": "On Flow Start", "inputs": []any{}, "outputs": outs}
	if pinDefaults != nil {
		data["pinDefaults"] = pinDefaults
	}
	return map[string]any{
		"id":        "main",
		"nodes":     []any{map[string]any{"id": "start", "type": "on_flow_start", "data": data}},
		"edges":     []any{},
		"entryNode": "start",
	}
}

// Reference: AbstractGateway routes/gateway.py
// _json_schema_for_visualflow_pin_type builds the artifact-ref schema with
// "$artifact": {"type": "string", "minLength": 1} (asserted by the
// reference test test_editor_run_input_schema_preserves_artifact_pin_contract:
// prop["properties"]["$artifact"]["minLength"] == 1), so an empty
// "$artifact" fails the schema a client validates against, for artifact
// pins and the items of artifacts pins alike.
func TestInputSchemaArtifactRefNeedsNonEmptyArtifact(t *testing.T) {
	flow := startFlowWithOutputs([]any{
		map[string]any{"id": "img", "label": "img", "type": "artifact_image"},
		map[string]any{"id": "docs", "label": "docs", "type": "artifacts_text"},
	}, nil)
	s := bundle.InputSchema(flow)
	props := s["input_data_schema"].(map[string]any)["properties"].(map[string]any)
	check := func(where string, ref map[string]any) {
		t.Helper()
		art, _ := ref["properties"].(map[string]any)["$artifact"].(map[string]any)
		if art == nil {
			t.Fatalf("%s: no $artifact property in %v", where, ref)
		}
		if ml, ok := art["minLength"]; !ok || !isJSONOne(ml) {
			t.Errorf("%s: $artifact schema = %v, want minLength 1 as the reference", where, art)
		}
	}
	check("artifact_image", props["img"].(map[string]any))
	check("artifacts_text items", props["docs"].(map[string]any)["items"].(map[string]any))
}

func isJSONOne(v any) bool {
	switch x := v.(type) {
	case int:
		return x == 1
	case int64:
		return x == 1
	case float64:
		return x == 1
	}
	return false
}

// Reference: AbstractGateway routes/gateway.py
// _extract_entrypoint_inputs_from_visualflow:
// label = str(p.get("label") or pid).strip() or pid, so a data pin whose
// label is "" (or blank) is listed with its id as label, in the InputPin,
// the input_schema pin and the bundle inspect output, and gets no title.
func TestStartPinBlankLabelFallsBackToID(t *testing.T) {
	flow := startFlowWithOutputs([]any{
		map[string]any{"id": "prompt", "label": "", "type": "string"},
		map[string]any{"id": "topic", "label": "  ", "type": "string"},
	}, nil)
	pins := bundle.StartPins(flow)
	if len(pins) != 2 {
		t.Fatalf("pins = %v", pins)
	}
	for _, p := range pins {
		if p["label"] != p["id"] {
			t.Errorf("pin %v: label = %q, want the id %q (reference: str(label or pid).strip() or pid)", p["id"], p["label"], p["id"])
		}
	}
	// The blank label must not become a schema title either.
	props := bundle.InputSchema(flow)["input_data_schema"].(map[string]any)["properties"].(map[string]any)
	if title, ok := props["topic"].(map[string]any)["title"]; ok {
		t.Errorf("topic schema has title %q; the reference sets none (label falls back to the id)", title)
	}
}

// Reference: AbstractGateway routes/gateway.py
// _extract_entrypoint_inputs_from_visualflow: ptype =
// str(p.get("type") or "").strip(); item type = ptype or "unknown"; and
// _entrypoint_input_schema_from_visualflow keeps "unknown", so the
// schema's x-abstract-type is "unknown"; a padded type (" string ") is
// stripped in both.
func TestStartPinTypeStrippedAndUntypedIsUnknown(t *testing.T) {
	flow := startFlowWithOutputs([]any{
		map[string]any{"id": "anything", "label": "anything"},
		map[string]any{"id": "name", "label": "name", "type": " string "},
	}, nil)
	s := bundle.InputSchema(flow)
	inputs := s["inputs"].([]any)
	props := s["input_data_schema"].(map[string]any)["properties"].(map[string]any)
	if got := inputs[0].(map[string]any)["type"]; got != "unknown" {
		t.Errorf("untyped pin type = %q, want \"unknown\"", got)
	}
	if got := props["anything"].(map[string]any)["x-abstract-type"]; got != "unknown" {
		t.Errorf("untyped pin x-abstract-type = %q, want \"unknown\"", got)
	}
	if got := inputs[1].(map[string]any)["type"]; got != "string" {
		t.Errorf("padded pin type = %q, want \"string\" (stripped)", got)
	}
	if got := props["name"].(map[string]any)["x-abstract-type"]; got != "string" {
		t.Errorf("padded pin x-abstract-type = %q, want \"string\" (stripped)", got)
	}
}

// Reference: AbstractGateway routes/gateway.py
// _extract_entrypoint_inputs_from_visualflow: pid =
// str(p.get("id") or "").strip(), and the default is looked up under the
// stripped id: pin " prompt " is input "prompt" with the default
// pinDefaults["prompt"] (not a required " prompt ").
func TestStartPinIDStrippedFindsItsDefault(t *testing.T) {
	flow := startFlowWithOutputs([]any{
		map[string]any{"id": " prompt ", "label": "prompt", "type": "string"},
	}, map[string]any{"prompt": "hi"})
	pins := bundle.StartPins(flow)
	if len(pins) != 1 {
		t.Fatalf("pins = %v", pins)
	}
	if pins[0]["id"] != "prompt" {
		t.Errorf("pin id = %q, want \"prompt\"", pins[0]["id"])
	}
	if pins[0]["default"] != "hi" {
		t.Errorf("pin default = %v, want \"hi\" from pinDefaults[\"prompt\"]", pins[0]["default"])
	}
}

// A flow with a single pin without a default lists it in
// input_data_schema.required, and a flow whose pins all have defaults
// has no "required" member. Dropping "required" when only one pin needs
// a value (len(required) > 1) would let a client submit without it.
func TestInputSchemaSingleRequiredPinIsListed(t *testing.T) {
	t.Parallel()
	s := bundle.InputSchema(startFlowWithOutputs([]any{map[string]any{"id": "q", "label": "q", "type": "string"}}, nil))
	data := s["input_data_schema"].(map[string]any)
	req, _ := data["required"].([]any)
	if len(req) != 1 || req[0] != "q" {
		t.Fatalf("input_data_schema.required = %#v; want [q]", data["required"])
	}
	s = bundle.InputSchema(startFlowWithOutputs([]any{map[string]any{"id": "q", "label": "q", "type": "string"}}, map[string]any{"q": "x"}))
	if r, ok := s["input_data_schema"].(map[string]any)["required"]; ok {
		t.Fatalf("input_data_schema.required = %#v for a pin with a default; want no member", r)
	}
}
