package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §6.9 answer_user: "message = "" for null else str(); level
// lower-cased, warn→warning, info→message, anything not in
// message|warning|error → message".
func TestSpec69_AnswerUserLevelAndNullMessage(t *testing.T) {
	for _, c := range []struct {
		level     any
		wantLevel string
	}{{"INFO", "message"}, {" Error ", "error"}, {"debug", "message"}, {nil, "message"}, {"Warning", "warning"}} {
		defaults := map[string]any{"message": nil}
		if c.level != nil {
			defaults["level"] = c.level
		}
		flow := rsFlow("f", "start", []map[string]any{rvStart(),
			rsNode("say", "answer_user", []string{"exec-in:exec", "message:string", "level:string"}, []string{"exec-out:exec", "message:string"},
				map[string]any{"pinDefaults": defaults}),
			rvEnd("end", nil, nil)},
			"start.exec-out>say.exec-in", "say.exec-out>end.exec-in")
		p, st := runCapturing(t, flow, durable.EffectAnswerUser, map[string]any{})
		if p == nil || p["message"] != "" || p["level"] != c.wantLevel {
			t.Errorf("level %#v: payload %v (status %s %s), want message \"\" and level %q", c.level, p, st.Status, st.Error, c.wantLevel)
		}
	}
}

// Spec §6.9 ask_user: "prompt = pin value when the key is present (even
// null or "", which makes the runtime effect fail with "ask_user requires
// payload.prompt")".
func TestSpec69_AskUserPresentEmptyPromptFailsTheEffect(t *testing.T) {
	for _, prompt := range []any{"", nil} {
		flow := rsFlow("f", "start", []map[string]any{rvStart(),
			rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
				map[string]any{"pinDefaults": map[string]any{"prompt": prompt}}),
			rvEnd("end", nil, nil)},
			"start.exec-out>ask.exec-in", "ask.exec-out>end.exec-in")
		st := runFlow(t, flow, map[string]any{})
		if st.Status != durable.RunFailed || !strings.Contains(st.Error, "ask_user requires payload.prompt") {
			t.Errorf("prompt %#v: status %s (%q), want failed with ask_user requires payload.prompt", prompt, st.Status, st.Error)
		}
	}
}

// Spec §6.9 ask_user: allow_free_text is effectConfig.allowFreeText (not a
// pin), choices default to [], and the wait key is user:<run_id>:<node_id>.
func TestSpec69_AskUserConfigFreeTextAndWaitKey(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{rvStart(),
		rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string", "allowFreeText:boolean"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "Go?", "allowFreeText": true}, "effectConfig": map[string]any{"allowFreeText": false}}),
		rvEnd("end", nil, nil)},
		"start.exec-out>ask.exec-in", "ask.exec-out>end.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
	}
	w := st.Waiting
	if w.WaitKey != "user:"+st.RunID+":ask" || w.AllowFreeText || len(w.Choices) != 0 {
		t.Fatalf("wait key %q, allow_free_text %v, choices %v; want user:%s:ask, false (config), none", w.WaitKey, w.AllowFreeText, w.Choices, st.RunID)
	}
}

// Spec §6.11 listen_voice: without pins or config the effect is a
// wait_event on the shared key "voice_input" with prompt "Speak now.",
// allow_free_text true and details {input_mode: "voice", content_types:
// [audio/wav, audio/mpeg, audio/webm]}.
func TestSpec611_ListenVoiceDefaults(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{rvStart(),
		rsNode("v", "listen_voice", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "text:string"}, nil)},
		"start.exec-out>v.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
	}
	w := st.Waiting
	if w.WaitKey != "voice_input" || w.Prompt != "Speak now." || !w.AllowFreeText {
		t.Fatalf("wait key %q, prompt %q, allow_free_text %v", w.WaitKey, w.Prompt, w.AllowFreeText)
	}
	if got := jsonText(t, w.Details); !strings.Contains(got, `"input_mode": "voice"`) ||
		!strings.Contains(got, `"audio/wav",`) || !strings.Contains(got, `"audio/mpeg",`) || !strings.Contains(got, `"audio/webm"`) {
		t.Fatalf("details = %s", got)
	}
}

