package visualflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// fzEffectTypes are the generic effect node types (catalogue effectTypes),
// sorted so that a fuzzer byte selects one deterministically.
var fzEffectTypes = func() []string {
	out := make([]string, 0, len(effectTypes))
	for t := range effectTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}()

// fzDecodeObject reads fuzzed text as a JSON object the way the stores
// hand values back (pyjson: numbers as json.Number); nil when it is not one.
func fzDecodeObject(s string) map[string]any {
	m, err := pyjson.DecodeObject([]byte(s))
	if err != nil {
		return nil
	}
	return m
}

// fzPinsAndConfig decodes a target's pins and node config; ok is false
// when the pins are not a JSON object (the input is not a node's), and a
// config that is not one reads as empty.
func fzPinsAndConfig(pinsText, cfgText string) (in, cfg map[string]any, ok bool) {
	in, cfg = fzDecodeObject(pinsText), fzDecodeObject(cfgText)
	if in == nil {
		return nil, nil, false
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	return in, cfg, true
}

// fzCanon is the canonical (sorted keys) JSON text of v.
func fzCanon(v any) ([]byte, error) {
	return pyjson.Marshal(v, pyjson.Style{SortKeys: true})
}

// fzCheckTypes reports the first value of v whose Go type the stores do
// not handle.
func fzCheckTypes(v any, path string) error {
	switch x := v.(type) {
	case nil, bool, string, int64, float64, json.Number:
		return nil
	case []any:
		for i, e := range x {
			if err := fzCheckTypes(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for k, e := range x {
			if err := fzCheckTypes(e, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: Go type %T is not a JSON value the stores handle", path, v)
}

// fzHasNonFinite reports whether v holds a float NaN or infinity.
func fzHasNonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	case []any:
		return slices.ContainsFunc(x, fzHasNonFinite)
	case map[string]any:
		for _, e := range x {
			if fzHasNonFinite(e) {
				return true
			}
		}
	}
	return false
}

// fzMutate changes every object and array of v in place: a payload that
// shares one with its inputs then changes them too.
func fzMutate(v any) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			fzMutate(e)
			x[i] = "\x00fz-mutated"
		}
	case map[string]any:
		for k, e := range x {
			fzMutate(e)
			x[k] = "\x00fz-mutated"
		}
		x["\x00fz-added"] = true
	}
}

// fzBuild runs the compiler's payload step of an effect node directly:
// buildPayload, then (llm_call) the context injection runEffect applies.
func fzBuild(typ string, in, cfg, vars map[string]any) (map[string]any, error) {
	data := map[string]any{}
	if cfg != nil {
		data["effectConfig"] = cfg
	}
	n := &node{ID: "fx", Type: typ, Data: data, effectType: effectTypes[typ], handler: handlerOf(typ)}
	s := &step{ctx: context.Background(), p: &program{}, run: &durable.RunState{RunID: "r1"}, vars: vars}
	p, err := s.buildPayload(n, in)
	if err != nil {
		return nil, err
	}
	if n.effectType == durable.EffectLLMCall {
		s.injectContext(p)
	}
	return p, nil
}

var fzMediaTask = map[string][2]string{
	"generate_image": {"image", "image_generation"}, "edit_image": {"image", "image_edit"}, "image_to_image": {"image", "image_edit"},
	"upscale_image": {"image", "image_upscale"}, "image_upscale": {"image", "image_upscale"},
	"generate_video": {"video", "text_to_video"}, "text_to_video": {"video", "text_to_video"}, "image_to_video": {"video", "image_to_video"},
	"generate_voice": {"voice", "tts"}, "generate_music": {"music", "music_generation"}, "transcribe_audio": {"text", "transcription"},
}

// fzSpecRules checks the mapping rules of the spec (§5.4.1, §6.8, §6.9,
// §6.11) that hold for any input.
func fzSpecRules(t *testing.T, typ string, in, cfg, p map[string]any) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: "+format+"\npins %s\nconfig %s\npayload %s", append(append([]any{typ}, args...), fzText(in), fzText(cfg), fzText(p))...)
	}
	isStr := func(v any) bool { _, ok := v.(string); return ok }
	if tk, ok := fzMediaTask[typ]; ok {
		if p["system_prompt"] != "" || !reflect.DeepEqual(p["tools"], []any{}) || !reflect.DeepEqual(p["params"], map[string]any{}) || !isStr(p["prompt"]) {
			fail("media payload frame is not {prompt:str, system_prompt:\"\", tools:[], params:{}}")
		}
		spec, _ := p["output"].(map[string]any)
		if spec["modality"] != tk[0] || spec["task"] != tk[1] {
			fail("output modality/task = %v/%v, want %v", spec["modality"], spec["task"], tk)
		}
		if typ != "transcribe_audio" {
			f, _ := spec["format"].(string)
			if f == "" || f != strings.ToLower(f) {
				fail("output.format %#v is not a non-blank lower-cased text", spec["format"])
			}
		} else if p["prompt"] == "" {
			fail("transcribe_audio prompt is blank, want the default")
		}
		for _, k := range []string{"width", "height", "seed", "steps", "fps", "num_frames", "sample_rate", "num_inference_steps", "quantize", "count"} {
			if v, ok := spec[k]; ok {
				switch x := v.(type) {
				case int64:
				case json.Number:
					if _, err := x.Int64(); err == nil || strings.ContainsAny(string(x), ".eE") {
						fail("output.%s = json.Number %q, not a big int", k, x)
					}
				default:
					fail("output.%s = %#v, not an int", k, v)
				}
			}
		}
		if c, ok := spec["count"].(int64); ok && c < 1 {
			fail("output.count %d < 1", c)
		}
		for _, k := range []string{"guidance_scale", "guidance_2", "flow_shift", "speed", "duration_s", "bpm", "softness", "temperature", "strength"} {
			if v, ok := spec[k]; ok {
				if x, isF := v.(float64); !isF || math.IsNaN(x) {
					fail("output.%s = %#v, not a float (NaN dropped)", k, v)
				}
			}
		}
		if m, ok := p["media"]; ok {
			if _, isList := m.([]any); !isList {
				fail("media %#v is not a list", m)
			}
		}
		return
	}
	switch typ {
	case "ask_user":
		if _, has := in["prompt"]; !has && p["prompt"] != "Please respond:" {
			fail("prompt default not applied")
		}
		if _, ok := p["allow_free_text"].(bool); !ok {
			fail("allow_free_text not a bool")
		}
	case "answer_user":
		if !isStr(p["message"]) || !slices.Contains([]any{"message", "warning", "error"}, p["level"]) {
			fail("message/level not normalised")
		}
	case "wait_event":
		if _, has := in["event_key"]; !has && p["wait_key"] != "default" {
			fail("wait_key default not applied")
		}
		if _, ok := p["allow_free_text"].(bool); !ok {
			fail("allow_free_text not a bool")
		}
		if cs, has := p["choices"]; has {
			for _, c := range cs.([]any) {
				if s, ok := c.(string); !ok || strings.TrimSpace(s) == "" {
					fail("choice %#v is not a non-blank text", c)
				}
			}
		}
	case "listen_voice":
		if s, _ := p["wait_key"].(string); s == "" {
			fail("wait_key blank")
		}
		if s, _ := p["prompt"].(string); s == "" {
			fail("prompt blank")
		}
		if p["allow_free_text"] != true {
			fail("allow_free_text not true")
		}
	case "tool_calls", "call_tool":
		calls, ok := p["tool_calls"].([]any)
		if !ok {
			fail("tool_calls not a list")
		}
		for _, c := range calls {
			if _, ok := c.(map[string]any); !ok {
				fail("tool call %#v not an object", c)
			}
		}
		if typ == "call_tool" && len(calls) > 1 {
			fail("call_tool sends %d calls", len(calls))
		}
		if at, has := p["allowed_tools"]; has {
			for _, x := range at.([]any) {
				if s, ok := x.(string); !ok || s == "" || s != strings.TrimSpace(s) {
					fail("allowed tool %#v not a trimmed non-blank text", x)
				}
			}
		}
	case "model_residency":
		if s, _ := p["operation"].(string); s == "" {
			fail("operation blank")
		}
	case "memory_query":
		if _, ok := p["limit_spans"].(int64); !ok || p["return"] != "both" {
			fail("limit_spans/return wrong")
		}
	case "memory_rehydrate":
		if _, ok := p["span_ids"].([]any); !ok || !slices.Contains([]any{"after_summary", "after_system", "end"}, p["placement"]) {
			fail("span_ids/placement wrong")
		}
	case "memory_note", "memory_tag":
		if _, ok := p["tags"].(map[string]any); !ok {
			fail("tags not an object")
		}
	case "wait_until":
		if !isStr(p["until"]) {
			fail("until not a text")
		}
	case "llm_call":
		params, _ := p["params"].(map[string]any)
		if _, ok := params["temperature"].(float64); !ok {
			fail("params.temperature not a float")
		}
		if v, ok := params["seed"]; ok {
			if i, isInt := v.(int64); !isInt || i < 0 {
				fail("params.seed %#v not an int >= 0", v)
			}
		}
		if v, ok := params["max_output_tokens"]; ok {
			if i, isInt := v.(int64); !isInt || i <= 0 {
				fail("params.max_output_tokens %#v not an int > 0", v)
			}
		}
		if _, ok := p["include_context"].(bool); !ok {
			fail("include_context not a bool")
		}
		_, hp := p["provider"]
		_, hm := p["model"]
		if hp != hm {
			fail("provider and model not both set or both unset")
		}
		_, hasMsgs := p["messages"]
		if !hasMsgs && !isStr(p["prompt"]) {
			fail("no messages and prompt not a text")
		}
		tools, ok := p["tools"].([]any)
		if !ok {
			fail("tools not a list")
		}
		for _, x := range tools {
			tm, _ := x.(map[string]any)
			if s, _ := tm["name"].(string); s == "" || s != strings.TrimSpace(s) {
				fail("tool %#v has no trimmed name", x)
			}
		}
	}
}

