package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Spec §5.3: rows of the effect outcome → pin mapping that no other test
// reads field by field (ask_user/answer_user/emit_event merges, wait_until,
// wait_event, llm_call data/tool_calls/meta, media primary pins and meta,
// memory_query/memory_tag/KG assert/resolve, on_event, on_schedule,
// call_tool in a non-executed mode).
func TestSpec53_OutcomeMappingRows(t *testing.T) {
	ref := map[string]any{"$artifact": "a1", "artifact_id": "a1", "content_type": "video/mp4"}
	cases := []struct {
		typ  string
		raw  any
		want map[string]string // pin -> JSON text
	}{
		{"ask_user", map[string]any{"response": "yes", "extra": int64(1)}, map[string]string{"response": `"yes"`, "extra": `1`}},
		{"answer_user", map[string]any{"message": "m", "level": "info"}, map[string]string{"message": `"m"`, "level": `"info"`}},
		{"emit_event", map[string]any{"wait_key": "evt:session:s:n", "name": "n", "scope": "session", "delivered": int64(0), "delivered_to": []any{}, "resumed": []any{}},
			map[string]string{"wait_key": `"evt:session:s:n"`, "delivered": `0`, "delivered_to": `[]`, "resumed": `[]`}},
		{"wait_until", map[string]any{"until": "2026-01-01T00:00:00+00:00", "ready": true}, map[string]string{"until": `"2026-01-01T00:00:00+00:00"`, "ready": `true`}},
		{"wait_until", "late", map[string]string{"result": `"late"`}},
		{"wait_event", map[string]any{"k": "v"}, map[string]string{"event_data": `{"k": "v"}`}},
		{"llm_call", map[string]any{"data": map[string]any{"b": int64(1), "a": []any{"x"}}, "content": "ignored",
			"tool_calls": []any{map[string]any{"name": "t"}, "junk"}},
			map[string]string{"response": `"{\"a\":[\"x\"],\"b\":1}"`, "data": `{"a": ["x"], "b": 1}`, "tool_calls": `[{"name": "t"}]`, "success": `true`,
				"meta": `{"output_mode": "structured", "schema": "abstractflow.llm_call.v1.meta", "tool_calls": 1, "version": 1}`}},
		{"llm_call", map[string]any{"content": int64(7)},
			map[string]string{"response": `"7"`, "tool_calls": `[]`,
				"meta": `{"output_mode": "unstructured", "schema": "abstractflow.llm_call.v1.meta", "tool_calls": 0, "version": 1}`}},
		{"llm_call", map[string]any{"outputs": map[string]any{"images": []any{map[string]any{"artifact_id": "i1"}}}},
			map[string]string{"artifact_id": `"i1"`, "response": `""`, "outputs": `{"images": [{"artifact_id": "i1"}]}`,
				"meta": `{"output_mode": "media", "schema": "abstractflow.llm_call.v1.meta", "tool_calls": 0, "version": 1}`}},
		{"generate_video", map[string]any{"artifact_ref": ref, "provider": "p"},
			map[string]string{"video_artifact": jsonOf(ref), "artifact_ref": jsonOf(ref), "artifact_id": `"a1"`, "content_type": `"video/mp4"`, "success": `true`, "outputs": `{}`,
				"meta": `{"modality": "video", "provider": "p", "schema": "abstractflow.generate_video.v1.meta", "version": 1}`}},
		{"generate_voice", map[string]any{"artifact_id": "v1"},
			map[string]string{"audio_artifact": `{"$artifact": "v1", "artifact_id": "v1"}`, "success": `true`,
				"meta": `{"modality": "voice", "schema": "abstractflow.generate_voice.v1.meta", "version": 1}`}},
		{"generate_music", map[string]any{"resources": map[string]any{"tracks": []any{map[string]any{"nothing": true}, map[string]any{"$artifact": "m1", "size_bytes": int64(3)}}}},
			map[string]string{"music_artifact": `{"$artifact": "m1", "artifact_id": "m1", "size_bytes": 3}`, "audio_artifact": `{"$artifact": "m1", "artifact_id": "m1", "size_bytes": 3}`,
				"artifact_id": `"m1"`, "meta": `{"modality": "music", "schema": "abstractflow.generate_music.v1.meta", "version": 1}`}},
		{"generate_image", map[string]any{"outputs": map[string]any{}}, map[string]string{"image_artifact": `null`, "success": `false`}},
		{"memory_query", map[string]any{"results": []any{map[string]any{"output": "R", "meta": map[string]any{"matches": []any{"m"}, "span_ids": []any{"s1"}}}}},
			map[string]string{"rendered": `"R"`, "results": `["m"]`, "span_ids": `["s1"]`}},
		{"memory_tag", map[string]any{"results": []any{map[string]any{"output": "T", "success": true}}},
			map[string]string{"rendered": `"T"`, "success": `true`, "results": `[{"output": "T", "success": true}]`}},
		{"memory_kg_assert", map[string]any{"assertion_ids": []any{"x"}, "count": int64(1), "ok": true},
			map[string]string{"assertion_ids": `["x"]`, "count": `1`, "ok": `true`}},
		{"memory_kg_resolve", map[string]any{"candidates": []any{"c"}, "count": int64(1), "ok": true, "warnings": []any{"w"}},
			map[string]string{"candidates": `["c"]`, "count": `1`, "ok": `true`, "warnings": `["w"]`}},
		{"on_event", map[string]any{"payload": map[string]any{"p": int64(1)}, "event_id": "e1", "name": "ping"},
			map[string]string{"payload": `{"p": 1}`, "event_id": `"e1"`, "name": `"ping"`, "event": `{"event_id": "e1", "name": "ping", "payload": {"p": 1}}`}},
		{"on_schedule", map[string]any{"scheduled_for": "2026-01-01T00:00:00+00:00", "ready": true},
			map[string]string{"timestamp": `"2026-01-01T00:00:00+00:00"`, "ready": `true`}},
		{"call_tool", map[string]any{"mode": "approval_required", "results": []any{}},
			map[string]string{"success": `false`, "result": `"Tool execution not completed (mode=approval_required)"`}},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			out, _ := (&step{}).mapEffect(&node{ID: "n", Type: c.typ}, c.raw, map[string]any{"_pending_effect": true}).(map[string]any)
			if _, has := out["_pending_effect"]; has {
				t.Errorf("the placeholder _pending_effect is kept")
			}
			for pin, want := range c.want {
				if got := jsonOf(out[pin]); got != jsonOf(mustJSON(t, want)) {
					t.Errorf("%s: pin %s = %s, want %s", c.typ, pin, got, want)
				}
			}
		})
	}
}

