package visualflow

import (
	"errors"
	"fmt"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// field kinds of media output specs.
const (
	fString = iota
	fInt
	fFloat
	fBool
	fObject   // non-empty object
	fNonEmpty // non-empty object or list
)

type mediaField struct {
	key     string
	kind    int
	aliases []string
}

func f(key string, kind int, aliases ...string) mediaField {
	if len(aliases) == 0 {
		aliases = []string{key}
	}
	return mediaField{key, kind, aliases}
}

var imageFields = []mediaField{
	f("size", fString), f("negative_prompt", fString), f("quality", fString), f("style", fString),
	f("width", fInt), f("height", fInt), f("seed", fInt), f("steps", fInt),
	f("guidance_scale", fFloat, "guidance_scale", "guidanceScale"),
	f("guidance_2", fFloat, "guidance_2", "guidance2", "guidanceTwo"),
	f("extra", fObject),
}

var videoFields = []mediaField{
	f("size", fString), f("negative_prompt", fString), f("width", fInt), f("height", fInt), f("seed", fInt),
	f("steps", fInt), f("fps", fInt), f("num_frames", fInt, "num_frames", "numFrames", "frames"),
	f("guidance_scale", fFloat, "guidance_scale", "guidanceScale"),
	f("guidance_2", fFloat, "guidance_2", "guidance2", "guidanceTwo"),
	f("flow_shift", fFloat, "flow_shift", "flowShift"), f("extra", fObject),
}

var voiceFields = []mediaField{
	f("voice", fString), f("profile", fString), f("instructions", fString),
	f("quality_preset", fString, "quality_preset", "qualityPreset", "quality"),
	f("provider", fString, "tts_provider", "ttsProvider", "provider_voice"),
	f("model", fString, "tts_model", "ttsModel", "model_voice"), f("speed", fFloat), f("extra", fObject),
}

var musicFields = []mediaField{
	f("lyrics", fString), f("text_planner_mode", fString), f("vocal_language", fString), f("negative_prompt", fString),
	f("keyscale", fString), f("timesignature", fString),
	f("duration_s", fFloat, "duration_s", "duration", "durationS"), f("bpm", fFloat), f("seed", fInt),
	f("sample_rate", fInt, "sample_rate", "sampleRate"),
	f("num_inference_steps", fInt, "num_inference_steps", "numInferenceSteps"), f("guidance_scale", fFloat, "guidance_scale", "guidanceScale"),
	f("instrumental", fBool), f("enhance_prompt", fBool), f("structure_prompt", fBool), f("auto_lyrics", fBool), f("planning", fBool),
	f("provider", fString, "music_provider", "musicProvider", "provider_music"),
	f("model", fString, "music_model", "musicModel", "model_music"), f("extra", fObject),
	f("composition_plan", fNonEmpty), f("positive_styles", fNonEmpty), f("negative_styles", fNonEmpty),
}

var upscaleFields = []mediaField{
	f("scale", fString), f("output_format", fString), f("seed", fInt), f("quantize", fInt), f("softness", fFloat), f("extra", fObject),
}

var transcribeFields = []mediaField{
	f("language", fString), f("prompt", fString), f("response_format", fString), f("format", fString),
	f("provider", fString, "stt_provider", "sttProvider", "provider_voice"),
	f("model", fString, "stt_model", "sttModel", "model_voice"), f("temperature", fFloat),
}

// applyFields copies the spec fields present (pins ▸ config) into spec.
func applyFields(spec, in, cfg map[string]any, fields []mediaField) {
	for _, fd := range fields {
		v := pick(in, cfg, fd.aliases...)
		if v == nil {
			continue
		}
		switch fd.kind {
		case fBool:
			spec[fd.key] = pyval.CoerceBool(v)
		case fString:
			if s := trimmed(v); s != "" {
				spec[fd.key] = s
			}
		case fInt:
			if i, ok := intOK(v); ok {
				spec[fd.key] = i
			}
		case fFloat:
			if x, ok := floatOK(v); ok {
				spec[fd.key] = x
			}
		case fObject:
			if m, ok := v.(map[string]any); ok && len(m) > 0 {
				spec[fd.key] = m
			}
		case fNonEmpty:
			switch x := v.(type) {
			case map[string]any:
				if len(x) > 0 {
					spec[fd.key] = x
				}
			case []any:
				if len(x) > 0 {
					spec[fd.key] = x
				}
			}
		}
	}
}

// mediaPayload builds the llm_call payload of a media generation node
// (§6.11). Every setting, the prompt included, is read pins ▸ config
// (pick: null and "" skipped), as the reference's _input_or_config does.
func mediaPayload(t string, in, cfg map[string]any) (map[string]any, error) {
	spec := map[string]any{}
	// media is sent by the node types that take input media, even empty.
	var media []any
	withMedia := false
	var prompt any
	// str(value or default).strip().lower() or default: a non-string value
	// is stringified, and a falsy or blank one is the default.
	format := func(def string) {
		f := ""
		if x := pick(in, cfg, "format", "response_format"); pyval.Truthy(x) {
			f = pyval.Lower(pyval.Strip(pyval.Str(x)))
		}
		if f == "" {
			f = def
		}
		spec["format"] = f
	}
	switch t {
	case "generate_image", "edit_image", "image_to_image":
		spec["modality"], spec["task"] = "image", "image_generation"
		format("png")
		applyFields(spec, in, cfg, imageFields)
		imageCommon(spec, in, cfg, "image")
		if t != "generate_image" {
			spec["task"] = "image_edit"
			if x, ok := floatOK(pick(in, cfg, "strength")); ok {
				spec["strength"] = x
			}
			withMedia = true
			if src := mediaItem(pick(in, cfg, sourceKeys...), "source"); src != nil {
				media = append(media, src)
			}
			if m := mediaItem(pick(in, cfg, "mask_artifact", "mask_image", "maskImage", "image_mask", "mask"), "mask"); m != nil {
				media = append(media, m)
			}
			prompt = pick(in, cfg, "prompt", "text")
		} else {
			prompt = pick(in, cfg, "prompt")
		}
	case "upscale_image", "image_upscale":
		spec["modality"], spec["task"] = "image", "image_upscale"
		format("png")
		applyFields(spec, in, cfg, upscaleFields)
		if r, ok := upscaleResolution(pick(in, cfg, "resolution")); ok {
			spec["resolution"] = r
		}
		// Sent when either spelling is present anywhere, valued pins ▸ config.
		_, inPins := first(in, "vae_tiling", "vaeTiling")
		_, inCfg := first(cfg, "vae_tiling", "vaeTiling")
		if inPins || inCfg {
			spec["vae_tiling"] = pyval.CoerceBool(pick(in, cfg, "vae_tiling", "vaeTiling"))
		}
		setProviderModel(spec, in, cfg, "image")
		withMedia = true
		if src := mediaItem(pick(in, cfg, sourceKeys...), "source"); src != nil {
			media = append(media, src)
		}
		prompt = pick(in, cfg, "prompt")
	case "generate_video", "text_to_video", "image_to_video":
		spec["modality"], spec["task"] = "video", "text_to_video"
		format("mp4")
		applyFields(spec, in, cfg, videoFields)
		imageCommon(spec, in, cfg, "video")
		if t == "image_to_video" {
			spec["task"] = "image_to_video"
			withMedia = true
			if src := mediaItem(pick(in, cfg, sourceKeys...), "source"); src != nil {
				media = append(media, src)
			}
		}
		prompt = pick(in, cfg, "prompt", "text")
	case "generate_voice":
		spec["modality"], spec["task"] = "voice", "tts"
		format("wav")
		applyFields(spec, in, cfg, voiceFields)
		prompt = pick(in, cfg, "text", "prompt")
	case "generate_music":
		// Only a non-blank string is a (refused) legacy backend selector.
		if trimmed(pick(in, cfg, "music_backend", "musicBackend", "backend_music")) != "" {
			// Python's text, word for word: the run fails with it (§4.8).
			return nil, errors.New("generate_music uses `music_provider` as the backend selector; `music_backend` is not supported.")
		}
		spec["modality"], spec["task"] = "music", "music_generation"
		format("wav")
		applyFields(spec, in, cfg, musicFields)
		prompt = pick(in, cfg, "prompt", "text")
	case "transcribe_audio":
		spec["modality"], spec["task"] = "text", "transcription"
		applyFields(spec, in, cfg, transcribeFields)
		audio := pick(in, cfg, "audio_artifact", "artifact", "audio")
		if s, ok := audio.(string); ok && pyval.Strip(s) != "" && !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~") {
			audio = map[string]any{"$artifact": pyval.Strip(s), "type": "audio"}
		}
		withMedia = true
		if pyval.Truthy(audio) {
			media = append(media, audio)
		}
		prompt = spec["prompt"]
		if !pyval.Truthy(prompt) {
			prompt = "Transcribe this audio."
		}
	default:
		return nil, fmt.Errorf("no payload builder for node type %q", t)
	}
	// str(prompt or ""): a falsy value (0, false, {}) is an empty prompt.
	text := ""
	if pyval.Truthy(prompt) {
		text = pyval.Str(prompt)
	}
	p := map[string]any{"prompt": text, "system_prompt": "", "tools": []any{}, "params": map[string]any{}, "output": spec}
	if withMedia {
		if media == nil {
			media = []any{}
		}
		p["media"] = media
	}
	return p, nil
}

