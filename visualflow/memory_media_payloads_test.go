package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Payload builders of the §6.8 memory/KG nodes and §6.11 media nodes on
// inputs exercising the aliases, fallbacks and normalisations the spec
// tables list (memory_rehydrate span_id fallback and placement,
// memory_kg_assert triples/items and single object, memory_kg_resolve
// camelCase aliases and bool-only include_semantic, memory_query list
// cleaning, edit_image source/mask items, image_to_video ignoring
// strength, generate_voice `quality` alias, generate_music bools and
// non-empty plans, upscale_image resolution forms and vae_tiling from
// config, transcribe_audio audio items and default prompt). Expected
// payloads were computed with the reference handlers of
// visualflow_compiler/visual/executor.py (_create_memory_*_handler,
// _create_*_image/_video/_voice/_music/_transcribe_audio_handler) on the
// same inputs.
func TestMemoryMediaPayloadsMatchReference(t *testing.T) {
	t.Parallel()
	cases := []struct{ typ, in, cfg, want string }{
		{"memory_rehydrate", "{\"span_id\": \"s1\", \"placement\": \" end \", \"max_messages\": \"5\", \"recall_level\": \" deep \"}", "{}", "{\"max_messages\": \"5\", \"placement\": \"end\", \"recall_level\": \"deep\", \"span_ids\": [\"s1\"]}"},
		{"memory_rehydrate", "{\"span_ids\": null, \"span_id\": [\"a\", \"b\"], \"placement\": \"top\"}", "{}", "{\"placement\": \"after_summary\", \"span_ids\": [\"a\", \"b\"]}"},
		{"memory_kg_assert", "{\"assertions\": null, \"triples\": {\"subject\": \"ex:a\", \"predicate\": \"rdf:type\", \"object\": \"ex:B\"}, \"span_id\": \"  sp \", \"attributes_defaults\": {}, \"allow_custom_predicates\": \"true\", \"scope\": \" session \"}", "{}", "{\"assertions\": [{\"object\": \"ex:B\", \"predicate\": \"rdf:type\", \"subject\": \"ex:a\"}], \"scope\": \"session\", \"span_id\": \"sp\"}"},
		{"memory_kg_assert", "{\"items\": [{\"subject\": \"s\"}, \"x\", null, {\"subject\": \"t\"}], \"attributes_defaults\": {\"confidence\": 0.5}, \"allow_custom_predicates\": false, \"owner_id\": \"  \"}", "{}", "{\"allow_custom_predicates\": false, \"assertions\": [{\"subject\": \"s\"}, {\"subject\": \"t\"}], \"attributes_defaults\": {\"confidence\": 0.5}}"},
		{"memory_kg_resolve", "{\"label\": \" Ada \", \"includeSemantic\": true, \"include_semantic\": null, \"minScore\": \"0.25\", \"maxCandidates\": null, \"limit\": \"7.9\", \"expected_type\": \" \", \"owner_id\": 3}", "{}", "{\"include_semantic\": true, \"label\": \"Ada\", \"max_candidates\": 7, \"min_score\": 0.25}"},
		{"memory_kg_resolve", "{\"label\": \"x\", \"include_semantic\": \"yes\", \"max_candidates\": true}", "{}", "{\"label\": \"x\"}"},
		{"memory_query", "{\"query\": \"sky\", \"limit\": null, \"usernames\": [\" bob \", \"\", 3, \"al\"], \"locations\": \"paris\", \"tags\": {\"topic\": \"x\"}, \"tags_mode\": \" any \", \"since\": 0, \"until\": null, \"scope\": \" all \", \"recall_level\": \"\"}", "{}", "{\"limit_spans\": 10, \"query\": \"sky\", \"return\": \"both\", \"scope\": \"all\", \"since\": 0, \"tags\": {\"topic\": \"x\"}, \"tags_mode\": \"any\", \"usernames\": [\"bob\", \"al\"]}"},
		{"edit_image", "{\"text\": \"make it blue\", \"image_artifact\": {\"$artifact\": \"a1\", \"purpose\": \"ref\"}, \"mask\": \"m1\", \"strength\": \"0.4\", \"provider\": \"openai\", \"model\": \"gpt\"}", "{\"image_provider\": \"local\"}", "{\"media\": [{\"$artifact\": \"a1\", \"purpose\": \"ref\", \"type\": \"image\"}, {\"$artifact\": \"m1\", \"role\": \"mask\", \"type\": \"image\"}], \"output\": {\"format\": \"png\", \"modality\": \"image\", \"provider\": \"local\", \"strength\": 0.4, \"task\": \"image_edit\"}, \"params\": {}, \"prompt\": \"make it blue\", \"system_prompt\": \"\", \"tools\": []}"},
		{"image_to_video", "{\"prompt\": \"waves\", \"source_image\": \"https://x/y.png\", \"strength\": 0.9, \"frames\": \"41\", \"flowShift\": \"3\", \"video_provider\": \"wan\"}", "{}", "{\"media\": [{\"role\": \"source\", \"type\": \"image\", \"url\": \"https://x/y.png\"}], \"output\": {\"flow_shift\": 3.0, \"format\": \"mp4\", \"modality\": \"video\", \"num_frames\": 41, \"provider\": \"wan\", \"task\": \"image_to_video\"}, \"params\": {}, \"prompt\": \"waves\", \"system_prompt\": \"\", \"tools\": []}"},
		{"generate_voice", "{\"prompt\": \"hello\", \"text\": \"\", \"quality\": \" hq \", \"provider_voice\": \"kokoro\", \"speed\": \"1.25\", \"voice\": \" af \"}", "{}", "{\"output\": {\"format\": \"wav\", \"modality\": \"voice\", \"provider\": \"kokoro\", \"quality_preset\": \"hq\", \"speed\": 1.25, \"task\": \"tts\", \"voice\": \"af\"}, \"params\": {}, \"prompt\": \"hello\", \"system_prompt\": \"\", \"tools\": []}"},
		{"generate_music", "{\"prompt\": \"jazz\", \"instrumental\": false, \"planning\": \"no\", \"auto_lyrics\": null, \"composition_plan\": {\"sections\": []}, \"positive_styles\": [], \"negative_styles\": [\"metal\"], \"duration\": \"30\", \"sampleRate\": \"44100.0\"}", "{\"enhance_prompt\": \"on\"}", "{\"output\": {\"composition_plan\": {\"sections\": []}, \"duration_s\": 30.0, \"enhance_prompt\": true, \"format\": \"wav\", \"instrumental\": false, \"modality\": \"music\", \"negative_styles\": [\"metal\"], \"planning\": false, \"sample_rate\": 44100, \"task\": \"music_generation\"}, \"params\": {}, \"prompt\": \"jazz\", \"system_prompt\": \"\", \"tools\": []}"},
		{"upscale_image", "{\"image_artifact\": \"~/in.png\", \"resolution\": \" 2X \"}", "{\"softness\": \"0.25\", \"vaeTiling\": \"off\"}", "{\"media\": [{\"file_path\": \"~/in.png\", \"role\": \"source\", \"type\": \"image\"}], \"output\": {\"format\": \"png\", \"modality\": \"image\", \"resolution\": \"2X\", \"softness\": 0.25, \"task\": \"image_upscale\", \"vae_tiling\": false}, \"params\": {}, \"prompt\": \"\", \"system_prompt\": \"\", \"tools\": []}"},
		{"upscale_image", "{\"image_artifact\": \"a\", \"resolution\": \"0x\"}", "{\"resolution\": \"512\"}", "{\"media\": [{\"$artifact\": \"a\", \"role\": \"source\", \"type\": \"image\"}], \"output\": {\"format\": \"png\", \"modality\": \"image\", \"task\": \"image_upscale\"}, \"params\": {}, \"prompt\": \"\", \"system_prompt\": \"\", \"tools\": []}"},
		{"upscale_image", "{\"image_artifact\": \"a\", \"resolution\": 3.7}", "{}", "{\"media\": [{\"$artifact\": \"a\", \"role\": \"source\", \"type\": \"image\"}], \"output\": {\"format\": \"png\", \"modality\": \"image\", \"resolution\": 3, \"task\": \"image_upscale\"}, \"params\": {}, \"prompt\": \"\", \"system_prompt\": \"\", \"tools\": []}"},
		{"transcribe_audio", "{\"audio\": \" a-1 \", \"provider_voice\": \"whisper\", \"temperature\": 0}", "{\"format\": \"json\"}", "{\"media\": [{\"$artifact\": \"a-1\", \"type\": \"audio\"}], \"output\": {\"format\": \"json\", \"modality\": \"text\", \"provider\": \"whisper\", \"task\": \"transcription\", \"temperature\": 0.0}, \"params\": {}, \"prompt\": \"Transcribe this audio.\", \"system_prompt\": \"\", \"tools\": []}"},
		{"transcribe_audio", "{\"audio_artifact\": \"/tmp/x.wav\", \"prompt\": \" names: Ada \"}", "{}", "{\"media\": [\"/tmp/x.wav\"], \"output\": {\"modality\": \"text\", \"prompt\": \"names: Ada\", \"task\": \"transcription\"}, \"params\": {}, \"prompt\": \"names: Ada\", \"system_prompt\": \"\", \"tools\": []}"},
	}
	for _, tc := range cases {
		in, err := pyjson.DecodeObject([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pyjson.DecodeObject([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		want, err := pyjson.Decode([]byte(tc.want))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if tc.typ[:7] == "memory_" {
			got = memoryPayload(tc.typ, in, cfg)
		} else if got, err = mediaPayload(tc.typ, in, cfg); err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.in, err)
			continue
		}
		if g, w := jsonText(t, got), jsonText(t, want); g != w {
			t.Errorf("%s in=%s cfg=%s\npayload %s\nwant    %s", tc.typ, tc.in, tc.cfg, g, w)
		}
	}
}