// jsonOf is v as compact canonical JSON text (for table comparisons).
func jsonOf(v any) string {
	b, _ := pyjson.Marshal(v, pyjson.Style{SortKeys: true})
	return string(b)
}

// Spec §5.5: "if raw.output is an object containing result: pin output =
// raw.output.result, child_output = raw.output"; Quirk Q6: a child
// on_flow_end pin named output is shadowed — the parent's output pin
// receives the entire child output object.
func TestSpec55_SubflowOutputResultAndShadowing(t *testing.T) {
	child := func(pin string) string {
		return `{"id":"child","entryNode":"s","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"` + pin + `","type":"any"}],"pinDefaults":{"` + pin + `":"R"}}}],
 "edges":[{"source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"}]}`
	}
	parent := `{"id":"parent","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"sub","type":"subflow","data":{"subflowId":"child","inputs":[{"id":"exec-in","type":"execution"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"output","type":"any"},{"id":"child_output","type":"any"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"out","type":"any"},{"id":"whole","type":"any"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
  {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
  {"source":"sub","sourceHandle":"output","target":"end","targetHandle":"out"},
  {"source":"sub","sourceHandle":"child_output","target":"end","targetHandle":"whole"}]}`
	whole := `{"success": true, "PIN": "R"}`
	for pin, wantOut := range map[string]string{"result": `"R"`, "output": strings.ReplaceAll(whole, "PIN", "output")} {
		_, st := runFlows(t, []string{parent, child(pin)}, nil, nil, nil)
		if st.Status != durable.RunCompleted {
			t.Fatalf("child pin %s: status %s (%s)", pin, st.Status, st.Error)
		}
		if jsonOf(st.Output["out"]) != jsonOf(mustJSON(t, wantOut)) {
			t.Errorf("child pin %s: output pin = %s, want %s", pin, jsonOf(st.Output["out"]), wantOut)
		}
		if w := strings.ReplaceAll(whole, "PIN", pin); jsonOf(st.Output["whole"]) != jsonOf(mustJSON(t, w)) {
			t.Errorf("child pin %s: child_output = %s, want %s", pin, jsonOf(st.Output["whole"]), w)
		}
	}
}

