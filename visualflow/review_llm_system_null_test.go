package visualflow

import "testing"

// The reference reads the system prompt as input_data.get("system", ""):
// "" only when the pin is absent; a system pin connected to null is sent
// as system_prompt: null, as Python records it.
func TestReviewLLMCallNullSystemPinIsSentAsNull(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","system":null}`, `{}`)
	if got, has := p["system_prompt"]; !has || got != nil {
		t.Fatalf("payload system_prompt = %s (present %v), want null", jsonText(t, got), has)
	}
	p = runLLMCallPayload(t, `{"prompt":"hi"}`, `{}`)
	if got := p["system_prompt"]; got != "" {
		t.Fatalf("payload system_prompt = %s without a system pin, want \"\"", jsonText(t, got))
	}
}
