package visualflow

import "testing"

// An empty extra object is not sent in a media output spec (spec §6.11:
// extra only when a non-empty object), so providers never get "extra": {}.
func TestMediaEmptyExtraIsNotSent(t *testing.T) {
	p, err := mediaPayload("generate_image", map[string]any{"prompt": "fox", "extra": map[string]any{}}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := p["output"].(map[string]any)
	if v, has := spec["extra"]; has {
		t.Fatalf("output.extra = %#v, want absent for an empty object", v)
	}
}

// A data: URL source is recognised case-insensitively (spec §6.11 media
// items): "DATA:image/png;base64,..." is sent as a url, not as an artifact
// id.
func TestMediaUppercaseDataURLIsURL(t *testing.T) {
	src := "DATA:image/png;base64,AAAA"
	p, err := mediaPayload("edit_image", map[string]any{"prompt": "blue", "image_artifact": src}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	media, _ := p["media"].([]any)
	if len(media) != 1 {
		t.Fatalf("media = %s, want one source item", jsonText(t, media))
	}
	if item, _ := media[0].(map[string]any); item["url"] != src {
		t.Fatalf("source item = %s, want url %q", jsonText(t, item), src)
	}
}
