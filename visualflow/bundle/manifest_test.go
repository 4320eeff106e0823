package bundle

import (
	"strings"
	"testing"
)

func TestParseManifest_Aliases(t *testing.T) {
	t.Parallel()
	raw := `{"bundleFormatVersion":"1","bundleId":" demo ","createdAt":"2026-01-01",
	  "entrypoints":[{"flowId":"f1","name":null,"interfaces":["a"," ",""]}],
	  "defaultEntrypointFlowId":"f1","flows":{"f1":"flows/f1.json"}}`
	m, err := ParseManifest([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.BundleID != "demo" || m.BundleVersion != "0.0.0" || m.CreatedAt != "2026-01-01" || m.DefaultEntrypoint != "f1" {
		t.Fatalf("manifest = %+v", m)
	}
	if ep := m.Entrypoints[0]; ep.FlowID != "f1" || ep.Name != "" || len(ep.Interfaces) != 1 {
		t.Fatalf("entrypoint = %+v", ep)
	}
	if m.Metadata == nil || m.Assets == nil || m.Artifacts == nil {
		t.Fatal("maps must default to empty")
	}
}

func TestParseManifest_Errors(t *testing.T) {
	t.Parallel()
	base := func(mut func(m map[string]any)) string {
		m := fixtureManifest(fixtureOptions{ID: "b"})
		mut(m)
		return strings.TrimSpace(mustJSONNoT(m))
	}
	tests := []struct {
		name, raw, want string
	}{
		{"not json", `[`, "not a JSON object"},
		{"array", `[]`, "not a JSON object"},
		{"format version", base(func(m map[string]any) { m["bundle_format_version"] = "2" }), "unsupported bundle_format_version"},
		{"format missing", base(func(m map[string]any) { delete(m, "bundle_format_version") }), "unsupported bundle_format_version"},
		{"bundle id", base(func(m map[string]any) { m["bundle_id"] = "  " }), "bundle_id is required"},
		{"entrypoints missing", base(func(m map[string]any) { delete(m, "entrypoints") }), "entrypoints must be a non-empty array"},
		{"entrypoints empty", base(func(m map[string]any) { m["entrypoints"] = []any{} }), "entrypoints must be a non-empty array"},
		{"entrypoint not object", base(func(m map[string]any) { m["entrypoints"] = []any{"x"} }), "entrypoints[0] must be an object"},
		{"entrypoint flow id", base(func(m map[string]any) { m["entrypoints"] = []any{map[string]any{"name": "x"}} }), "entrypoints[0].flow_id is required"},
		{"entrypoint name type", base(func(m map[string]any) { m["entrypoints"] = []any{map[string]any{"flow_id": "main", "name": 3}} }), "name must be a string or null"},
		{"entrypoint interfaces", base(func(m map[string]any) {
			m["entrypoints"] = []any{map[string]any{"flow_id": "main", "interfaces": "x"}}
		}), "interfaces must be an array"},
		{"duplicate entrypoint", base(func(m map[string]any) {
			m["entrypoints"] = []any{map[string]any{"flow_id": "main"}, map[string]any{"flow_id": "main"}}
		}), "duplicate flow_id"},
		{"entrypoint without flow", base(func(m map[string]any) { m["entrypoints"] = []any{map[string]any{"flow_id": "zz"}} }), "has no entry in flows"},
		{"default entrypoint", base(func(m map[string]any) { m["default_entrypoint"] = "zz" }), "default_entrypoint \"zz\" is not an entrypoint"},
		{"flows not object", base(func(m map[string]any) { m["flows"] = []any{} }), "flows must be an object"},
		{"flows empty", base(func(m map[string]any) {
			m["flows"] = map[string]any{}
			m["entrypoints"] = []any{map[string]any{"flow_id": "main"}}
		}), "has no entry in flows"},
		{"flow path type", base(func(m map[string]any) { m["flows"] = map[string]any{"main": 1} }), "must be a path string"},
		{"flow key empty", base(func(m map[string]any) { m["flows"].(map[string]any)[""] = "flows/x.json" }), "empty key"},
		{"absolute", base(func(m map[string]any) { m["flows"] = map[string]any{"main": "/etc/passwd"} }), "absolute path"},
		{"backslash absolute", base(func(m map[string]any) { m["flows"] = map[string]any{"main": `\x.json`} }), "absolute path"},
		{"drive", base(func(m map[string]any) { m["flows"] = map[string]any{"main": "C:/x.json"} }), "drive-like"},
		{"dotdot", base(func(m map[string]any) { m["flows"] = map[string]any{"main": "flows/../../x.json"} }), "'..' segments"},
		{"dot", base(func(m map[string]any) { m["flows"] = map[string]any{"main": "./flows/x.json"} }), "'..' segments"},
		{"empty path", base(func(m map[string]any) { m["flows"] = map[string]any{"main": " "} }), "empty path"},
		{"asset path", base(func(m map[string]any) { m["assets"] = map[string]any{"logo": "../logo.png"} }), "manifest assets[\"logo\"]"},
		{"artifact path", base(func(m map[string]any) { m["artifacts"] = map[string]any{"main": "/abs"} }), "manifest artifacts[\"main\"]"},
		{"metadata type", base(func(m map[string]any) { m["metadata"] = "x" }), "metadata must be an object"},
		// Python's json.loads refuses what follows the object ("Extra data").
		{"trailing garbage", base(func(m map[string]any) {}) + " garbage", "manifest.json: trailing data"},
		{"trailing brace", base(func(m map[string]any) {}) + "}", "manifest.json: trailing data"},
		{"second object", base(func(m map[string]any) {}) + "\n{}", "manifest.json: trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseManifest([]byte(tt.raw))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		ok   bool
	}{
		{"flows/a.json", true}, {`flows\a.json`, true}, {"assets/img/x.png", true},
		{"", false}, {"/a", false}, {`\a`, false}, {"c:/a", false}, {"c:", false},
		{"a/../b", false}, {"a/./b", false}, {"..", false},
	}
	for _, tt := range tests {
		if err := CheckPath(tt.path); (err == nil) != tt.ok {
			t.Errorf("CheckPath(%q) = %v", tt.path, err)
		}
	}
}

// Whitespace may follow the object; a valid manifest parses.
func TestParseManifest_TrailingWhitespace(t *testing.T) {
	t.Parallel()
	raw := strings.TrimSpace(mustJSONNoT(fixtureManifest(fixtureOptions{ID: "b"}))) + " \r\n\t\n"
	if _, err := ParseManifest([]byte(raw)); err != nil {
		t.Fatal(err)
	}
}

// A flow file with data after its object is refused, including a closing
// brace or bracket, which Decoder.More does not report.
func TestDecodeFlow_TrailingData(t *testing.T) {
	t.Parallel()
	for _, tail := range []string{" x", "}", "]", " {}"} {
		if _, err := DecodeFlow([]byte(`{"id":"f"}` + tail)); err == nil || !strings.Contains(err.Error(), "trailing data") {
			t.Errorf("DecodeFlow with %q after the object: err = %v, want trailing data", tail, err)
		}
	}
	if _, err := DecodeFlow([]byte("{\"id\":\"f\"}\n")); err != nil {
		t.Errorf("a final newline: %v", err)
	}
}

// Manifest texts are stripped as Python's str.strip() strips them, which
// also removes the separators U+001C–U+001F (Go's unicode.IsSpace does
// not count them).
func TestParseManifest_StripsAsPython(t *testing.T) {
	t.Parallel()
	raw := `{"bundle_format_version":"1","bundle_id":"\u001fdemo\u001c","bundle_version":"\u001e1.0",
	  "entrypoints":[{"flow_id":"f1\u001d"}],"flows":{"f1":"flows/f1.json"}}`
	m, err := ParseManifest([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.BundleID != "demo" || m.BundleVersion != "1.0" || m.Entrypoints[0].FlowID != "f1" {
		t.Fatalf("manifest = %+v, want the ids stripped of U+001C–U+001F", m)
	}
}

// A null snake_case key does not hide its camelCase alias: pickOK takes
// "the first alias present with a non-null value".
func TestManifestNullSnakeCaseKeyFallsBackToCamelCaseAlias(t *testing.T) {
	m := manifestWith(fixtureOptions{ID: "x"}, map[string]any{
		"bundle_id": nil, "bundleId": "camel",
		"bundle_version": nil, "bundleVersion": "2.0.0",
	})
	got, err := ParseManifest([]byte(mustJSON(t, m)))
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	if got.BundleID != "camel" || got.BundleVersion != "2.0.0" {
		t.Fatalf("bundle_id, bundle_version = %q, %q; want the camelCase aliases camel, 2.0.0", got.BundleID, got.BundleVersion)
	}
}

// §7.2: an entrypoint description is a string (default ""); another type
// makes the manifest invalid.
func TestManifestEntrypointDescriptionMustBeString(t *testing.T) {
	m := fixtureManifest(fixtureOptions{ID: "x"})
	m["entrypoints"] = []any{map[string]any{"flow_id": "main", "description": 5}}
	if _, err := ParseManifest([]byte(mustJSON(t, m))); err == nil || !strings.Contains(err.Error(), "description must be a string") {
		t.Fatalf("ParseManifest with a numeric description: err = %v", err)
	}
	m["entrypoints"] = []any{map[string]any{"flow_id": "main", "description": nil}}
	got, err := ParseManifest([]byte(mustJSON(t, m)))
	if err != nil || got.Entrypoints[0].Description != "" {
		t.Fatalf("null description: %+v, %v; want \"\"", got.Entrypoints, err)
	}
}

// Every spelling of the default entrypoint that §7.2 accepts on read is
// read, the first one with a value winning: dropping an alias would leave
// such a bundle without its default (its first entrypoint would run).
func TestParseManifestReadsEveryDefaultEntrypointAlias(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"default_entrypoint", "defaultEntrypoint", "default_entrypoint_flow_id", "defaultEntrypointFlowId"} {
		m := fixtureManifest(fixtureOptions{ID: "b", Flows: []string{"main", "second"}})
		m["entrypoints"] = []any{map[string]any{"flow_id": "main"}, map[string]any{"flow_id": "second"}}
		delete(m, "default_entrypoint")
		m[key] = " second "
		got, err := ParseManifest([]byte(mustJSON(t, m)))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if got.DefaultEntrypoint != "second" {
			t.Errorf("%s: default entrypoint = %q, want second", key, got.DefaultEntrypoint)
		}
	}
}

// A manifest.json holding null is refused as not a JSON object, not with
// an error about a missing bundle_format_version that hides what is wrong.
func TestNullManifestIsNotAJSONObject(t *testing.T) {
	t.Parallel()
	_, err := ParseManifest([]byte("null"))
	if err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("ParseManifest(null): err = %v; want manifest.json is not a JSON object", err)
	}
}
