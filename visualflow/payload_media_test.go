package visualflow

import (
	"reflect"
	"testing"
)

// Media prompts are read pins ▸ config like every other media setting
// (spec §6.11), skipping null and "" pins, with the reference's alias
// order per node type (image/upscale: prompt; edit/video/music: prompt,
// text; voice: text, prompt). An empty pin must not hide the next alias
// or a prompt set in the node's config.
func TestMediaPromptPinsThenConfig(t *testing.T) {
	cases := []struct {
		typ  string
		in   map[string]any
		cfg  map[string]any
		want string
	}{
		{"generate_image", map[string]any{}, map[string]any{"prompt": "a red fox"}, "a red fox"},
		{"generate_image", map[string]any{"prompt": ""}, map[string]any{"prompt": "a red fox"}, "a red fox"},
		{"generate_image", map[string]any{"text": "ignored"}, map[string]any{}, ""},
		{"upscale_image", map[string]any{}, map[string]any{"prompt": "sharper"}, "sharper"},
		{"generate_music", map[string]any{"text": "calm jazz"}, map[string]any{}, "calm jazz"},
		{"generate_voice", map[string]any{"text": "", "prompt": "hello there"}, map[string]any{}, "hello there"},
		{"generate_voice", map[string]any{"text": "say this", "prompt": "not this"}, map[string]any{}, "say this"},
		{"edit_image", map[string]any{"prompt": "", "text": "make it blue"}, map[string]any{}, "make it blue"},
		{"image_to_video", map[string]any{"prompt": nil}, map[string]any{"text": "pan left"}, "pan left"},
		{"generate_video", map[string]any{"prompt": int64(0)}, map[string]any{}, ""},
	}
	for _, tc := range cases {
		p, err := mediaPayload(tc.typ, tc.in, tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if p["prompt"] != tc.want {
			t.Errorf("%s with pins %v and config %v: prompt = %#v, want %q", tc.typ, tc.in, tc.cfg, p["prompt"], tc.want)
		}
	}
}

// upscale_image sends vae_tiling when vae_tiling or vaeTiling is present
// in the pins or the config, valued pins ▸ config (a null pin does not
// shadow the config).
func TestUpscaleVaeTilingAliasAndFallback(t *testing.T) {
	cases := []struct {
		in, cfg map[string]any
		want    any
	}{
		{map[string]any{}, map[string]any{"vaeTiling": true}, true},
		{map[string]any{"vae_tiling": nil}, map[string]any{"vae_tiling": true}, true},
		{map[string]any{"vaeTiling": "off"}, map[string]any{"vae_tiling": true}, false},
		{map[string]any{"vae_tiling": nil}, map[string]any{}, false},
		{map[string]any{}, map[string]any{}, nil},
	}
	for _, tc := range cases {
		p, err := mediaPayload("upscale_image", tc.in, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := p["output"].(map[string]any)
		if spec["vae_tiling"] != tc.want {
			t.Errorf("pins %v, config %v: output.vae_tiling = %#v, want %#v", tc.in, tc.cfg, spec["vae_tiling"], tc.want)
		}
	}
}

// transcribe_audio picks its audio pins ▸ config skipping "" (an empty
// audio_artifact pin, its editor default, must not hide the audio wired
// to artifact) and sends media [] when there is none.
func TestTranscribeAudioSkipsEmptyPin(t *testing.T) {
	p, err := mediaPayload("transcribe_audio", map[string]any{"audio_artifact": "", "artifact": "abc123"}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	media, _ := p["media"].([]any)
	if len(media) != 1 {
		t.Fatalf("media = %#v, want one item for artifact abc123", p["media"])
	}
	if item, _ := media[0].(map[string]any); item["$artifact"] != "abc123" || item["type"] != "audio" {
		t.Errorf("media[0] = %#v, want {$artifact: abc123, type: audio}", media[0])
	}
	p, err = mediaPayload("transcribe_audio", map[string]any{"audio_artifact": ""}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := p["media"].([]any); !ok || len(m) != 0 {
		t.Errorf("no audio: media = %#v, want []", p["media"])
	}
}

// The node types that take input media always send a media list, empty
// when no source is given; the pure generators send none.
func TestMediaListPresence(t *testing.T) {
	for typ, want := range map[string]bool{
		"edit_image": true, "image_to_image": true, "upscale_image": true, "image_to_video": true,
		"generate_image": false, "generate_video": false, "generate_voice": false, "generate_music": false,
		"text_to_video": false, "image_upscale": true,
	} {
		p, err := mediaPayload(typ, map[string]any{}, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		m, ok := p["media"]
		if ok != want {
			t.Errorf("%s: media present %v, want %v", typ, ok, want)
		}
		if l, isList := m.([]any); want && (!isList || l == nil || len(l) != 0) {
			t.Errorf("%s: media = %#v, want []", typ, m)
		}
	}
}

// extra is sent only as a non-empty object; a list is ignored.
func TestMediaExtraOnlyObject(t *testing.T) {
	for _, typ := range []string{"generate_image", "generate_video", "generate_voice", "generate_music", "upscale_image"} {
		p, _ := mediaPayload(typ, map[string]any{"extra": []any{"x"}}, map[string]any{})
		if v, ok := p["output"].(map[string]any)["extra"]; ok {
			t.Errorf("%s with extra [x]: output.extra = %#v, want none", typ, v)
		}
		p, _ = mediaPayload(typ, map[string]any{"extra": map[string]any{"k": int64(1)}}, map[string]any{})
		if _, ok := p["output"].(map[string]any)["extra"]; !ok {
			t.Errorf("%s with extra {k: 1}: no output.extra", typ)
		}
	}
}

// generate_music's booleans are read pins ▸ config skipping "" (an
// empty pin falls back to the config), and only a non-blank string
// music_backend is refused.
func TestMusicBoolsAndBackend(t *testing.T) {
	p, err := mediaPayload("generate_music", map[string]any{"instrumental": ""}, map[string]any{"instrumental": true})
	if err != nil {
		t.Fatal(err)
	}
	if v := p["output"].(map[string]any)["instrumental"]; v != true {
		t.Errorf("empty instrumental pin, config true: output.instrumental = %#v, want true", v)
	}
	for _, backend := range []any{"  ", false, int64(1)} {
		if _, err := mediaPayload("generate_music", map[string]any{"music_backend": backend}, map[string]any{}); err != nil {
			t.Errorf("music_backend %#v: %v, want no error", backend, err)
		}
	}
	if _, err := mediaPayload("generate_music", map[string]any{"music_backend": "acestep"}, map[string]any{}); err == nil {
		t.Error("music_backend \"acestep\": no error, want the unsupported-selector error")
	}
}

// Seeds are read item by item as int(float(item)), the reference's
// _coerce_int (spec §6.11 "integers via int(float())"): "2.5", "3.0" and
// "1e3" are seeds, not a reason to drop the flow's seeds.
func TestMediaSeedsItemsAreIntOfFloat(t *testing.T) {
	cases := []struct {
		seeds any
		want  []any
	}{
		{"1, 2.5", []any{int64(1), int64(2)}},
		{[]any{"3.0", "4"}, []any{int64(3), int64(4)}},
		{"[\"1e3\"]", []any{int64(1000)}},
	}
	for _, tc := range cases {
		p, err := mediaPayload("generate_image", map[string]any{"prompt": "x", "seeds": tc.seeds}, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		got := p["output"].(map[string]any)["seeds"]
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("seeds %#v: output.seeds = %#v, want %#v", tc.seeds, got, tc.want)
		}
	}
}

// A comma-separated seeds string keeps its empty parts, which are not
// ints, so "1,2," or "1,,2" sends no seeds at all (spec §6.11 "any
// non-int → ignored entirely"), as the reference's _normalize_seed_list.
func TestMediaSeedsBlankCommaPartDropsAll(t *testing.T) {
	for _, s := range []string{"1,2,", "1,,2"} {
		p, err := mediaPayload("generate_video", map[string]any{"prompt": "x", "seeds": s}, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := p["output"].(map[string]any)["seeds"]; ok {
			t.Errorf("seeds %q: output.seeds = %#v, want no seeds (an empty part is not an int)", s, got)
		}
	}
}

// Media string settings are stripped like Python's str.strip(), which
// also removes U+001C..U+001F (strings.TrimSpace does not): an artifact id
// or provider must not carry them.
func TestMediaStripsLikePython(t *testing.T) {
	p, err := mediaPayload("edit_image", map[string]any{"prompt": "x", "image_artifact": "art-1\x1f", "image_provider": "\x1eprov"}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	media := p["media"].([]any)
	if len(media) != 1 || media[0].(map[string]any)["$artifact"] != "art-1" {
		t.Errorf("edit_image media = %#v, want one item with $artifact \"art-1\"", media)
	}
	if got := p["output"].(map[string]any)["provider"]; got != "prov" {
		t.Errorf("edit_image provider = %#v, want \"prov\"", got)
	}
}

// The media format is str(value or default).strip().lower() in the
// reference: a non-string format is stringified, not replaced by the
// default.
func TestMediaFormatNonStringIsStringified(t *testing.T) {
	p, err := mediaPayload("generate_voice", map[string]any{"text": "hi", "format": int64(3)}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p["output"].(map[string]any)["format"]; got != "3" {
		t.Errorf("format = %#v, want \"3\" (str(3))", got)
	}
}

// executor.py _create_generate_image_handler (and every media handler):
// fmt = str(_input_or_config(..., default="png") or "png").strip().lower() or "png".
// A blank-but-not-empty format pin ("  ") is returned by _input_or_config,
// stripped to "" and then replaced by the default through the trailing
// `or "png"`.
func TestMediaBlankFormatFallsBackToDefault(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{
		"generate_image": "png", "upscale_image": "png", "generate_video": "mp4",
		"generate_voice": "wav", "generate_music": "wav",
	} {
		p, err := mediaPayload(typ, map[string]any{"prompt": "x", "format": "  \t"}, map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		spec, _ := p["output"].(map[string]any)
		if got := spec["format"]; got != want {
			t.Errorf("%s: output.format = %#v, want %q", typ, got, want)
		}
	}
}

// transcribe_audio turns only an artifact id into {$artifact, type:
// "audio"}; a string starting with "/" or "~" is a path and is passed
// as-is (spec §6.11).
func TestTranscribeAudioPathsPassAsIs(t *testing.T) {
	for _, path := range []string{"/data/a.wav", "~/a.wav"} {
		p, err := mediaPayload("transcribe_audio", map[string]any{"audio_artifact": path}, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonText(t, p["media"]); got != jsonText(t, []any{path}) {
			t.Errorf("audio_artifact %q: media = %s, want [%q]", path, got, path)
		}
	}
}

// upscale_image sends resolution only as a positive int or as
// "<number>x" with a number > 0 (spec §6.11).
func TestUpscaleResolutionMustBePositive(t *testing.T) {
	for _, tc := range []struct{ v, want any }{
		{int64(2048), int64(2048)}, {"2x", "2x"}, {int64(0), nil}, {int64(-2), nil}, {"0x", nil},
	} {
		p, err := mediaPayload("upscale_image", map[string]any{"resolution": tc.v}, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p["output"].(map[string]any)["resolution"]; got != tc.want {
			t.Errorf("resolution %#v: output.resolution = %#v, want %#v", tc.v, got, tc.want)
		}
	}
}