// Spec §6.9 code: permissions aliases safe, protected, restricted,
// sandboxed and "" are sandbox (the code runs); unrestricted is
// full_access, refused without the host opt-in.
func TestSpec69_CodePermissionAliases(t *testing.T) {
	t.Setenv("ABSTRACTRUNTIME_CODE_FULL_ACCESS", "")
	for _, perm := range []string{"safe", "Protected", "restricted", "sandboxed", "", "SANDBOX"} {
		data := map[string]any{"code": "def transform(_input):\n    return 3\n", "pinDefaults": map[string]any{"permissions": perm}}
		_, st := startRunWith(t, codeFlowWith(data, []string{"permissions:string"}), CompileOptions{}, map[string]any{})
		if st.Output["success"] != true || jsonText(t, st.Output["out"]) != "3" {
			t.Errorf("permissions %q: output %s, want the code run in the sandbox", perm, jsonText(t, st.Output))
		}
	}
	data := map[string]any{"code": "def transform(_input):\n    return 3\n", "pinDefaults": map[string]any{"permissions": "unrestricted"}}
	_, st := startRunWith(t, codeFlowWith(data, []string{"permissions:string"}), CompileOptions{}, map[string]any{})
	if e, _ := st.Vars["_flow_error"].(string); !strings.HasPrefix(e, "full_access code execution is disabled by host policy") {
		t.Errorf("permissions unrestricted: _flow_error %q, want the full_access refusal", e)
	}
}

// Spec §6.12 (host catalogue nodes, without a provider registry): a host
// unavailable gives provider_catalog providers []; provider_models takes
// the provider from its pin, else providerModelsConfig.provider, with
// models []; an empty model_catalog has pair null and provider/model "".
func TestSpec612_HostCatalogueNodesWithoutRegistry(t *testing.T) {
	nodes := []map[string]any{rvStart(),
		rsNode("pc", "provider_catalog", []string{"allowed_providers:array"}, []string{"providers:array"}, nil),
		rsNode("pmPin", "provider_models", []string{"provider:string"}, []string{"provider:string", "models:array"},
			map[string]any{"pinDefaults": map[string]any{"provider": "openai"}, "providerModelsConfig": map[string]any{"provider": "ollama"}}),
		rsNode("pmCfg", "provider_models", []string{"provider:string"}, []string{"provider:string", "models:array"},
			map[string]any{"providerModelsConfig": map[string]any{"provider": "ollama"}}),
		rsNode("mc", "model_catalog", []string{"index:number"}, []string{"pair:object", "provider:string", "model:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "providers:any", "p1:any", "m1:any", "p2:any", "pair:any", "provider:any", "model:any"}, nil, nil),
	}
	f := rsFlow("f", "start", nodes, "start.exec-out>end.exec-in", "pc.providers>end.providers",
		"pmPin.provider>end.p1", "pmPin.models>end.m1", "pmCfg.provider>end.p2",
		"mc.pair>end.pair", "mc.provider>end.provider", "mc.model>end.model")
	st := runFlow(t, f, map[string]any{})
	want := map[string]any{"providers": []any{}, "p1": "openai", "m1": []any{}, "p2": "ollama",
		"pair": nil, "provider": "", "model": "", "success": true}
	if got := jsonText(t, st.Output); got != jsonText(t, want) {
		t.Fatalf("output = %s, want %s", got, jsonText(t, want))
	}
}

// Spec §6.1 on_user_request: a non-object input gives message =
// str(input) and context = {}.
func TestSpec61_OnUserRequestFromScalarBus(t *testing.T) {
	st := runFlowOnce(t, `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "code", "type": "code", "data": {"codeBody": "return 5",
	    "inputs": [{"id": "exec-in", "type": "execution"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	  {"id": "req", "type": "on_user_request", "data": {
	    "inputs": [{"id": "exec-in", "type": "execution"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "message", "type": "string"}, {"id": "context", "type": "object"}]}},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "message", "type": "string"}, {"id": "context", "type": "object"}]}}
	], "edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	  {"source": "code", "sourceHandle": "exec-out", "target": "req", "targetHandle": "exec-in"},
	  {"source": "req", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
	  {"source": "req", "sourceHandle": "message", "target": "end", "targetHandle": "message"},
	  {"source": "req", "sourceHandle": "context", "target": "end", "targetHandle": "context"}
	]}`, map[string]any{"message": "from vars", "context": map[string]any{"task": "t"}})
	want := map[string]any{"message": "5", "context": map[string]any{}, "success": true}
	if got := jsonText(t, st.Output); got != jsonText(t, want) {
		t.Fatalf("output = %s, want %s (status %s, %s)", got, jsonText(t, want), st.Status, st.Error)
	}
}
