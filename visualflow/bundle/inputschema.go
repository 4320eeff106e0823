package bundle

import (
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// InputSchema derives the input description of a flow from the data
// outputs of its first on_flow_start node and their pinDefaults, in the
// shape of gateway-api.md §2.4 without the bundle identity fields:
// {"version": 1, "inputs": [pin...], "defaults": {...},
// "input_data_schema": {"type": "object", "additionalProperties": true,
// "properties": {...}, "required"?: [...]}}. Each pin is {id, label, type,
// required, schema, default?}.
func InputSchema(flow map[string]any) map[string]any {
	inputs := []any{}
	defaults := map[string]any{}
	props := map[string]any{}
	var required []any
	for _, pin := range StartPins(flow) {
		id, _ := pin["id"].(string)
		typ, _ := pin["type"].(string)
		lbl, _ := pin["label"].(string)
		schema := pinSchema(typ)
		if own, ok := pin["schema"].(map[string]any); ok {
			for k, v := range own {
				schema[k] = pyval.DeepCopy(v)
			}
		}
		if lbl != "" && lbl != id {
			schema["title"] = lbl
		}
		def, hasDefault := pin["default"]
		if hasDefault {
			schema["default"] = pyval.DeepCopy(def)
			defaults[id] = pyval.DeepCopy(def)
		} else {
			required = append(required, id)
		}
		out := map[string]any{"id": id, "label": lbl, "type": typ, "required": !hasDefault, "schema": schema}
		if hasDefault {
			out["default"] = pyval.DeepCopy(def)
		}
		inputs = append(inputs, out)
		props[id] = pyval.DeepCopy(schema)
	}
	data := map[string]any{"type": "object", "additionalProperties": true, "properties": props}
	if len(required) > 0 {
		data["required"] = required
	}
	return map[string]any{"version": int64(1), "inputs": inputs, "defaults": defaults, "input_data_schema": data}
}

// StartPins returns the InputPins of the flow's first on_flow_start node
// (gateway-api.md §2.2): {id, label, type, schema?, default?} for each
// data output (type "execution" and ids "exec-out"/"exec" skipped), id,
// label and type stripped. default is present only when pinDefaults has
// the (stripped) id.
func StartPins(flow map[string]any) []map[string]any {
	var start map[string]any
	for _, n := range nodeList(flow) {
		if NodeType(n) == "on_flow_start" {
			start = n
			break
		}
	}
	if start == nil {
		return nil
	}
	data := nodeData(start)
	pinDefaults, _ := data["pinDefaults"].(map[string]any)
	outs, _ := data["outputs"].([]any)
	var pins []map[string]any
	for _, o := range outs {
		p, ok := o.(map[string]any)
		if !ok {
			continue
		}
		// Read as Python's _extract_entrypoint_inputs_from_visualflow:
		// id and type are str(x or "").strip(), an untyped pin is
		// "unknown", and a blank or missing label falls back to the id.
		id := pyval.Strip(pyval.StrOrEmpty(p["id"]))
		typ := pyval.Strip(pyval.StrOrEmpty(p["type"]))
		if id == "" || typ == "execution" || id == "exec-out" || id == "exec" {
			continue
		}
		if typ == "" {
			typ = "unknown"
		}
		lbl := id
		if l := p["label"]; pyval.Truthy(l) {
			if s := pyval.Strip(pyval.Str(l)); s != "" {
				lbl = s
			}
		}
		pin := map[string]any{"id": id, "label": lbl, "type": typ}
		if s, ok := p["schema"].(map[string]any); ok {
			pin["schema"] = pyval.Normalize(s)
		}
		if v, ok := pinDefaults[id]; ok {
			pin["default"] = pyval.Normalize(v)
		}
		pins = append(pins, pin)
	}
	return pins
}

var stringPinTypes = map[string]bool{
	"string": true, "str": true, "text": true, "markdown": true, "path": true, "file": true,
	"directory": true, "workspace_file": true, "workspace_folder": true, "provider": true, "model": true,
	"provider_text": true, "model_text": true, "provider_image": true, "model_image": true,
	"provider_video": true, "model_video": true, "provider_voice": true, "model_voice": true,
	"provider_music": true, "model_music": true,
}

// isArtifactType reports whether the lower-cased pin type t is base
// ("artifact" or "artifacts") or base_<modality> for a modality that
// gateway-api §2.4 lists; any other suffix is an unknown type, as in
// Python, which tests membership in the listed set.
func isArtifactType(t, base string) bool {
	if t == base {
		return true
	}
	modality, ok := strings.CutPrefix(t, base+"_")
	return ok && (modality == "image" || modality == "audio" || modality == "text" || modality == "video")
}

// pinSchema maps a pin type to its JSON-Schema fragment (§2.4), as
// Python's _json_schema_for_visualflow_pin_type: x-abstract-type is the
// stripped type, absent when blank.
func pinSchema(typ string) map[string]any {
	s := map[string]any{}
	raw := pyval.Strip(typ)
	if raw != "" {
		s["x-abstract-type"] = raw
	}
	t := pyval.Lower(raw)
	switch {
	case stringPinTypes[t]:
		s["type"] = "string"
	case t == "number" || t == "float" || t == "double":
		s["type"] = "number"
	case t == "integer" || t == "int":
		s["type"] = "integer"
	case t == "boolean" || t == "bool":
		s["type"] = "boolean"
	case t == "array" || t == "list":
		s["type"] = "array"
	case t == "object" || t == "dict" || t == "map" || t == "json":
		s["type"] = "object"
	case isArtifactType(t, "artifact"):
		modality := strings.TrimPrefix(strings.TrimPrefix(t, "artifact"), "_")
		for k, v := range artifactRefSchema(modality) {
			s[k] = v
		}
	case isArtifactType(t, "artifacts"):
		modality := strings.TrimPrefix(strings.TrimPrefix(t, "artifacts"), "_")
		s["type"] = "array"
		s["items"] = artifactRefSchema(modality)
		if modality != "" {
			s["x-abstract-artifact-modality"] = modality
		}
	}
	return s
}

func artifactRefSchema(modality string) map[string]any {
	props := map[string]any{}
	for _, k := range []string{"artifact_id", "run_id", "artifact_run_id", "content_type", "filename", "source_path", "modality"} {
		props[k] = map[string]any{"type": "string"}
	}
	// The reference is required and never empty, as in the reference's
	// schema: a client validating against it refuses {"$artifact": ""}.
	props["$artifact"] = map[string]any{"type": "string", "minLength": int64(1)}
	s := map[string]any{
		"type":                 "object",
		"required":             []any{"$artifact"},
		"properties":           props,
		"additionalProperties": true,
	}
	if modality != "" {
		s["x-abstract-artifact-modality"] = modality
	}
	return s
}
