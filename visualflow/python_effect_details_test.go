package visualflow

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Details of the effect nodes checked against the Python compiler
// (visualflow_compiler/compiler.py and visual/executor.py).

// captureReact is a ReAct child that records the vars it starts with,
// optionally plants node traces, and completes with the answer "ok".
func captureReact(id string, got *map[string]any, traces map[string]any) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "done", Nodes: map[string]runtime.NodeFunc{
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			*got = pyjson.CloneObject(run.Vars)
			if traces != nil {
				objectAt(run.Vars, "_runtime")["node_traces"] = pyjson.CloneObject(traces)
			}
			return runtime.Complete(map[string]any{"answer": "ok", "iterations": int64(1), "messages": []any{}}), nil
		},
	}}
}

// agentWiredFlow: start -> agent -> end, with end.<pin> wired from
// agent.<pin> for each pin.
func agentWiredFlow(schema string, pins ...string) string {
	cfg := `"provider":"p","model":"m","_react_workflow_id":"react-x"`
	if schema != "" {
		cfg += `,"outputSchema":{"enabled":true,"jsonSchema":` + schema + `}`
	}
	endIn := `{"id":"exec-in","type":"execution"}`
	edges := `{"source":"start","sourceHandle":"exec-out","target":"agent","targetHandle":"exec-in"},
 {"source":"agent","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"}`
	for _, p := range pins {
		endIn += `,{"id":"` + p + `","type":"any"}`
		edges += `,{"source":"agent","sourceHandle":"` + p + `","target":"end","targetHandle":"` + p + `"}`
	}
	return `{"id":"agx","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"agent","type":"agent","data":{
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"},{"id":"data","type":"object"},
     {"id":"meta","type":"object"},{"id":"tool_calls","type":"array"},{"id":"tool_results","type":"array"}],
   "pinDefaults":{"prompt":"do it"},"agentConfig":{` + cfg + `}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[` + endIn + `]}}],
 "edges":[` + edges + `]}`
}

// effectWiredFlow: start -> one effect node of type typ (pin defaults
// from defaults, effectConfig from cfg) -> end, with end.r wired from
// <node>.<pin>.
func effectWiredFlow(typ, defaults, cfg, pin string) string {
	return `{"id":"fx","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"fx","type":"` + typ + `","data":{"inputs":[{"id":"exec-in","type":"execution"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"` + pin + `","type":"any"}],
   "pinDefaults":` + defaults + `,"effectConfig":` + cfg + `}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"r","type":"any"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"fx","targetHandle":"exec-in"},
 {"source":"fx","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"fx","sourceHandle":"` + pin + `","target":"end","targetHandle":"r"}]}`
}