func fzText(v any) string {
	b, err := fzCanon(v)
	if err != nil {
		return fmt.Sprintf("<%v: %#v>", err, v)
	}
	return string(b)
}

func fzSeedEffectPayload(f *testing.F) {
	seeds := []struct{ pins, cfg string }{
		{`{}`, `{}`},
		{`{"prompt":"hi","choices":["a"," ",3]}`, `{"allowFreeText":0}`},
		{`{"prompt":"a fox","width":512,"height":"768.5","seed":100000000000000000000,"count":0,"seeds":"1, 2,3","lora_adapters":"[{\"a\":1},{}]","extra":{"k":[1]}}`, `{"format":" PNG ","image_provider":" p ","image_model":"m"}`},
		{`{"image_artifact":{"$artifact":"a","x":[1]},"mask":"https://x/y.png","strength":"inf","guidance_scale":"nan"}`, `{}`},
		{`{"text":"hello","speed":1e308,"quality":"hd","tts_provider":"x"}`, `{"format":3}`},
		{`{"music_backend":" x "}`, `{}`},
		{`{"audio_artifact":"  art-1 ","temperature":"1e400","duration_s":-1}`, `{"sttProvider":"w"}`},
		{`{"tool_calls":"[{\"name\":\"t\",\"arguments\":{\"a\":[1,2]}},5]","allowed_tools":[" a ",null,""]}`, `{"allowedTools":["b"]}`},
		{`{"tool_call":{"name":"t"},"allowed_tools":null,"allowedTools":["x"]}`, `{}`},
		{`{"content":"note","tags":{"a":"b"},"sources":{"s":[1]},"keep_in_context":"yes"}`, `{"keepInContext":true}`},
		{`{"query":"q","limit":"2.5","tags":{"t":["x"]},"usernames":[" u ",1],"since":{"d":1}}`, `{}`},
		{`{"span_ids":["s1",{"x":1}],"placement":" end ","max_messages":[1]}`, `{}`},
		{`{"assertions":[{"s":1},2],"attributes_defaults":{"a":[]},"allow_custom_predicates":true}`, `{}`},
		{`{"max_input_tokens":"1e19","min_score":"-inf","limit":9223372036854775808}`, `{}`},
		{`{"max_candidates":1e300,"include_semantic":true,"label":" x "}`, `{}`},
		{`{"prompt":"p","system":"s","tools":[{"name":" t ","parameters":{"a":{}}},{"name":""}],"temperature":"nan","seed":9223372036854775807,"max_out_tokens":"12","provider":" o ","model":"m","context":{"messages":[{"role":"system","content":"x"},{"role":"user","content":[1]}],"attachments":[" a ",{"$artifact":"b"},3]},"resp_schema":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}}}`, `{"include_context":true,"output":{"x":[1]}}`},
		{`{"prompt":"p","include_context":1,"use_session_attachments":"true","memory":{"a":1},"thinking":" high "}`, `{"tools":["x"," "],"temperature":0.1}`},
		{`{"resp_schema":{"$ref":" abstractsemantics:x"}}`, `{}`},
		{`{"duration":"1e300"}`, `{"durationType":"minutes"}`},
		{`{"duration":"2026-01-01T00:00:00Z"}`, `{"durationType":"timestamp"}`},
		{`{"operation":"  ","timeout_s":"inf","options":{"a":[1]},"pin":"","required":null}`, `{"pin":false,"apiKey":" k "}`},
		{`{"wait_key":0,"language":" fr ","max_duration_s":"Infinity"}`, `{"sttModel":"w"}`},
		{`{"message":{"a":1},"level":" WARN "}`, `{}`},
		{`{"scale":"2x","resolution":"4X","vae_tiling":"off","image_artifact":"/tmp/x.png","quantize":1e20}`, `{}`},
		{`{"num_frames":"-9.9e18","fps":"1_000","frames":2,"image":"data:image/png;base64,AA=="}`, `{}`},
	}
	for i, s := range seeds {
		for j := range fzEffectTypes {
			if (i+j)%4 == 0 || i < 2 {
				f.Add(uint8(j), s.pins, s.cfg)
			}
		}
	}
	// each type at least once with the seed whose pins it reads
	want := map[string]int{"ask_user": 1, "generate_image": 2, "edit_image": 3, "generate_voice": 4, "generate_music": 5,
		"transcribe_audio": 6, "tool_calls": 7, "call_tool": 8, "memory_note": 9, "memory_query": 10, "memory_rehydrate": 11,
		"memory_kg_assert": 12, "memory_kg_query": 13, "memory_kg_resolve": 14, "llm_call": 15, "wait_until": 18,
		"model_residency": 20, "listen_voice": 21, "answer_user": 22, "upscale_image": 23, "image_to_video": 24}
	for typ, i := range want {
		f.Add(uint8(slices.Index(fzEffectTypes, typ)), seeds[i].pins, seeds[i].cfg)
	}
	f.Add(uint8(slices.Index(fzEffectTypes, "llm_call")), seeds[16].pins, seeds[16].cfg)
	f.Add(uint8(slices.Index(fzEffectTypes, "llm_call")), seeds[17].pins, seeds[17].cfg)
	f.Add(uint8(slices.Index(fzEffectTypes, "wait_until")), seeds[19].pins, seeds[19].cfg)
}

