package artifact_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// The expected values below are what Python's
// _artifact_safe_metadata_value and build_artifact_descriptor_payload
// (abstractruntime storage/artifacts.py) give for the same inputs.

func TestSafeMetadataValueRedactsCredentialKeys(t *testing.T) {
	in := map[string]any{
		"token":                "t",  // exact
		"Token ":               "t",  // exact once trimmed and lowered; the key is kept as written
		"client_secret":        "c",  // exact
		"API-Key":              "k",  // fragment api-key
		"x_api_key":            "k",  // fragment api_key
		"authorization_header": "a",  // fragment authorization
		"private_key_pem":      "p",  // fragment private_key
		"my_password":          "p",  // word password
		"a.token.b":            "t",  // word token
		"session-token":        "t",  // word token
		"secret":               0,    // a falsy value is still redacted ...
		"password":             "",   // ... but "" and null are kept
		"refresh_token":        nil,  //
		"pass_word":            "ok", // no word "password"
		"secrets":              "ok", // "secrets" is not "secret"
		"tokenizer":            "ok", // not the word "token"
		"\uff34oken":           "ok", // full-width T: lowered "ｔoken", whose ASCII word is "oken"
		"nested":               []any{map[string]any{"bearer_token": "b", "model": "m"}},
	}
	want := map[string]any{
		"token": "[redacted]", "Token ": "[redacted]", "client_secret": "[redacted]",
		"API-Key": "[redacted]", "x_api_key": "[redacted]", "authorization_header": "[redacted]",
		"private_key_pem": "[redacted]", "my_password": "[redacted]", "a.token.b": "[redacted]",
		"session-token": "[redacted]", "secret": "[redacted]", "password": "", "refresh_token": nil,
		"pass_word": "ok", "secrets": "ok", "tokenizer": "ok", "\uff34oken": "ok",
		"nested": []any{map[string]any{"bearer_token": "[redacted]", "model": "m"}},
	}
	if got := artifact.SafeMetadataValue(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestSafeMetadataValueBoundsSizeAndDepth(t *testing.T) {
	long := strings.Repeat("é", 12001) // counted in characters, not bytes
	media := strings.Repeat("A", 2049)
	list := make([]any, 121)
	for i := range list {
		list[i] = i
	}
	wide := map[string]any{}
	for i := range 161 {
		wide[strings.Repeat("k", 1+i/26)+string(rune('a'+i%26))] = i
	}
	deep := any("x")
	for range 7 {
		deep = map[string]any{"a": deep}
	}
	called := false
	in := map[string]any{
		"text":     long,
		"exact":    strings.Repeat("é", 12000),
		"data":     media,
		"DATA ":    media,                     // the key is compared trimmed and lowered
		"audio":    strings.Repeat("A", 2048), // at the bound: kept
		"prompt":   media,                     // not an inline-media key
		"raw":      []byte("abc"),
		"list":     list,
		"wide":     wide,
		"deep":     deep,
		"callback": func() { called = true },
		"token":    func() {}, // a credential key wins over the callable rule
	}
	got := artifact.SafeMetadataValue(in).(map[string]any)

	if s := got["text"].(string); s != strings.Repeat("é", 12000)+"#TRUNCATION" {
		t.Errorf("text: %d characters, ends %q", len([]rune(s)), s[len(s)-20:])
	}
	if got["exact"] != in["exact"] {
		t.Error("a string of exactly 12,000 characters was changed")
	}
	redactedMedia := map[string]any{"chars": 2049, "redacted": true}
	for _, k := range []string{"data", "DATA "} {
		if !reflect.DeepEqual(got[k], redactedMedia) {
			t.Errorf("%q: got %v, want %v", k, got[k], redactedMedia)
		}
	}
	if got["audio"] != in["audio"] || got["prompt"] != media {
		t.Error("audio at the bound or a long prompt was changed")
	}
	if want := map[string]any{"bytes": 3, "redacted": true}; !reflect.DeepEqual(got["raw"], want) {
		t.Errorf("raw: got %v, want %v", got["raw"], want)
	}
	l := got["list"].([]any)
	if len(l) != 121 || l[119] != 119 || !reflect.DeepEqual(l[120], map[string]any{"truncated_items": 1}) {
		t.Errorf("list: %d items, last %v", len(l), l[len(l)-1])
	}
	w := got["wide"].(map[string]any)
	keys := pyjson.SortedKeys(wide)
	if len(w) != 161 || w["truncated_keys"] != 1 || w[keys[159]] == nil || w[keys[160]] != nil {
		t.Errorf("wide: %d members, truncated_keys %v, last kept %v, first dropped %v", len(w), w["truncated_keys"], w[keys[159]], w[keys[160]])
	}
	// "deep" is at depth 1; six "a" steps down is depth 7, past the bound:
	// the object there is replaced.
	d := got["deep"]
	for i := 0; i < 6; i++ {
		d = d.(map[string]any)["a"]
	}
	if d != "#TRUNCATION: metadata depth limit" {
		t.Errorf("at depth 7: got %v", d)
	}
	if _, ok := got["callback"]; ok || called {
		t.Errorf("a function member was kept (%v) or called (%v)", ok, called)
	}
	if got["token"] != "[redacted]" {
		t.Errorf("token holding a function: %v", got["token"])
	}
}

func TestBuildDescriptorPayload(t *testing.T) {
	gen := map[string]any{
		"prompt":          "  ",    // blank: not user content
		"text":            "hello", // recorded
		"input":           0,       // falsy: not recorded
		"negative_prompt": []any{1},
		"api_key":         "sk-1",
		"model":           "m",
	}
	d, m := artifact.BuildDescriptorPayload(artifact.DescriptorInput{
		SemanticKind:         " VOICE ",
		ContentType:          "audio/wav",
		Task:                 " TTS",
		ClassificationSource: "  ",
		SessionID:            " s1 ",
		WorkflowID:           "   ",
		RunID:                " r1 ",
		Source:               "provider",
		Producer:             map[string]any{"name": "tts", "authorization": "Bearer x"},
		Generation:           gen,
	})
	security := map[string]any{
		"redaction":                    artifact.SecurityRedaction,
		"sensitivity":                  "user_content",
		"recorded_user_content_fields": []any{"text", "negative_prompt"},
		"prompt_storage":               "descriptor_generation_bounded",
	}
	wantGen := map[string]any{"prompt": "  ", "text": "hello", "input": 0, "negative_prompt": []any{1}, "api_key": "[redacted]", "model": "m"}
	wantProducer := map[string]any{"name": "tts", "authorization": "[redacted]"}
	want := map[string]any{
		"schema": artifact.DescriptorSchema, "schema_version": artifact.DescriptorSchemaVersion,
		"semantic_kind": "voice", "render_kind": "audio", "modality": "voice", "task": "tts",
		"classification_source": "producer",
		"session_id":            "s1", "workflow_id": nil, "node_id": nil, "step_id": nil, "effect_id": nil,
		"turn_id": nil, "ledger_cursor": nil, "parent_run_id": nil, "actor_id": nil,
		"producer": wantProducer, "provenance": map[string]any{"source": "provider", "run_id": " r1 "},
		"generation": wantGen, "media": map[string]any{}, "source_refs": []any{}, "security": security,
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("descriptor:\n got  %v\n want %v", d, want)
	}
	wantMeta := map[string]any{
		"schema": artifact.MetadataSchema, "producer": wantProducer, "generation": wantGen,
		"source_refs": []any{}, "security": security,
	}
	if !reflect.DeepEqual(m, wantMeta) {
		t.Errorf("metadata:\n got  %v\n want %v", m, wantMeta)
	}
	if gen["api_key"] != "sk-1" {
		t.Error("the caller's generation map was changed")
	}
	d["generation"].(map[string]any)["model"] = "changed"
	if m["generation"].(map[string]any)["model"] != "m" {
		t.Error("descriptor and metadata share a map")
	}

	// Kinds given explicitly; modality from the render kind.
	d, _ = artifact.BuildDescriptorPayload(artifact.DescriptorInput{SemanticKind: "Image", RenderKind: " IMAGE ", ContentType: "text/plain"})
	if d["render_kind"] != "image" || d["modality"] != "image" || d["classification_source"] != "producer" {
		t.Errorf("explicit kinds: %v", d)
	}
	if sec := d["security"].(map[string]any); len(sec) != 1 || sec["redaction"] != artifact.SecurityRedaction {
		t.Errorf("no generation: security %v", sec)
	}
}

// A producer stores its artifact with the payload: the store keeps the
// producer's classification and the redacted members.
func TestDescriptorPayloadStores(t *testing.T) {
	d, m := artifact.BuildDescriptorPayload(artifact.DescriptorInput{
		SemanticKind: "image", ContentType: "image/png", NodeID: "gen1",
		Generation: map[string]any{"prompt": "a cat", "token": "secret-value"},
	})
	st := artifact.NewMemory()
	meta, err := st.Put(context.Background(), artifact.PutParams{
		Content: []byte("not really a png"), ContentType: "image/png", RunID: "run-1",
		Descriptor: d, Metadata: m,
	})
	if err != nil {
		t.Fatal(err)
	}
	desc := meta.Descriptor
	if desc.SemanticKind != "image" || desc.ClassificationSource != "producer" || desc.NodeID != "gen1" {
		t.Errorf("stored descriptor: %+v", desc)
	}
	if desc.Generation["token"] != "[redacted]" || meta.Metadata["generation"].(map[string]any)["token"] != "[redacted]" {
		t.Errorf("a credential reached the store: %v / %v", desc.Generation, meta.Metadata["generation"])
	}
	if desc.Security["sensitivity"] != "user_content" {
		t.Errorf("stored security: %v", desc.Security)
	}
}