// Python _build_sub_vars: audio_policy is inherited only as a non-blank
// string (stripped); stt_language falls back to _runtime.audio_language
// when absent or null, and is inherited only as a non-blank string.
func TestAgentChildRuntimeAudioSettings(t *testing.T) {
	cases := []struct {
		name   string
		parent map[string]any
		want   map[string]any // expected audio keys of the child _runtime
	}{
		{"stripped, language from audio_language",
			map[string]any{"audio_policy": "  auto ", "audio_language": " fr "},
			map[string]any{"audio_policy": "auto", "stt_language": "fr"}},
		{"stt_language wins over audio_language",
			map[string]any{"stt_language": "de", "audio_language": "fr"},
			map[string]any{"stt_language": "de"}},
		{"null stt_language falls back",
			map[string]any{"stt_language": nil, "audio_language": "it"},
			map[string]any{"stt_language": "it"}},
		{"non-strings and blanks are not inherited",
			map[string]any{"audio_policy": int64(5), "stt_language": "  ", "audio_language": "fr"},
			map[string]any{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var child map[string]any
			rt := map[string]any{}
			for k, v := range c.parent {
				rt[k] = v
			}
			_, st := runFlows(t, []string{agentWiredFlow("", "response")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
				nil, map[string]any{"_runtime": rt})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			crt, _ := child["_runtime"].(map[string]any)
			got := map[string]any{}
			for _, k := range []string{"audio_policy", "stt_language", "audio_language"} {
				if v, ok := crt[k]; ok {
					got[k] = v
				}
			}
			if jsonText(t, got) != jsonText(t, c.want) {
				t.Fatalf("child _runtime audio keys = %s, want %s", jsonText(t, got), jsonText(t, c.want))
			}
		})
	}
}

// Python _build_sub_vars: scratchpad.max_iterations is
// int(_limits.max_iterations or 25); _limits keeps the parent's value.
func TestAgentChildScratchpadMaxIterationsFallback(t *testing.T) {
	cases := []struct {
		name       string
		parent     any
		wantScr    int64
		wantLimits any
	}{
		{"zero", int64(0), 25, int64(0)},
		{"null", nil, 25, nil},
		{"float truncated", 7.9, 7, 7.9},
		{"numeric string", "12", 12, "12"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var child map[string]any
			_, st := runFlows(t, []string{agentWiredFlow("", "response")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
				nil, map[string]any{"_limits": map[string]any{"max_iterations": c.parent}})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			sp, _ := child["scratchpad"].(map[string]any)
			if jsonText(t, sp["max_iterations"]) != jsonText(t, c.wantScr) {
				t.Fatalf("child scratchpad.max_iterations = %s, want %d", jsonText(t, sp["max_iterations"]), c.wantScr)
			}
			lim, _ := child["_limits"].(map[string]any)
			if jsonText(t, lim["max_iterations"]) != jsonText(t, c.wantLimits) {
				t.Fatalf("child _limits.max_iterations = %s, want %s", jsonText(t, lim["max_iterations"]), jsonText(t, c.wantLimits))
			}
		})
	}
}

// Python _extract_tool_activity_from_steps (_as_dict_list): a single tool
// call (or result) given as an object counts as one; list items that are
// not objects are dropped.
func TestAgentToolActivityObjectsOnly(t *testing.T) {
	traces := map[string]any{"reason": map[string]any{"steps": []any{
		map[string]any{"ts": "2026-01-01T00:00:01+00:00",
			"effect": map[string]any{"type": "tool_calls", "payload": map[string]any{"tool_calls": map[string]any{"name": "a", "call_id": "1"}}},
			"result": map[string]any{"results": []any{map[string]any{"call_id": "1", "success": true}, "junk", int64(5)}}},
		map[string]any{"ts": "2026-01-01T00:00:02+00:00",
			"effect": map[string]any{"type": "tool_calls", "payload": map[string]any{"tool_calls": []any{"junk", map[string]any{"name": "b", "call_id": "2"}, nil}}},
			"result": map[string]any{"results": map[string]any{"call_id": "2", "success": false}}},
	}}}
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow("", "tool_calls", "tool_results", "meta")},
		[]*runtime.Workflow{captureReact("react-x", &child, traces)}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	wantCalls := []any{map[string]any{"name": "a", "call_id": "1"}, map[string]any{"name": "b", "call_id": "2"}}
	wantResults := []any{map[string]any{"call_id": "1", "success": true}, map[string]any{"call_id": "2", "success": false}}
	if got := jsonText(t, st.Output["tool_calls"]); got != jsonText(t, wantCalls) {
		t.Fatalf("tool_calls = %s\nwant %s", got, jsonText(t, wantCalls))
	}
	if got := jsonText(t, st.Output["tool_results"]); got != jsonText(t, wantResults) {
		t.Fatalf("tool_results = %s\nwant %s", got, jsonText(t, wantResults))
	}
	meta, _ := st.Output["meta"].(map[string]any)
	if jsonText(t, meta["tool_calls"]) != "2" || jsonText(t, meta["tool_results"]) != "2" {
		t.Fatalf("meta counts = %s/%s, want 2/2", jsonText(t, meta["tool_calls"]), jsonText(t, meta["tool_results"]))
	}
}

// Python handler, phase subworkflow: the structured-output pass asks with
// the reference compiler's exact wording.
func TestAgentStructuredPromptWording(t *testing.T) {
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow(`{"type":"object"}`, "data")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if len(llm.payloads) != 1 {
		t.Fatalf("llm calls = %d, want 1", len(llm.payloads))
	}
	msgs, _ := llm.payloads[0]["messages"].([]any)
	m0, _ := msgs[0].(map[string]any)
	want := "Convert the Agent answer into a JSON object matching the required schema. Return JSON only.\n\nTask:\ndo it\n\nAnswer:\nok"
	if m0["content"] != want {
		t.Fatalf("structured prompt = %q\nwant %q", m0["content"], want)
	}
}

