package visualflow

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// llm_call payload construction (spec §5.4.1, §5.4.2): context history
// limits, the explicit context pin, Q5 and parameter normalisation.

// llmPayloadOf runs start -> llm_call (terminal) where every key of
// the pinDefaults JSON is a declared input pin (§4.3: declared-pin
// defaults beat the bus), and returns the llm_call payload.
func llmPayloadOf(t *testing.T, defaults, cfg string, vars map[string]any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(defaults), &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pins := ""
	for _, k := range keys {
		pins += `,{"id":"` + k + `","type":"any"}`
	}
	flow := `{"id":"payload_llm","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"llm","type":"llm_call","data":{
   "inputs":[{"id":"exec-in","type":"execution"}` + pins + `],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],
   "pinDefaults":` + defaults + `,"effectConfig":` + cfg + `}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"llm","targetHandle":"exec-in"}]}`
	llm := &scripted{results: []any{map[string]any{"content": "hi"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, vars)
	if st.Status != durable.RunCompleted || len(llm.payloads) != 1 {
		t.Fatalf("status %s (%s), llm calls %d", st.Status, st.Error, len(llm.payloads))
	}
	return llm.payloads[0]
}

func chatMsg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// Spec §5.4.2: with include_context the messages are the run's active
// context view — every system message, then only the last
// _limits.max_history_messages non-system messages (0 keeps none, -1 all)
// — then the system prompt after the leading system messages and the user
// prompt; prompt/system_prompt leave the payload. Python:
// ActiveContextPolicy.select_messages_view (memory/active_context.py).
func TestLLMIncludeContextHonoursMaxHistoryMessages(t *testing.T) {
	history := []any{chatMsg("system", "S"), chatMsg("user", "u1"), chatMsg("assistant", "a1"), chatMsg("user", "u2")}
	cases := []struct {
		limit any
		want  []any
	}{
		{int64(1), []any{chatMsg("system", "S"), chatMsg("system", "SP"), chatMsg("user", "u2"), chatMsg("user", "now")}},
		{int64(0), []any{chatMsg("system", "S"), chatMsg("system", "SP"), chatMsg("user", "now")}},
		{int64(-1), []any{chatMsg("system", "S"), chatMsg("system", "SP"), chatMsg("user", "u1"), chatMsg("assistant", "a1"),
			chatMsg("user", "u2"), chatMsg("user", "now")}},
	}
	for _, c := range cases {
		vars := map[string]any{"_limits": map[string]any{"max_history_messages": c.limit},
			"context": map[string]any{"messages": append([]any{}, history...)}}
		p := llmPayloadOf(t, `{"prompt":"now","system":"SP","include_context":true}`, `{}`, vars)
		if got, want := jsonText(t, p["messages"]), jsonText(t, c.want); got != want {
			t.Errorf("max_history_messages %v: messages = %s\nwant %s", c.limit, got, want)
		}
		for _, k := range []string{"prompt", "system_prompt"} {
			if _, has := p[k]; has {
				t.Errorf("max_history_messages %v: payload keeps %q", c.limit, k)
			}
		}
	}
}

// Spec §5.4.1 (both provider and model set): the context pin's messages
// become the call's messages and its explicit empty attachments list is
// sent as media [] ("no attachments"), so §5.4.2 injection (which only
// acts when the payload has no messages / no media) adds neither the run
// history nor the run attachments; max_input_tokens (config, int("100"))
// is sent. Python: executor.py _create_llm_call_handler + compiler.py.
func TestLLMExplicitContextPinBeatsRunContext(t *testing.T) {
	vars := map[string]any{"context": map[string]any{"messages": []any{chatMsg("user", "run history")}, "attachments": []any{"run.png"}}}
	p := llmPayloadOf(t, `{"prompt":"now","include_context":true,"context":{"messages":[{"role":"user","content":"pinned"}],"attachments":[]}}`,
		`{"provider":"p","model":"m","max_input_tokens":"100"}`, vars)
	if got, want := jsonText(t, p["messages"]), jsonText(t, []any{chatMsg("user", "pinned"), chatMsg("user", "now")}); got != want {
		t.Errorf("messages = %s, want %s", got, want)
	}
	if media, has := p["media"].([]any); !has || len(media) != 0 {
		t.Errorf("media = %s, want [] (explicit empty attachments)", jsonText(t, p["media"]))
	}
	if p["provider"] != "p" || p["model"] != "m" || jsonText(t, p["max_input_tokens"]) != "100" {
		t.Errorf("provider/model/max_input_tokens = %v/%v/%v", p["provider"], p["model"], p["max_input_tokens"])
	}
}

// Spec §5.4.1 Quirk Q5: with blank provider/model the context pin and
// max_in_tokens are ignored — the payload keeps prompt/system_prompt, has
// no messages, media, provider, model or max_input_tokens.
func TestLLMBlankProviderIgnoresContextPin(t *testing.T) {
	p := llmPayloadOf(t, `{"prompt":"now","max_in_tokens":500,"context":{"messages":[{"role":"user","content":"pinned"}],"attachments":["a.png"]}}`, `{}`, nil)
	for _, k := range []string{"messages", "media", "provider", "model", "max_input_tokens"} {
		if v, has := p[k]; has {
			t.Errorf("payload[%q] = %s, want absent (Q5)", k, jsonText(t, v))
		}
	}
	if p["prompt"] != "now" || p["system_prompt"] != "" {
		t.Errorf("prompt/system_prompt = %v/%v", p["prompt"], p["system_prompt"])
	}
}

// Spec §5.4.1: resp_schema in the OpenAI wrapper form is unwrapped,
// response_schema_name is "LLM_StructuredOutput", structured_output_fallback
// comes from the config; seed/temperature/max_out_tokens/thinking pins
// are normalised as Python's int()/float()/strip (int(50.9) == 50,
// int("4") == 4, float("0.2") == 0.2).
func TestLLMStructuredAndParamsNormalised(t *testing.T) {
	p := llmPayloadOf(t, `{"prompt":"now","resp_schema":{"type":"json_schema","json_schema":{"schema":{"type":"object","properties":{"a":{"type":"string"}}}}},
		"seed":"4","temperature":"0.2","max_out_tokens":50.9,"thinking":" low "}`, `{"structured_output_fallback":true,"seed":9}`, nil)
	if got := jsonText(t, p["response_schema"]); got != jsonText(t, map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}) {
		t.Errorf("response_schema = %s", got)
	}
	if p["response_schema_name"] != "LLM_StructuredOutput" || p["structured_output_fallback"] != true {
		t.Errorf("response_schema_name/structured_output_fallback = %v/%v", p["response_schema_name"], p["structured_output_fallback"])
	}
	want := map[string]any{"seed": int64(4), "temperature": 0.2, "max_output_tokens": int64(50), "thinking": "low"}
	if got, w := jsonText(t, p["params"]), jsonText(t, want); got != w {
		t.Errorf("params = %s, want %s", got, w)
	}
}

// Spec §5.4.1: with provider and model set, only a context pin with
// message objects builds a messages list; one without (here a non-object
// entry and attachments only) keeps prompt and system_prompt as they are
// and still sends its attachments as media.
func TestLLMExplicitContextWithoutMessagesKeepsPrompt(t *testing.T) {
	p := llmPayloadOf(t, `{"prompt":"now","system":"sys","context":{"messages":["not an object"],"attachments":[" a.png "]}}`,
		`{"provider":"p","model":"m"}`, nil)
	if v, has := p["messages"]; has {
		t.Errorf("messages = %s, want absent (no message objects in the context pin)", jsonText(t, v))
	}
	if p["prompt"] != "now" || p["system_prompt"] != "sys" {
		t.Errorf("prompt/system_prompt = %v/%v, want now/sys", p["prompt"], p["system_prompt"])
	}
	if got := jsonText(t, p["media"]); got != jsonText(t, []any{"a.png"}) {
		t.Errorf("media = %s, want [\"a.png\"]", got)
	}
}
