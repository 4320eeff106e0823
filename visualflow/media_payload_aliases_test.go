package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §6.11: settings are "pins ▸ config" "with the aliases listed"; the
// common `guidance_scale|guidanceScale → guidance_scale` alias is the
// reference's for generate_music too. Python (visualflow_compiler/visual/
// executor.py _create_generate_music_handler):
// `guidance = _coerce_float(_input_or_config(payload, config,
// "guidance_scale", "guidanceScale"))`, so a camelCase pin or effectConfig
// key is read.
func TestMusicGuidanceScaleCamelAlias(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in, cfg map[string]any
	}{
		{"pin", map[string]any{"prompt": "jazz", "guidanceScale": 4.5}, map[string]any{}},
		{"config", map[string]any{"prompt": "jazz"}, map[string]any{"guidanceScale": "4.5"}},
	} {
		p, err := mediaPayload("generate_music", tc.in, tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		spec, _ := p["output"].(map[string]any)
		if spec["guidance_scale"] != 4.5 {
			t.Errorf("%s guidanceScale 4.5: output.guidance_scale = %#v, want 4.5", tc.name, spec["guidance_scale"])
		}
	}
}

// Spec §6.11: `seeds` is "a list of ints, or a JSON/comma-separated
// string" and `lora_adapters` "… or JSON string". Python
// (executor.py _normalize_seed_list / _normalize_lora_adapters) strips the
// text with str.strip() *before* json.loads: `text = value.strip(); …
// parsed = json.loads(text)`. str.strip() removes Unicode whitespace
// (NBSP, U+2002, U+001C..U+001F) that JSON whitespace does not include, so
// "\u00a0[1, 2]" is the list [1, 2] and "\u00a07\u00a0" is the number 7
// (not a list → no seeds), not a comma-split [7].
func TestMediaJSONTextIsStrippedFirst(t *testing.T) {
	t.Parallel()
	p, err := mediaPayload("generate_image", map[string]any{
		"prompt":        "cat",
		"seeds":         "\x1f[1, 2]",
		"lora_adapters": "\u00a0[{\"name\": \"ink\"}]",
	}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := p["output"].(map[string]any)
	if got := jsonText(t, spec["seeds"]); got != jsonText(t, []any{int64(1), int64(2)}) {
		t.Errorf(`seeds "\x1f[1, 2]": output.seeds = %s, want [1, 2]`, got)
	}
	if got := jsonText(t, spec["lora_adapters"]); got != jsonText(t, []any{map[string]any{"name": "ink"}}) {
		t.Errorf(`lora_adapters "\u00a0[{…}]": output.lora_adapters = %s, want [{"name": "ink"}]`, got)
	}
	p, err = mediaPayload("generate_video", map[string]any{"prompt": "sea", "seeds": "\u00a07\u00a0"}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ = p["output"].(map[string]any)
	if v, has := spec["seeds"]; has {
		t.Errorf(`seeds "\u00a07\u00a0" (JSON 7, not a list): output.seeds = %#v, want no seeds`, v)
	}
}

// Spec §6.11 generate_music: a music_backend value → error; §4.8: an
// exception in a generic effect node's payload building fails the run
// "with the error text". The reference's text (executor.py
// _create_generate_music_handler) is "generate_music uses
// `music_provider` as the backend selector; `music_backend` is not
// supported."; the run fails with it word for word.
func TestMusicBackendErrorText(t *testing.T) {
	t.Parallel()
	flow := rsFlow("mb", "start", []map[string]any{
		startNode(),
		rsNode("fx", "generate_music", []string{"exec-in:exec", "prompt:string", "music_backend:string"}, []string{"exec-out:exec", "music_artifact:any"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "jazz", "music_backend": "acestep"}}),
	}, "start.exec-out>fx.exec-in")
	_, st := runCapturing(t, flow, durable.EffectLLMCall, map[string]any{})
	if st.Status != durable.RunFailed {
		t.Fatalf("status %s, want failed", st.Status)
	}
	const want = "generate_music uses `music_provider` as the backend selector; `music_backend` is not supported."
	if !strings.Contains(st.Error, want) {
		t.Errorf("run error %q; want it to carry the reference text %q", st.Error, want)
	}
}