// Python handler, phase structured: content is parsed only when data is
// absent or null; a data that is not an object (a list) gives {}.
func TestAgentStructuredListDataIsEmptyObject(t *testing.T) {
	llm := &scripted{results: []any{map[string]any{"data": []any{int64(1), int64(2)}, "content": `{"x": 1}`}}}
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow(`{"type":"object"}`, "data", "response")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["data"]); got != "{}" {
		t.Fatalf("agent data = %s, want {}", got)
	}
	if st.Output["response"] != "{}" {
		t.Fatalf("agent response = %v, want \"{}\"", st.Output["response"])
	}
}

// Python _artifact_ref_from_generated_item: an artifact_ref naming its id
// only under "id" (or padded) is copied with $artifact and artifact_id set
// to the trimmed id.
func TestMediaArtifactRefIDNormalised(t *testing.T) {
	cases := []struct {
		name string
		raw  map[string]any
		want map[string]any
	}{
		{"top-level ref with id only",
			map[string]any{"artifact_ref": map[string]any{"id": "art-1", "content_type": "image/png"}},
			map[string]any{"id": "art-1", "$artifact": "art-1", "artifact_id": "art-1", "content_type": "image/png"}},
		{"padded $artifact",
			map[string]any{"artifact_ref": map[string]any{"$artifact": " art-2 "}},
			map[string]any{"$artifact": "art-2", "artifact_id": "art-2"}},
		{"output item ref with id only",
			map[string]any{"outputs": map[string]any{"images": []any{map[string]any{"artifact_ref": map[string]any{"id": "art-3"}}}}},
			map[string]any{"id": "art-3", "$artifact": "art-3", "artifact_id": "art-3"}},
		{"output item whose ref has no id falls back to the item's id",
			map[string]any{"outputs": map[string]any{"images": []any{map[string]any{"artifact_ref": map[string]any{"x": 1}, "artifact_id": "art-4", "content_type": " image/webp ", "size_bytes": true}}}},
			map[string]any{"$artifact": "art-4", "artifact_id": "art-4", "content_type": "image/webp"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			llm := &scripted{results: []any{c.raw}}
			_, st := runFlows(t, []string{effectWiredFlow("generate_image", `{"prompt":"cat"}`, `{}`, "artifact_ref")}, nil,
				map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			if got := jsonText(t, st.Output["r"]); got != jsonText(t, c.want) {
				t.Fatalf("artifact_ref = %s\nwant %s", got, jsonText(t, c.want))
			}
		})
	}
}

// Python media mapping: content_type is set only from a non-blank string
// on the ref (stripped); otherwise the key is left as it was.
func TestMediaContentTypeLeftOut(t *testing.T) {
	n := &node{ID: "img", Type: "generate_image"}
	s := &step{}
	out, _ := s.mapEffect(n, map[string]any{"artifact_id": "art-1"}, nil).(map[string]any)
	if v, has := out["content_type"]; has {
		t.Fatalf("content_type = %s, want it left out when the ref has none", jsonText(t, v))
	}
	prior := map[string]any{"content_type": "image/jpeg"}
	out, _ = s.mapEffect(n, map[string]any{"artifact_ref": map[string]any{"$artifact": "a", "content_type": "  "}}, prior).(map[string]any)
	if out["content_type"] != "image/jpeg" {
		t.Fatalf("content_type = %s, want the prior value kept", jsonText(t, out["content_type"]))
	}
	out, _ = s.mapEffect(n, map[string]any{"artifact_ref": map[string]any{"$artifact": "a", "content_type": " image/png "}}, nil).(map[string]any)
	if out["content_type"] != "image/png" {
		t.Fatalf("content_type = %s, want \"image/png\"", jsonText(t, out["content_type"]))
	}
}

// Python transcribe_audio mapping: text is str(text.content), else (when
// that is empty) str(content), else "".
func TestTranscribeAudioTextDefaultsToEmpty(t *testing.T) {
	cases := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"nothing", map[string]any{}, ""},
		{"null content", map[string]any{"content": nil, "text": map[string]any{"content": nil}}, ""},
		{"empty text.content falls back to content", map[string]any{"text": map[string]any{"content": ""}, "content": "hello"}, "hello"},
		{"number stringified", map[string]any{"text": map[string]any{"content": int64(42)}}, "42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			llm := &scripted{results: []any{c.raw}}
			_, st := runFlows(t, []string{effectWiredFlow("transcribe_audio", `{"audio_artifact":"a1"}`, `{}`, "text")}, nil,
				map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			if st.Output["r"] != c.want {
				t.Fatalf("text = %s, want %q", jsonText(t, st.Output["r"]), c.want)
			}
		})
	}
}

