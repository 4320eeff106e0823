package visualflow

import "testing"

// Without a thinking pin, effectConfig.thinking is the setting (spec
// §5.4.1, params.thinking "pin/config"), sent trimmed: dropping the
// config fallback would silently run the call without the configured
// thinking level.
func TestLLMCallThinkingConfigAppliesWithoutPin(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi"}`, `{"thinking":" high "}`)
	params, _ := p["params"].(map[string]any)
	if params["thinking"] != "high" {
		t.Fatalf("params.thinking = %#v, want effectConfig's \"high\"", params["thinking"])
	}
}

// Without an output pin, effectConfig.output is the output request (spec
// §5.4.1): an llm_call configured for an image must send that request, not
// fall back to a plain text call.
func TestLLMCallOutputConfigAppliesWithoutPin(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi"}`, `{"outputs":{"modality":"image"}}`)
	out, _ := p["output"].(map[string]any)
	if out["modality"] != "image" {
		t.Fatalf("payload output = %s, want effectConfig's {\"modality\":\"image\"}", jsonText(t, p["output"]))
	}
}

// Only a {type:"json_schema"} wrapper is unwrapped (spec §5.4.1; the
// reference checks raw.get("type") == "json_schema"): a plain object
// schema that merely has a json_schema key is sent as it is, not replaced
// by that key's inner schema.
func TestLLMCallSchemaUnwrappedOnlyForJSONSchemaType(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","resp_schema":{"type":"object","properties":{"a":{"type":"string"}},"json_schema":{"schema":{"type":"object","properties":{"b":{"type":"string"}}}}}}`, `{}`)
	s, _ := p["response_schema"].(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if _, ok := props["a"]; !ok {
		t.Fatalf("payload response_schema = %s, want the object schema with property a as given", jsonText(t, p["response_schema"]))
	}
}