var sourceKeys = []string{"image_artifact", "source_image", "sourceImage", "input_image", "inputImage", "image", "artifact", "file_path", "filePath", "source"}

// imageCommon adds count, seeds, lora_adapters and provider/model.
func imageCommon(spec, in, cfg map[string]any, modality string) {
	if i, ok := intOK(pick(in, cfg, "count", "n")); ok && i >= 1 {
		spec["count"] = i
	}
	if seeds, ok := parseSeeds(pick(in, cfg, "seeds")); ok {
		spec["seeds"] = seeds
	}
	if l := loraAdapters(pick(in, cfg, "lora_adapters", "loraAdapters")); l != nil {
		spec["lora_adapters"] = l
	}
	setProviderModel(spec, in, cfg, modality)
}

func setProviderModel(spec, in, cfg map[string]any, modality string) {
	prov := []string{modality + "_provider", strings.ReplaceAll(modality+"Provider", "_", ""), "provider_" + modality}
	mod := []string{modality + "_model", strings.ReplaceAll(modality+"Model", "_", ""), "model_" + modality}
	if s := trimmed(pick(in, cfg, prov...)); s != "" {
		spec["provider"] = s
	}
	if s := trimmed(pick(in, cfg, mod...)); s != "" {
		spec["model"] = s
	}
}