// FuzzEffectPayloadBuild builds, for the effect node type the fuzzer
// picks, its payload from fuzzed pins and effectConfig (decoded as the
// stores decode), and checks: only store JSON types; an encode/decode
// round trip changes nothing (a NaN/infinity is allowed only as the
// commit-time refusal of docs/compatibility.md); building twice, and from
// deep copies, gives the same canonical JSON; the pins, config and run
// vars are not changed, also when the payload is mutated afterwards (no
// shared map or slice); the spec's mapping rules.
func FuzzEffectPayloadBuild(f *testing.F) {
	fzSeedEffectPayload(f)
	f.Fuzz(func(t *testing.T, sel uint8, pinsText, cfgText string) {
		in, cfg, ok := fzPinsAndConfig(pinsText, cfgText)
		if !ok {
			return
		}
		typ := fzEffectTypes[int(sel)%len(fzEffectTypes)]
		vars := map[string]any{"context": map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": "sys"}, map[string]any{"role": "user", "content": "u"}},
			"attachments": []any{map[string]any{"$artifact": "c1"}}}}
		inBefore, err1 := fzCanon(in)
		cfgBefore, err2 := fzCanon(cfg)
		varsBefore, _ := fzCanon(vars)
		if err1 != nil || err2 != nil {
			return // not storable input (the stores refuse it first)
		}
		inCopy, cfgCopy := pyjson.CloneObject(in), pyjson.CloneObject(cfg)

		done := make(chan struct{})
		var p1, p2, p3 map[string]any
		var e1, e2, e3 error
		go func() {
			defer close(done)
			p1, e1 = fzBuild(typ, in, cfg, vars)
			p2, e2 = fzBuild(typ, in, cfg, pyjson.CloneObject(vars))
			p3, e3 = fzBuild(typ, inCopy, cfgCopy, pyjson.CloneObject(vars))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: payload build hangs\npins %s\nconfig %s", typ, pinsText, cfgText)
		}
		if (e1 == nil) != (e2 == nil) || (e1 == nil) != (e3 == nil) {
			t.Fatalf("%s: errors differ between builds: %v / %v / %v", typ, e1, e2, e3)
		}
		if e1 != nil {
			if strings.TrimSpace(e1.Error()) == "" || e1.Error() != e2.Error() {
				t.Fatalf("%s: unclear or unstable error %q / %q", typ, e1, e2)
			}
			return
		}
		if err := fzCheckTypes(p1, "payload"); err != nil {
			t.Fatalf("%s: %v\npins %s\nconfig %s", typ, err, inBefore, cfgBefore)
		}
		b1, err := fzCanon(p1)
		if err != nil {
			if !fzHasNonFinite(p1) {
				t.Fatalf("%s: payload does not encode: %v\npins %s\nconfig %s", typ, err, inBefore, cfgBefore)
			}
			// Documented: a float NaN/infinity is refused at commit with its
			// path named (FuzzEffectPayloadRun checks the run fails).
		} else {
			dec, err := pyjson.Decode(b1)
			if err != nil {
				t.Fatalf("%s: payload text does not decode: %v\n%s", typ, err, b1)
			}
			if b, _ := fzCanon(dec); !bytes.Equal(b, b1) {
				t.Fatalf("%s: round trip changes the payload\nbefore %s\nafter  %s", typ, b1, b)
			}
			if norm, err := pyjson.NormalizeObject(p1); err != nil || !reflect.DeepEqual(any(norm), dec) {
				t.Fatalf("%s: normalised payload differs from its decoded text (err %v)\n%s", typ, err, b1)
			}
			sb2, _ := fzCanon(p2)
			sb3, _ := fzCanon(p3)
			if typ != "wait_until" || cfg["durationType"] == "timestamp" { // relative deadlines read the clock
				if !bytes.Equal(b1, sb2) || !bytes.Equal(b1, sb3) {
					t.Fatalf("%s: nondeterministic payload\n1 %s\n2 %s\n3 %s", typ, b1, sb2, sb3)
				}
			}
		}
		if b, _ := fzCanon(in); !bytes.Equal(b, inBefore) {
			t.Fatalf("%s: building changed the pins\nbefore %s\nafter  %s", typ, inBefore, b)
		}
		if b, _ := fzCanon(cfg); !bytes.Equal(b, cfgBefore) {
			t.Fatalf("%s: building changed the config\nbefore %s\nafter  %s", typ, cfgBefore, b)
		}
		// The only run-vars write a build makes is llm_call's #FALLBACK
		// warning (provider or model alone, §5.4.1).
		if w, ok := vars["_flow_warnings"]; ok {
			if typ != "llm_call" {
				t.Fatalf("%s: building wrote warnings %v", typ, w)
			}
			delete(vars, "_flow_warnings")
		}
		if b, _ := fzCanon(vars); !bytes.Equal(b, varsBefore) {
			t.Fatalf("%s: building changed the run vars\nbefore %s\nafter  %s", typ, varsBefore, b)
		}
		fzSpecRules(t, typ, in, cfg, p1)
		fzMutate(p1)
		if b, _ := fzCanon(in); !bytes.Equal(b, inBefore) {
			t.Fatalf("%s: payload shares a map/slice with the pins: mutating it changed them\nbefore %s\nafter  %s", typ, inBefore, b)
		}
		if b, _ := fzCanon(cfg); !bytes.Equal(b, cfgBefore) {
			t.Fatalf("%s: payload shares a map/slice with the config: mutating it changed it\nbefore %s\nafter  %s", typ, cfgBefore, b)
		}
		if b, _ := fzCanon(vars); !bytes.Equal(b, varsBefore) {
			t.Fatalf("%s: payload shares a map/slice with the run vars\nbefore %s\nafter  %s", typ, varsBefore, b)
		}
	})
}