// Python compiler (include_context) and executor (context pin): the
// system prompt inserted into the messages is stripped, and only a string
// system prompt is inserted.
func TestLLMInjectedSystemPromptStripped(t *testing.T) {
	ctxVars := map[string]any{"context": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "earlier"}}}}
	cases := []struct {
		name     string
		defaults string
		cfg      string
		want     []any
	}{
		{"include_context", `{"prompt":"now","system":"  be brief \n","include_context":true}`, `{}`,
			[]any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "earlier"},
				map[string]any{"role": "user", "content": "now"}}},
		{"include_context, non-string system", `{"prompt":"now","system":5,"include_context":true}`, `{}`,
			[]any{map[string]any{"role": "user", "content": "earlier"}, map[string]any{"role": "user", "content": "now"}}},
		{"context pin", `{"prompt":"now","system":" terse ","context":{"messages":[{"role":"user","content":"pinned"}]}}`,
			`{"provider":"p","model":"m"}`,
			[]any{map[string]any{"role": "system", "content": "terse"}, map[string]any{"role": "user", "content": "pinned"},
				map[string]any{"role": "user", "content": "now"}}},
		{"context pin, non-string system", `{"prompt":"now","system":5,"context":{"messages":[{"role":"user","content":"pinned"}]}}`,
			`{"provider":"p","model":"m"}`,
			[]any{map[string]any{"role": "user", "content": "pinned"}, map[string]any{"role": "user", "content": "now"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			llm := &scripted{results: []any{map[string]any{"content": "done"}}}
			vars := map[string]any{}
			if strings.Contains(c.defaults, "include_context") { // else the start's bus would fill the context pin
				vars = pyjson.CloneObject(ctxVars)
			}
			_, st := runFlows(t, []string{effectWiredFlow("llm_call", c.defaults, c.cfg, "response")}, nil,
				map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, vars)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			if got := jsonText(t, llm.payloads[0]["messages"]); got != jsonText(t, c.want) {
				t.Fatalf("messages = %s\nwant %s", got, jsonText(t, c.want))
			}
		})
	}
}

// Python wait_until: float("nan") is accepted, and timedelta then raises
// (ValueError: cannot convert float NaN to integer), so the node fails
// instead of waiting 0 seconds.
func TestWaitUntilNaNDurationFails(t *testing.T) {
	for _, unit := range []string{"seconds", "minutes", "hours"} {
		t.Run(unit, func(t *testing.T) {
			msg := waitUntilFailure(t, `{"duration":"nan"}`, `{"durationType":"`+unit+`"}`)
			if !strings.Contains(msg, "cannot convert float NaN to integer") {
				t.Fatalf("error = %q, want Python's \"cannot convert float NaN to integer\"", msg)
			}
		})
	}
}

// waitUntilFailure runs a wait_until node with the given pin defaults and
// config and returns the error the run failed with; a run that ends
// otherwise fails the test.
func waitUntilFailure(t *testing.T, defaults, cfg string) string {
	t.Helper()
	_, st := startRunWith(t, mustFlow(t, effectWiredFlow("wait_until", defaults, cfg, "until")), CompileOptions{}, map[string]any{})
	if st.Status != durable.RunFailed {
		t.Fatalf("status = %s, want failed (waiting %+v)", st.Status, st.Waiting)
	}
	return st.Error
}

