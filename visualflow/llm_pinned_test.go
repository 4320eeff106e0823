package visualflow

import "testing"

// A seed of 0 is a valid seed: llm_call sends params.seed whenever the
// seed is an int >= 0 (spec §5.4.1), so seed 0 must reach the provider.
func TestLLMCallSeedZeroIsSent(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","seed":0}`, `{}`)
	params, _ := p["params"].(map[string]any)
	if got, has := params["seed"]; !has || jsonText(t, got) != "0" {
		t.Fatalf("params.seed = %v (present %v), want 0", got, has)
	}
}

// A present thinking pin wins even when null (no thinking):
// effectConfig.thinking is only the default for an absent pin.
func TestLLMCallNullThinkingPinOverridesConfig(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","thinking":null}`, `{"thinking":"high"}`)
	params, _ := p["params"].(map[string]any)
	if th, has := params["thinking"]; has {
		t.Fatalf("params.thinking = %v, want absent", th)
	}
}

// A token-limit pin that is present but not a positive int gives no limit:
// unlike a null pin it does not fall back to effectConfig (the reference
// reads the config only when the pin is None).
func TestLLMCallInvalidTokenPinDoesNotFallBackToConfig(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","max_out_tokens":"lots"}`, `{"max_output_tokens":100}`)
	params, _ := p["params"].(map[string]any)
	if v, has := params["max_output_tokens"]; has {
		t.Fatalf("params.max_output_tokens = %v, want absent (invalid pin, no config fallback)", v)
	}
}