// fzRecorder is a handler that records the payload it receives and
// completes with an empty object.
type fzRecorder struct {
	payloads []map[string]any
	types    []durable.EffectType
}

func (r *fzRecorder) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		r.payloads = append(r.payloads, pyjson.CloneObject(req.Effect.Payload))
		r.types = append(r.types, req.Effect.Type)
		return runtime.Completed(map[string]any{}), nil
	}}
}

// FuzzEffectPayloadRun compiles on_flow_start → node → on_flow_end with
// the fuzzed pins as pin defaults and the fuzzed effectConfig, ticks it on
// the memory store with a recording handler for every effect type, and
// checks: the one effect the handler sees has the catalogue's type and
// the payload the direct build gives (after the runtime's normalisation;
// tool call ids aside); the run completes, or fails with an error naming
// the node; it never stays running.
func FuzzEffectPayloadRun(f *testing.F) {
	fzSeedEffectPayload(f)
	f.Fuzz(func(t *testing.T, sel uint8, pinsText, cfgText string) {
		in, cfg, ok := fzPinsAndConfig(pinsText, cfgText)
		if !ok {
			return
		}
		if _, err := fzCanon(in); err != nil {
			return
		}
		if _, err := fzCanon(cfg); err != nil {
			return
		}
		typ := fzEffectTypes[int(sel)%len(fzEffectTypes)]
		if typ == "wait_until" || typ == "wait_event" || typ == "listen_voice" || typ == "ask_user" {
			// waits are answered by the runtime's builtin handlers; the
			// direct target covers their payloads
			return
		}
		defaults, _ := fzCanon(in)
		config, _ := fzCanon(cfg)
		flow := fmt.Sprintf(`{"id":"fx","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"fx","type":%q,"data":{"inputs":[{"id":"exec-in","type":"execution"}],
   "outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":%s,"effectConfig":%s}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"fx","targetHandle":"exec-in"},
 {"source":"fx","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"}]}`, typ, defaults, config)
		doc, err := pyjson.DecodeObject([]byte(flow))
		if err != nil {
			t.Fatalf("flow text: %v", err)
		}
		wf, err := Compile(doc, CompileOptions{})
		if err != nil {
			if !strings.Contains(err.Error(), "fx") {
				t.Fatalf("%s: compile error does not name the node: %v", typ, err)
			}
			return
		}
		rec := &fzRecorder{}
		handlers := map[durable.EffectType]runtime.Handler{}
		for _, et := range effectTypes {
			handlers[et] = rec.handler()
		}
		rt := newTestRuntime(t, memory.New(), handlers, wf)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatalf("%s: tick: %v", typ, err)
		}
		switch st.Status {
		case durable.RunCompleted:
		case durable.RunFailed:
			if !strings.Contains(st.Error, "fx") {
				t.Fatalf("%s: run failed with an error that does not name the node: %q", typ, st.Error)
			}
		default:
			t.Fatalf("%s: run left %s (error %q)\npins %s\nconfig %s", typ, st.Status, st.Error, defaults, config)
		}
		direct, derr := fzBuild(typ, pyjson.CloneObject(in), pyjson.CloneObject(cfg), map[string]any{})
		if derr != nil {
			if st.Status != durable.RunFailed || len(rec.payloads) != 0 {
				t.Fatalf("%s: direct build fails (%v) but the run is %s with %d effects", typ, derr, st.Status, len(rec.payloads))
			}
			return
		}
		if _, err := fzCanon(direct); err != nil {
			if st.Status != durable.RunFailed || len(rec.payloads) != 0 {
				t.Fatalf("%s: payload not storable (%v) but the run is %s with %d effects", typ, err, st.Status, len(rec.payloads))
			}
			return
		}
		if len(rec.payloads) != 1 {
			t.Fatalf("%s: handler saw %d effects, want 1 (status %s, error %q)", typ, len(rec.payloads), st.Status, st.Error)
		}
		if rec.types[0] != effectTypes[typ] {
			t.Fatalf("%s: effect type %s, catalogue promises %s", typ, rec.types[0], effectTypes[typ])
		}
		got := rec.payloads[0]
		delete(got, "type")
		delete(got, "resume_to_node")
		if typ == "tool_calls" || typ == "call_tool" {
			delete(got, "tool_calls")
			delete(direct, "tool_calls")
		}
		gb, _ := fzCanon(got)
		db, _ := fzCanon(direct)
		if !bytes.Equal(gb, db) {
			t.Fatalf("%s: handler payload differs from the direct mapping\nhandler %s\ndirect  %s", typ, gb, db)
		}
	})
}