// Reference: AbstractRuntime visual/executor.py
// _create_model_residency_handler sends `pin` as
// _coerce_bool(_input_or_config(payload, config, "pin", default=True)) and
// `required` as _coerce_bool(_input_or_config(..., "required",
// default=False)) whenever the key is present in the pins or the config.
// _input_or_config skips a null (or "") pin value and falls back to the
// config, then to the default: a null `pin` pin sends pin: true, and a null
// `required` pin with effectConfig.required true sends required: true.
func TestModelResidencyNullPinFallsBackToConfigThenDefault(t *testing.T) {
	p := modelResidencyPayload(map[string]any{"pin": nil}, map[string]any{})
	if p["pin"] != true {
		t.Errorf("pin pin null, no config: payload pin = %#v, want true (the default)", p["pin"])
	}
	p = modelResidencyPayload(map[string]any{"pin": ""}, map[string]any{"pin": false})
	if p["pin"] != false {
		t.Errorf("pin pin \"\", config false: payload pin = %#v, want false (from config)", p["pin"])
	}
	p = modelResidencyPayload(map[string]any{"required": nil}, map[string]any{"required": true})
	if p["required"] != true {
		t.Errorf("required pin null, config true: payload required = %#v, want true (from config)", p["required"])
	}
	p = modelResidencyPayload(map[string]any{}, map[string]any{"pin": nil})
	if p["pin"] != true {
		t.Errorf("config pin null: payload pin = %#v, want true (the default)", p["pin"])
	}
}

// Reference: visual/executor.py _create_model_residency_handler reads
// operation as str(value or "list_loaded").strip(), and task, provider,
// model, runtime_id, base_url, provider_api_key, cache_policy through
// _nonempty_str (a non-blank string, stripped; anything else is left out of
// the payload).
func TestModelResidencyTextSettingsAreStrippedStrings(t *testing.T) {
	in := map[string]any{
		"operation": " load ", "provider": "  ollama ", "model": int64(7),
		"task": "   ", "base_url": map[string]any{"x": 1}, "cache_policy": " keep ",
	}
	p := modelResidencyPayload(in, map[string]any{"task": "tts"})
	want := map[string]any{"operation": "load", "provider": "ollama", "cache_policy": "keep"}
	got := map[string]any{}
	for _, k := range []string{"operation", "task", "provider", "model", "runtime_id", "base_url", "provider_api_key", "cache_policy"} {
		if v, ok := p[k]; ok {
			got[k] = v
		}
	}
	// task: the pin "   " is not null/"" so it wins over the config and
	// then fails _nonempty_str: no task at all.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("payload text settings = %#v, want %#v", got, want)
	}
	p = modelResidencyPayload(map[string]any{"operation": int64(5)}, map[string]any{})
	if p["operation"] != "5" {
		t.Errorf("operation pin 5: payload operation = %#v, want \"5\" (str())", p["operation"])
	}
}

// Reference: visual/executor.py _create_tool_calls_handler /
// _create_call_tool_handler read the configured allowlist as
// config.get("allowed_tools"), and when that is None config.get("allowedTools")
// (the same for the pins). A config holding allowed_tools: null next to
// allowedTools: ["calc"] therefore sends allowed_tools ["calc"] rather
// than dropping (config) or emptying (pins) the allowlist.
func TestToolCallsAllowlistAliasAfterNullKey(t *testing.T) {
	cfg := map[string]any{"allowed_tools": nil, "allowedTools": []any{"calc"}}
	for _, single := range []bool{false, true} {
		p := toolCallsPayload(map[string]any{}, cfg, single)
		if !reflect.DeepEqual(p["allowed_tools"], []any{"calc"}) {
			t.Errorf("single=%v: config allowed_tools null + allowedTools [calc]: payload allowed_tools = %#v, want [calc]", single, p["allowed_tools"])
		}
		p = toolCallsPayload(map[string]any{"allowed_tools": nil, "allowedTools": []any{"calc"}}, map[string]any{}, single)
		if !reflect.DeepEqual(p["allowed_tools"], []any{"calc"}) {
			t.Errorf("single=%v: pins allowed_tools null + allowedTools [calc]: payload allowed_tools = %#v, want [calc]", single, p["allowed_tools"])
		}
	}
}