// llmRun runs start -> llm (declared input pins = keys of defaults) ->
// end and returns the run and the payload the llm_call handler received.
func llmRun(t *testing.T, defaults map[string]any, cfg map[string]any) (*durable.RunState, map[string]any) {
	t.Helper()
	in := []string{"exec-in:exec"}
	for k := range defaults {
		in = append(in, k+":any")
	}
	llm := rsNode("llm", "llm_call", in, []string{"exec-out:exec", "response:string"},
		map[string]any{"pinDefaults": defaults, "effectConfig": cfg})
	sc := &scripted{results: []any{map[string]any{"content": "x"}}}
	_, st := startRunHandled(t, rsFlow("f", "start", []map[string]any{rvStart(), llm, rvEnd("end", nil, nil)},
		"start.exec-out>llm.exec-in", "llm.exec-out>end.exec-in"), CompileOptions{},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, map[string]any{})
	if st.Status != durable.RunCompleted || len(sc.payloads) != 1 {
		t.Fatalf("status %s (%s), llm calls %d", st.Status, st.Error, len(sc.payloads))
	}
	return st, sc.payloads[0]
}

// Spec §5.4.1: with exactly one of provider/model set the call runs
// without provider/model (host defaults); docs/visualflow.md: the
// placeholder error becomes a #FALLBACK entry in _flow_warnings.
func TestSpec541_OneOfProviderModelRunsWithDefaults(t *testing.T) {
	st, p := llmRun(t, map[string]any{"prompt": "hi"}, map[string]any{"provider": "openai"})
	for _, k := range []string{"provider", "model"} {
		if v, has := p[k]; has {
			t.Errorf("payload.%s = %v, want it absent", k, v)
		}
	}
	warns, _ := st.Vars["_flow_warnings"].([]any)
	found := false
	for _, w := range warns {
		if s, _ := w.(string); strings.HasPrefix(s, "#FALLBACK") && strings.Contains(s, providerModelError) {
			found = true
		}
	}
	if !found {
		t.Errorf("_flow_warnings = %s, want a #FALLBACK entry with %q", jsonText(t, warns), providerModelError)
	}
}

// Spec §5.4.1: provider/model come from the provider (or provider_text)
// and model (or model_text) pins when strings, else from the config.
func TestSpec541_ProviderTextAndModelTextPins(t *testing.T) {
	_, p := llmRun(t, map[string]any{"prompt": "hi", "provider_text": "lmstudio", "model_text": "qwen"},
		map[string]any{"provider": "cfgp", "model": "cfgm"})
	if p["provider"] != "lmstudio" || p["model"] != "qwen" {
		t.Fatalf("payload provider %v model %v, want lmstudio / qwen from the *_text pins", p["provider"], p["model"])
	}
}

// Spec §5.4.3: use_session_attachments (when specified) becomes
// params.include_session_attachments_index of the llm_call payload.
func TestSpec543_UseSessionAttachmentsParam(t *testing.T) {
	_, p := llmRun(t, map[string]any{"prompt": "hi", "use_session_attachments": true}, map[string]any{})
	params, _ := p["params"].(map[string]any)
	if params["include_session_attachments_index"] != true {
		t.Fatalf("payload params = %s, want include_session_attachments_index true", jsonText(t, params))
	}
}