// FuzzMediaIntFloatFields puts one fuzzed number literal (as the stores
// decode it: a json.Number) or numeric text on an int field and a float
// field of a media node, and checks the spec's int(float(x)) and float(x)
// (§6.11): the int is Python's int(float(x)) when that fits an int64,
// and a value past int64 is left out (documented in docs/visualflow.md,
// "Big integers in int(float(x)) settings"); the float is float(x), NaN
// left out; never another value.
func FuzzMediaIntFloatFields(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "7.9", "-7.9", "1e3", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "9.2233720368547748e18", "100000000000000000000", "1e400",
		"-1e400", "NaN", "Infinity", "1E-400", "0.5e1", "123456789012345678901234567890"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Add(" 1_000 ", true)
	f.Add("inf", true)
	f.Fuzz(func(t *testing.T, lit string, asText bool) {
		var v any
		if asText {
			v = lit
		} else {
			d, err := pyjson.Decode([]byte(lit))
			if err != nil {
				return
			}
			if _, ok := d.(json.Number); !ok {
				return
			}
			v = d
		}
		in := map[string]any{"width": v, "guidance_scale": v, "prompt": "p"}
		p, err := fzBuild("generate_image", in, map[string]any{}, map[string]any{})
		if err != nil {
			t.Fatalf("generate_image with width %#v: %v", v, err)
		}
		spec := p["output"].(map[string]any)
		// Python's float(x): the encoder's own reading of the literal.
		fv, ferr := toFloatForTest(v)
		w, hasW := spec["width"]
		switch {
		case ferr != nil || math.IsNaN(fv) || math.IsInf(fv, 0) || v == "":
			if hasW {
				t.Fatalf("width %#v (float() fails or is not finite) gave %#v", v, w)
			}
		case math.Trunc(fv) >= 9.223372036854775807e18 || math.Trunc(fv) < -9.223372036854775808e18:
			if hasW {
				t.Fatalf("width %#v past int64 gave %#v (documented as left out)", v, w)
			}
		default:
			if w != int64(math.Trunc(fv)) {
				t.Fatalf("width %#v: got %#v, want int(float()) = %d", v, w, int64(math.Trunc(fv)))
			}
		}
		g, hasG := spec["guidance_scale"]
		switch {
		case ferr != nil || math.IsNaN(fv):
			if hasG {
				t.Fatalf("guidance_scale %#v gave %#v, want it left out", v, g)
			}
		default:
			if gf, ok := g.(float64); !ok || (gf != fv && !(math.IsNaN(gf) && math.IsNaN(fv))) {
				t.Fatalf("guidance_scale %#v: got %#v, want float() = %v", v, g, fv)
			}
		}
	})
}

// toFloatForTest is Python's float() for the values FuzzMediaIntFloatFields
// makes, computed independently of pyval for numbers: a json.Number
// literal through strconv (NaN/Infinity literals as Python reads them),
// a text through pyval (its own tests pin the string grammar).
func toFloatForTest(v any) (float64, error) {
	if n, ok := v.(json.Number); ok {
		switch string(n) {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		if !strings.ContainsAny(string(n), ".eE") {
			// an int literal: Python's float(int) raises past the float range
			bi, ok := new(big.Int).SetString(string(n), 10)
			if !ok {
				return 0, fmt.Errorf("bad literal")
			}
			f, _ := new(big.Float).SetInt(bi).Float64() // exact, then rounded once
			if math.IsInf(f, 0) {
				return 0, fmt.Errorf("int too large to convert to float")
			}
			return f, nil
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, err
		}
		return f, nil
	}
	return pyval.ToFloat(v)
}
