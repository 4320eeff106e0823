package visualflow

import "testing"

// Memory/KG effect outcome → output pin mapping (spec §5.3), as the
// reference's compiler.py _sync_effect_results_to_node_outputs does it.

// compiler.py _sync_effect_results_to_node_outputs, memory_note /
// memory_compact: the pin is _get_span_id(raw), which returns
// results[0].meta.span_id only when it is a non-blank string, stripped,
// else None.
func TestMemoryNoteSpanIDIsStrippedNonBlankString(t *testing.T) {
	t.Parallel()
	s := &step{}
	raw := func(id any) map[string]any {
		return map[string]any{"mode": "executed", "results": []any{map[string]any{"success": true, "meta": map[string]any{"span_id": id}}}}
	}
	cases := []struct {
		id   any
		want any
	}{{" sp-1 \n", "sp-1"}, {"   ", nil}, {int64(7), nil}}
	for _, tc := range cases {
		out, _ := s.mapEffect(&node{ID: "n", Type: "memory_note"}, raw(tc.id), nil).(map[string]any)
		if got := out["note_id"]; got != tc.want {
			t.Errorf("memory_note span_id %#v: note_id = %#v, want %#v", tc.id, got, tc.want)
		}
		out, _ = s.mapEffect(&node{ID: "c", Type: "memory_compact"}, raw(tc.id), nil).(map[string]any)
		if got := out["span_id"]; got != tc.want {
			t.Errorf("memory_compact span_id %#v: span_id = %#v, want %#v", tc.id, got, tc.want)
		}
	}
}

// compiler.py, memory_query and memory_tag: rendered = results[0].output
// only `if isinstance(out, str)`, else "".
func TestMemoryRenderedIsStringOnly(t *testing.T) {
	t.Parallel()
	s := &step{}
	raw := map[string]any{"mode": "executed", "results": []any{map[string]any{"success": true, "output": map[string]any{"x": int64(1)}}}}
	for _, typ := range []string{"memory_query", "memory_tag"} {
		out, _ := s.mapEffect(&node{ID: "n", Type: typ}, raw, nil).(map[string]any)
		if got, ok := out["rendered"].(string); !ok || got != "" {
			t.Errorf("%s: rendered = %#v, want \"\" (non-string output)", typ, out["rendered"])
		}
	}
}

// compiler.py, memory_rehydrate with an object outcome:
// inserted/skipped/artifacts = raw.get(...) — None when the key is
// missing, and artifacts as given (not forced to a list); 0/0/[] only for
// a non-object outcome.
func TestMemoryRehydrateObjectMissingKeysAreNull(t *testing.T) {
	t.Parallel()
	s := &step{}
	out, _ := s.mapEffect(&node{ID: "n", Type: "memory_rehydrate"}, map[string]any{"note": "nothing"}, nil).(map[string]any)
	for _, k := range []string{"inserted", "skipped", "artifacts"} {
		if v, has := out[k]; !has || v != nil {
			t.Errorf("%s = %#v (present %v), want null", k, v, has)
		}
	}
	// The non-object fallback stays 0/0/[].
	out, _ = s.mapEffect(&node{ID: "n", Type: "memory_rehydrate"}, "oops", nil).(map[string]any)
	if out["inserted"] != int64(0) || out["skipped"] != int64(0) {
		t.Errorf("non-object outcome: inserted/skipped = %#v/%#v, want 0/0", out["inserted"], out["skipped"])
	}
}

// compiler.py, memory_kg_assert / memory_kg_query / memory_kg_resolve with
// an object outcome: count = raw.get("count"), ok = raw.get("ok") — None
// when missing.
func TestMemoryKGObjectMissingCountOkAreNull(t *testing.T) {
	t.Parallel()
	s := &step{}
	for _, typ := range []string{"memory_kg_assert", "memory_kg_query", "memory_kg_resolve"} {
		out, _ := s.mapEffect(&node{ID: "n", Type: typ}, map[string]any{}, nil).(map[string]any)
		for _, k := range []string{"count", "ok"} {
			if v, has := out[k]; !has || v != nil {
				t.Errorf("%s: %s = %#v (present %v), want null", typ, k, v, has)
			}
		}
	}
}

// compiler.py, memory_kg_query with a non-object outcome: besides
// items/count/ok it sets packets [], packed_count 0,
// active_memory_text "", estimated_tokens 0, dropped 0 (spec §5.3:
// "non-object → empty/zero values").
func TestMemoryKGQueryNonObjectZeroPackingPins(t *testing.T) {
	t.Parallel()
	s := &step{}
	out, _ := s.mapEffect(&node{ID: "n", Type: "memory_kg_query"}, "failed", nil).(map[string]any)
	want := map[string]any{"packed_count": int64(0), "active_memory_text": "", "estimated_tokens": int64(0), "dropped": int64(0)}
	for k, w := range want {
		if got, has := out[k]; !has || got != w {
			t.Errorf("%s = %#v (present %v), want %#v", k, got, has, w)
		}
	}
	if l, ok := out["packets"].([]any); !ok || len(l) != 0 {
		t.Errorf("packets = %#v, want []", out["packets"])
	}
}