// Spec §5.1 step 1: for a generic effect node "inputKey is ignored" (base
// input = bus), so the prompt comes from the bus, not the named var.
func TestSpec51_EffectNodeIgnoresInputKey(t *testing.T) {
	start := rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "prompt:string"}, nil)
	ask := rsNode("ask", "ask_user", []string{"exec-in:exec"}, []string{"exec-out:exec", "response:any"},
		map[string]any{"inputKey": "other"})
	_, st := startRunWith(t, rsFlow("f", "start", []map[string]any{start, ask}, "start.exec-out>ask.exec-in"), CompileOptions{},
		map[string]any{"prompt": "from-bus", "other": map[string]any{"prompt": "from-inputKey"}})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s (%s), want waiting", st.Status, st.Error)
	}
	if st.Waiting.Prompt != "from-bus" {
		t.Fatalf("wait prompt = %q, want from-bus", st.Waiting.Prompt)
	}
}

// Spec §5.7 (wait_event): "A null event_key makes the effect fail".
func TestSpec57_WaitEventNullKeyFails(t *testing.T) {
	w := rsNode("w", "wait_event", []string{"exec-in:exec", "event_key:string"}, []string{"exec-out:exec", "event_data:any"},
		map[string]any{"pinDefaults": map[string]any{"event_key": nil}})
	_, st := startRunWith(t, rsFlow("f", "start", []map[string]any{rvStart(), w}, "start.exec-out>w.exec-in"), CompileOptions{}, map[string]any{})
	if st.Status != durable.RunFailed {
		t.Fatalf("status %s (wait %+v), want failed", st.Status, st.Waiting)
	}
}

// Spec §5.5: the child workflow id is subflowId|flowId|workflowId|
// workflow_id; an object on a forwarded `input` pin is the base of the
// child vars (not nested), the other forwarded pins are added to it, and
// the effect is start_subworkflow with async and wait true.
func TestSpec55_WorkflowIDAliasAndInputPinBase(t *testing.T) {
	sub := rsNode("sub", "subflow", []string{"exec-in:exec", "input:object", "extra:string"}, []string{"exec-out:exec", "output:any"},
		map[string]any{"workflow_id": "child", "pinDefaults": map[string]any{"input": map[string]any{"a": int64(1)}, "extra": "e"}})
	flow := rsFlow("f", "start", []map[string]any{rvStart(), sub, rvEnd("end", nil, nil)}, "start.exec-out>sub.exec-in", "sub.exec-out>end.exec-in")
	sc := &scripted{results: []any{map[string]any{"output": nil}}}
	startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sc.handler()}, map[string]any{})
	if len(sc.payloads) == 0 {
		t.Fatal("no start_subworkflow effect")
	}
	p := sc.payloads[0]
	if p["workflow_id"] != "child" || p["async"] != true || p["wait"] != true {
		t.Errorf("payload = %s, want workflow_id child, async and wait true", jsonText(t, p))
	}
	if got := jsonOf(p["vars"]); got != jsonOf(map[string]any{"a": int64(1), "extra": "e"}) {
		t.Errorf("child vars = %s, want {a: 1, extra: e}", got)
	}
}

// With both a vars and an input object pin, vars is the child's base
// (§5.5 "base := resolved.vars if object, else resolved.input"), and
// neither object is forwarded under its own name: taking input first
// would start the child with the other pin's keys.
func TestSpec55_VarsPinWinsOverInputAsBase(t *testing.T) {
	sub := rsNode("sub", "subflow", []string{"exec-in:exec", "vars:object", "input:object"}, []string{"exec-out:exec", "output:any"},
		map[string]any{"subflowId": "child", "pinDefaults": map[string]any{"vars": map[string]any{"v": int64(1)}, "input": map[string]any{"i": int64(2)}}})
	flow := rsFlow("f", "start", []map[string]any{rvStart(), sub, rvEnd("end", nil, nil)}, "start.exec-out>sub.exec-in", "sub.exec-out>end.exec-in")
	sc := &scripted{results: []any{map[string]any{"output": nil}}}
	startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sc.handler()}, map[string]any{})
	if len(sc.payloads) == 0 {
		t.Fatal("no start_subworkflow effect")
	}
	if got := jsonOf(sc.payloads[0]["vars"]); got != jsonOf(map[string]any{"v": int64(1)}) {
		t.Errorf("child vars = %s, want {v: 1}", got)
	}
}
