package visualflow

import "testing"

// A deliberate difference (docs/visualflow.md): llm_call trims its
// provider and model pins, where Python sends a string pin as given and
// counts a whitespace-only one as set. A padded id reaches the payload
// as the provider's id; a blank pin still overrides the configuration
// (Python's isinstance test), leaving the setting to the host defaults.
func TestLLMCallProviderModelPinsAreTrimmed(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","provider":" openai ","model":"gpt-x\n"}`, `{}`)
	if p["provider"] != "openai" || p["model"] != "gpt-x" {
		t.Fatalf("payload provider/model = %q/%q, want %q/%q", p["provider"], p["model"], "openai", "gpt-x")
	}
	// Blank provider pin over a configured one: exactly one set, so the
	// payload carries neither (host defaults).
	p = runLLMCallPayload(t, `{"prompt":"hi","provider":"  ","model":"m"}`, `{"provider":"openai"}`)
	if _, has := p["provider"]; has {
		t.Fatalf("payload provider = %q, want none (a blank pin leaves it to the host)", p["provider"])
	}
	if _, has := p["model"]; has {
		t.Fatalf("payload model = %q, want none with the provider unset", p["model"])
	}
}
