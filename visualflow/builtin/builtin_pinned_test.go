package builtin

import (
	"strings"
	"testing"
	"time"
)

// array_dedup with a key path (§6.7): an item whose value at the path is
// null is fingerprinted as the whole item, so items that differ elsewhere
// are all kept rather than merged as "null".
func TestArrayDedupNullKeyValueUsesItem(t *testing.T) {
	a := obj{"id": nil, "n": int64(1)}
	b := obj{"id": nil, "n": int64(2)}
	c := obj{"id": int64(7), "n": int64(3)}
	d := obj{"id": int64(7), "n": int64(4)}
	runNodeCases(t, []nodeCase{
		{name: "null key values kept apart", typ: "array_dedup", in: obj{"array": arr{a, b, c, d}, "key": "id"}, want: arr{a, b, c}},
	})
}

// get (§6.7): a path whose value is null yields the default input, as an
// empty key or a missing path does.
func TestGetNullValueYieldsDefault(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "null at path", typ: "get", in: obj{"object": obj{"a": obj{"b": nil}}, "key": "a.b", "default": "dflt"}, want: obj{"value": "dflt"}},
	})
}

// edit_json_schema (§6.7): a name required by the additions joins
// "required" only when its property was newly added; a property the base
// already had keeps the base's required list as it was.
func TestEditJSONSchemaRequiredOnlyForNewProperties(t *testing.T) {
	base := obj{"type": "object", "properties": obj{"old": obj{"type": "string"}}}
	add := obj{"properties": obj{"old": obj{"type": "number"}, "new": obj{"type": "string"}}, "required": arr{"old", "new", "ghost"}}
	want := obj{"schema": obj{
		"type":       "object",
		"properties": obj{"old": obj{"type": "string"}, "new": obj{"type": "string"}},
		"required":   arr{"new"},
	}}
	runNodeCases(t, []nodeCase{
		{name: "existing and unknown names not required", typ: "edit_json_schema", in: obj{"schema": base, "_literalValue": add}, want: want},
	})
}

// parse_json (§6.7): a Markdown fence's body runs up to the LAST ```, so a
// fence inside the JSON text (here in a string value) is kept.
func TestParseJSONFenceBodyEndsAtLastFence(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "inner fence kept", typ: "parse_json", in: obj{"text": "```json\n{\"code\": \"```\"}\n```"}, want: obj{"code": "```"}},
	})
}

// stringify_json beautify caps indent at 64 spaces (docs/visualflow.md,
// a documented bound): a larger indent renders as 64.
func TestStringifyJSONIndentCappedAt64(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "indent 100", typ: "stringify_json", in: obj{"value": arr{int64(1)}, "indent": int64(100)},
			want: "[\n" + strings.Repeat(" ", 64) + "1\n]"},
	})
}

// format_tool_results (§6.9): a primary value of exactly 160 characters
// is not clamped; only a longer one becomes 159 characters plus "…".
func TestFormatToolResultsPrimaryClampBoundary(t *testing.T) {
	exact := strings.Repeat("q", 160)
	long := strings.Repeat("q", 161)
	item := func(q string) obj {
		return obj{"name": "search", "arguments": obj{"query": q}, "success": true, "output": "ok"}
	}
	runNodeCases(t, []nodeCase{
		{name: "160 kept", typ: "format_tool_results", in: obj{"tool_results": arr{item(exact)}},
			want: "- search(" + exact + ") [SUCCESS] : ok"},
		{name: "161 clamped", typ: "format_tool_results", in: obj{"tool_results": arr{item(long)}},
			want: "- search(" + strings.Repeat("q", 159) + "…) [SUCCESS] : ok"},
	})
}

// system_datetime (§6.1): utc_offset_minutes is the floor of the offset's
// seconds / 60, as Python's // gives it: -3630 s is -61 minutes.
func TestSystemDatetimeOffsetMinutesFloor(t *testing.T) {
	fn, _ := Lookup("system_datetime")
	env := &Env{Zone: time.FixedZone("LMT", -3630), Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	out, err := fn(env, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(map[string]any)["utc_offset_minutes"]; got != int64(-61) {
		t.Fatalf("utc_offset_minutes = %v, want -61", got)
	}
}

// system_datetime's locale follows the C library's precedence: LC_ALL
// over LC_CTYPE over LANG, without the encoding suffix.
func TestSystemDatetimeLocalePrecedence(t *testing.T) {
	t.Setenv("LC_ALL", "fr_FR.UTF-8")
	t.Setenv("LC_CTYPE", "de_DE.UTF-8")
	t.Setenv("LANG", "en_US.UTF-8")
	fn, _ := Lookup("system_datetime")
	out, err := fn(&Env{Zone: time.UTC}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(map[string]any)["locale"]; got != "fr_FR" {
		t.Fatalf("locale = %v, want fr_FR (LC_ALL wins)", got)
	}
}

// IsoFormat writes a fraction only for a non-zero microsecond, as
// Python's isoformat does: nanoseconds below a microsecond (which Python's
// datetime cannot hold) write none.
func TestIsoFormatSubMicrosecond(t *testing.T) {
	if got := IsoFormat(time.Date(2026, 1, 2, 3, 4, 5, 500, time.UTC)); got != "2026-01-02T03:04:05+00:00" {
		t.Fatalf("IsoFormat = %q, want no fraction", got)
	}
}
