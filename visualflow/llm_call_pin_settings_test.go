package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// These tests pin llm_call payload details to the reference handler
// (executor.py _create_llm_call_handler): which of pin and effectConfig
// wins, and how values are normalised before they reach the provider.

// runLLMCallPayload runs a one-node llm_call flow with the given pinDefaults
// and effectConfig and returns the payload the llm_call handler received.
func runLLMCallPayload(t *testing.T, defaults, cfg string) map[string]any {
	t.Helper()
	flow := effectWiredFlow("llm_call", defaults, cfg, "response")
	sc := &scripted{results: []any{map[string]any{"content": "x"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, nil)
	if st.Status != durable.RunCompleted || len(sc.payloads) != 1 {
		t.Fatalf("status %s (%s), llm calls %d", st.Status, st.Error, len(sc.payloads))
	}
	return sc.payloads[0]
}

// A string prompt_cache_binding is sent stripped (binding.strip()), so the
// provider's prompt-cache key matches Python's and the agent node's.
func TestLLMCallPromptCacheBindingStringIsStripped(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","prompt_cache_binding":"  conv-1 \n"}`, `{}`)
	params, _ := p["params"].(map[string]any)
	if got := params["prompt_cache_binding"]; got != "conv-1" {
		t.Fatalf("params.prompt_cache_binding = %q, want %q", got, "conv-1")
	}
}

// A {type:"json_schema", json_schema:{...}} wrapper without a schema
// object normalises to no schema: the call stays a plain-text call instead
// of a structured call against the wrapper itself.
func TestLLMCallSchemaWrapperWithoutSchemaSendsNoSchema(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","resp_schema":{"type":"json_schema","json_schema":{"name":"Answer","strict":true}}}`, `{}`)
	if s, has := p["response_schema"]; has {
		t.Fatalf("payload response_schema = %s, want none", jsonText(t, s))
	}
}

// A present thinking pin wins even when blank, which means "no thinking";
// effectConfig.thinking is only the default for an absent pin.
func TestLLMCallBlankThinkingPinOverridesConfig(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","thinking":""}`, `{"thinking":"high"}`)
	params, _ := p["params"].(map[string]any)
	if th, has := params["thinking"]; has {
		t.Fatalf("params.thinking = %v, want absent", th)
	}
}

// A present output pin wins even when null: the call is a plain text call
// (output: null), not the config's image request.
func TestLLMCallNullOutputPinDoesNotFallBackToConfig(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","output":null}`, `{"output":{"modality":"image"}}`)
	out, has := p["output"]
	if !has || out != nil {
		t.Fatalf("payload output = %s (present %v), want null", jsonText(t, out), has)
	}
}

// effectConfig.structured_output_fallback is a coerced boolean (spec
// Appendix B): the string "false" switches the fallback off, where Python
// truthiness would have turned it on.
func TestLLMCallStructuredOutputFallbackConfigIsCoerced(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi","resp_schema":{"type":"object","properties":{"a":{"type":"string"}}}}`,
		`{"structured_output_fallback":"false"}`)
	if _, ok := p["response_schema"]; !ok {
		t.Fatalf("payload has no response_schema: %s", jsonText(t, p))
	}
	if v, has := p["structured_output_fallback"]; has {
		t.Fatalf("payload structured_output_fallback = %v, want absent", v)
	}
}

// An abstractsemantics: $ref is recognised after stripping, so
// " abstractsemantics:x" fails the step (no resolver here, spec §5.4.1)
// instead of reaching the provider as an unresolved schema.
func TestLLMCallSemanticsRefWithSurroundingSpaceFailsStep(t *testing.T) {
	t.Parallel()
	flow := effectWiredFlow("llm_call", `{"prompt":"hi","resp_schema":{"$ref":" abstractsemantics:answer"}}`, `{}`, "response")
	sc := &scripted{results: []any{map[string]any{"content": "x"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, nil)
	if len(sc.payloads) != 0 || st.Status != durable.RunFailed {
		t.Fatalf("status %s, llm calls %d; want the step to fail before the call", st.Status, len(sc.payloads))
	}
}

// executor.py _create_llm_call_handler: the config default reads
// config.get("include_context") and, only when that is None,
// config.get("use_context"). A node config {"include_context": null,
// "use_context": true} therefore includes the context.
func TestLLMCallNullIncludeContextConfigFallsBackToUseContext(t *testing.T) {
	t.Parallel()
	p := runLLMCallPayload(t, `{"prompt":"hi"}`, `{"include_context":null,"use_context":true}`)
	if got := p["include_context"]; got != true {
		t.Fatalf("payload include_context = %#v, want true (config use_context when include_context is null)", got)
	}
}
