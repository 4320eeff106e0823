package visualflow

import "testing"

// memory_tag sends its scope stripped and drops a blank one, as the
// reference's `str(scope or "").strip() or None` does: a stray space
// must not name a scope the memory handler does not know.
func TestMemoryTagScopeStripped(t *testing.T) {
	p := memoryPayload("memory_tag", map[string]any{"span_id": "s1", "scope": " session "}, map[string]any{})
	if p["scope"] != "session" {
		t.Errorf("scope \" session \": payload scope = %#v, want \"session\"", p["scope"])
	}
	p = memoryPayload("memory_tag", map[string]any{"span_id": "s1", "scope": "   "}, map[string]any{})
	if v, ok := p["scope"]; ok {
		t.Errorf("blank scope: payload scope = %#v, want no scope key", v)
	}
}

// memory_query's limit_spans is Python int(limit), 10 when absent, null
// or unparsable (spec §6.8): int("2.5") fails, int(True) is 1 and a float
// is truncated.
func TestMemoryQueryLimitIsPythonInt(t *testing.T) {
	cases := []struct {
		limit any
		want  int64
	}{
		{"2.5", 10},
		{true, 1},
		{"7", 7},
		{3.9, 3},
		{nil, 10},
		{"many", 10},
	}
	for _, tc := range cases {
		p := memoryPayload("memory_query", map[string]any{"query": "q", "limit": tc.limit}, map[string]any{})
		if got, _ := p["limit_spans"].(int64); got != tc.want {
			t.Errorf("limit %#v: limit_spans = %#v, want %d", tc.limit, p["limit_spans"], tc.want)
		}
	}
}

// memory_kg_query's limit is int(limit) for a non-null, non-bool value
// and is dropped when that fails; only max_input_tokens (and
// memory_kg_resolve's max_candidates) go through int(float()).
func TestMemoryKgQueryLimitIsPythonInt(t *testing.T) {
	for _, limit := range []any{"5.5", true} {
		p := memoryPayload("memory_kg_query", map[string]any{"limit": limit}, map[string]any{})
		if v, ok := p["limit"]; ok {
			t.Errorf("limit %#v: payload limit = %#v, want none", limit, v)
		}
	}
	p := memoryPayload("memory_kg_query", map[string]any{"limit": "5", "max_input_tokens": "5.5"}, map[string]any{})
	if p["limit"] != int64(5) || p["max_input_tokens"] != int64(5) {
		t.Errorf("limit \"5\", max_input_tokens \"5.5\": payload %v, want limit 5 and max_input_tokens 5", p)
	}
}

// memory_note passes its content through unconverted (the reference's
// input_data.get("content", "")): the runtime's str(note or "") then
// treats 0 or false as no note, where converting here would store "0".
func TestMemoryNoteContentPassedRaw(t *testing.T) {
	for _, content := range []any{int64(0), false, "hello"} {
		p := memoryPayload("memory_note", map[string]any{"content": content}, map[string]any{})
		if p["note"] != content {
			t.Errorf("content %#v: note = %#v, want it unchanged", content, p["note"])
		}
	}
	if p := memoryPayload("memory_note", map[string]any{}, map[string]any{}); p["note"] != "" {
		t.Errorf("no content: note = %#v, want \"\"", p["note"])
	}
}

// Memory string fields are stripped like Python's str.strip(), which also
// removes U+001C..U+001F: a scope of "\x1f" is blank (not sent) and
// "\x1chome\x1d" is "home".
func TestMemoryStripsLikePython(t *testing.T) {
	q := memoryPayload("memory_query", map[string]any{"query": "q", "scope": "\x1f", "recall_level": "\x1c"}, map[string]any{})
	if v, ok := q["scope"]; ok {
		t.Errorf("memory_query scope \"\\x1f\" sent as %#v; want not sent", v)
	}
	if v, ok := q["recall_level"]; ok {
		t.Errorf("memory_query recall_level \"\\x1c\" sent as %#v; want not sent", v)
	}
	n := memoryPayload("memory_note", map[string]any{"content": "c", "location": "\x1chome\x1d"}, map[string]any{})
	if n["location"] != "home" {
		t.Errorf("memory_note location = %#v, want \"home\"", n["location"])
	}
}

// memory_note's config fallback reads keep_in_context and, when that is
// null, keepInContext (the reference checks config.get(...) is None), so
// a null keep_in_context in config does not hide keepInContext: true.
func TestMemoryNoteKeepInContextNullConfigFallsBack(t *testing.T) {
	p := memoryPayload("memory_note", map[string]any{"content": "c"}, map[string]any{"keep_in_context": nil, "keepInContext": true})
	if p["keep_in_context"] != true {
		t.Errorf("keep_in_context = %#v, want true (null keep_in_context falls back to keepInContext)", p["keep_in_context"])
	}
}

// memory_query's query is input_data.get("query", ""): a present null pin
// is recorded as null in the payload (ledger, effect identity), not "".
func TestMemoryQueryPresentNullQueryKept(t *testing.T) {
	p := memoryPayload("memory_query", map[string]any{"query": nil}, map[string]any{})
	if v, ok := p["query"]; !ok || v != nil {
		t.Errorf("query = %#v, want null (key present with null)", v)
	}
}

// memory_tag sends merge only when the pin is present, coerced (spec
// §6.8 "merge? (coerced, only if key present)"): without the pin the
// memory handler's own default applies.
func TestMemoryTagMergeOnlyWhenPresent(t *testing.T) {
	cases := []struct {
		in   map[string]any
		want any // nil for no merge key
	}{
		{map[string]any{"span_id": "s1"}, nil},
		{map[string]any{"span_id": "s1", "merge": true}, true},
		{map[string]any{"span_id": "s1", "merge": "false"}, false},
		{map[string]any{"span_id": "s1", "merge": nil}, false},
	}
	for _, tc := range cases {
		p := memoryPayload("memory_tag", tc.in, map[string]any{})
		got, has := p["merge"]
		if tc.want == nil {
			if has {
				t.Errorf("pins %v: payload merge = %#v, want no merge key", tc.in, got)
			}
			continue
		}
		if !has || got != tc.want {
			t.Errorf("pins %v: payload merge = %#v (present %v), want %v", tc.in, got, has, tc.want)
		}
	}
}