// parseSeeds accepts a list or a JSON/comma-separated string whose every
// item is int(float(item)), as the reference's _normalize_seed_list: any
// item that is not (a blank comma part included) drops the whole list.
func parseSeeds(v any) ([]any, bool) {
	if s, ok := v.(string); ok {
		// Stripped as Python strips (NBSP, U+001C–U+001F), which JSON does not.
		s = pyval.Strip(s)
		if parsed, err := pyval.LoadsJSON(s); err == nil {
			v = parsed
		} else {
			parts := strings.Split(s, ",")
			list := make([]any, len(parts))
			for i, part := range parts {
				list[i] = pyval.Strip(part)
			}
			v = list
		}
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	out := make([]any, 0, len(list))
	for _, x := range list {
		i, ok := intOK(x)
		if !ok {
			return nil, false
		}
		out = append(out, i)
	}
	return out, true
}

func loraAdapters(v any) []any {
	if s, ok := v.(string); ok {
		v, _ = pyval.LoadsJSON(pyval.Strip(s))
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			return []any{x}
		}
	case []any:
		var out []any
		for _, e := range x {
			if m, ok := e.(map[string]any); ok && len(m) > 0 {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func upscaleResolution(v any) (any, bool) {
	if s, ok := v.(string); ok {
		t := pyval.Strip(s)
		if num, ok := strings.CutSuffix(strings.ToLower(t), "x"); ok {
			if f, err := pyval.ToFloat(num); err == nil && f > 0 {
				return t, true
			}
			return nil, false
		}
	}
	if i, ok := positiveInt(v); ok {
		return i, true
	}
	return nil, false
}

// mediaItem converts a source/mask value into a media item (§6.11).
func mediaItem(v any, role string) any {
	switch x := v.(type) {
	case map[string]any:
		item := copyObject(x)
		if _, ok := item["type"]; !ok {
			item["type"] = "image"
		}
		_, r := item["role"]
		_, p := item["purpose"]
		_, k := item["kind"]
		if !r && !p && !k {
			item["role"] = role
		}
		return item
	case string:
		s := pyval.Strip(x)
		if s == "" {
			return nil
		}
		switch {
		case strings.HasPrefix(strings.ToLower(s), "data:"), strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
			return map[string]any{"type": "image", "role": role, "url": s}
		case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~"):
			return map[string]any{"type": "image", "role": role, "file_path": s}
		}
		return map[string]any{"type": "image", "role": role, "$artifact": s}
	}
	return nil
}
