package runtime_test

// Memory effects (MEMORY_TAG, MEMORY_QUERY, MEMORY_REHYDRATE) reading and
// writing values as Python's abstractruntime/core/runtime.py and
// memory/active_context.py do: span id digit strings through str.isdigit()
// and int(), and str() / isinstance text in the rendered recall.

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Python's _handle_memory_tag reads a digit string span_id as
// `index_hint = int(s)` and reports a miss as f"Unknown span index:
// {index_hint}", i.e. the int: "007" fails "Unknown span index: 7" (and
// "00" "Unknown span index: 0").
func TestMemoryTagDigitStringIndexErrorNamesTheInt(t *testing.T) {
	for give, want := range map[string]string{"007": "Unknown span index: 7", " 00 ": "Unknown span index: 0"} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
			step(durable.EffectMemoryTag, map[string]any{"span_id": give, "tags": map[string]any{"a": "b"}}),
		)
		if run.Status != durable.RunFailed || !strings.HasSuffix(run.Error, want) {
			t.Errorf("span_id %q: status %s, error %q; want failed ending %q (Python formats int(s))", give, run.Status, run.Error, want)
		}
	}
}

// Python reads a string span_id as an index when str.isdigit() holds
// (_handle_memory_tag: `if s.isdigit(): index_hint = int(s)`;
// ActiveContextPolicy.resolve_span_ids_from_spans for MEMORY_QUERY; and
// MEMORY_QUERY scope="all" refuses `x.strip().isdigit()` strings as
// indices). isdigit() and int() take every Unicode decimal digit, so "١"
// (ARABIC-INDIC DIGIT ONE) is index 1, as VARS_QUERY's parsePath already
// reads it.
func TestMemorySpanIDUnicodeDigitStringIsAnIndex(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_id": "١", "return": "meta"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": "١", "tags": map[string]any{"topic": "x"}}),
	)
	if run.Status != durable.RunCompleted {
		t.Fatalf("MEMORY_TAG span_id \"١\": status %s, error %q; want the first span tagged, as Python's int(\"١\") == 1", run.Status, run.Error)
	}
	noteID := metaOf(t, res(t, run, 0))["span_id"].(string)
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 || got[0] != noteID {
		t.Errorf("MEMORY_QUERY span_id \"١\": span_ids %v, want [%s] (index 1)", got, noteID)
	}

	f = memSetup(t, true)
	run = f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{"١"}, "scope": "all"}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "memory_query scope='all' requires explicit span_ids as artifact ids (no indices)") {
		t.Errorf("MEMORY_QUERY scope=all span_ids [\"١\"]: status %s, error %q; want Python's refusal of an index", run.Status, run.Error)
	}
}

// Python's _handle_memory_query reads the return mode as
// str(payload.get("return") or payload.get("return_mode") or
// "rendered").strip().lower() and fails f"Unknown memory_query return mode:
// {return_mode}", so a list or object names itself in Python's str() form
// ("['meta']", "{'a': 1}"), as the scope error does.
func TestMemoryQueryReturnModeErrorUsesPythonStr(t *testing.T) {
	for _, tc := range []struct {
		give any
		want string
	}{
		{[]any{"meta"}, "Unknown memory_query return mode: ['meta']"},
		{map[string]any{"a": int64(1)}, "Unknown memory_query return mode: {'a': 1}"},
	} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryQuery, map[string]any{"return": tc.give}),
		)
		if run.Status != durable.RunFailed || !strings.HasSuffix(run.Error, tc.want) {
			t.Errorf("return %#v: status %s, error %q; want failed ending %q", tc.give, run.Status, run.Error, tc.want)
		}
	}
}

// Python's _handle_memory_query reads connect_by as
// [str(x) for x in connect_by if isinstance(x, (str, int, float)) and
// str(x).strip()]: a boolean is an int, so true names the tag key "True";
// other values (lists, None) are dropped.
func TestMemoryQueryConnectByWritesItemsWithStr(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha first", "tags": map[string]any{"True": "v"}}),
		step(durable.EffectMemoryNote, map[string]any{"note": "middle"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "last", "tags": map[string]any{"True": "v"}}),
		step(durable.EffectMemoryQuery, map[string]any{
			"query": "alpha", "deep": false, "connected": true, "connect_by": []any{true, []any{"True"}, nil},
			"neighbor_hops": int64(-1), "return": "meta",
		}),
	)
	mustComplete(t, run)
	first := metaOf(t, res(t, run, 0))["span_id"].(string)
	last := metaOf(t, res(t, run, 2))["span_id"].(string)
	got := spanIDs(t, res(t, run, 3))
	if len(got) != 2 || got[0] != first || got[1] != last {
		t.Errorf("connect_by [true]: span_ids %v, want [%s %s] (the note sharing tag True=v)", got, first, last)
	}
}

// Python's _render_memory_query_output writes the summary line whenever
// the summary text is non-empty (`if summary: lines.append(f"    summary:
// {str(summary).strip()}")`), so a memory_summary message whose content is
// only whitespace still gives the line "    summary: ".
func TestMemoryQueryBlankSummaryLineKept(t *testing.T) {
	f := memSetup(t, true)
	vars := map[string]any{
		"context": map[string]any{"messages": []any{map[string]any{
			"role": "system", "content": "   ",
			"metadata": map[string]any{"kind": "memory_summary", "source_artifact_id": "span1"},
		}}},
		"_runtime": map[string]any{"memory_spans": []any{map[string]any{
			"kind": "conversation_span", "artifact_id": "span1", "created_at": "2026-01-01T00:00:00+00:00",
		}}},
	}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"span_id": "span1"}),
	)
	mustComplete(t, run)
	out, _ := res(t, run, 0)["output"].(string)
	if !strings.Contains(out, "\n    summary: \n") {
		t.Errorf("rendered output %q lacks Python's \"    summary: \" line for a whitespace summary", out)
	}
}

// Python's _render_memory_query_output writes "created_by:" and
// "location:" lines only for string values (`if isinstance(created_by,
// str) and str(created_by).strip()`, likewise for location), and a note's
// payload location is shown when the span's location is not a non-blank
// string: a span another writer stored with created_by 5 and location 7
// renders neither line, and a note's own location is still shown.
func TestMemoryQueryRendersOnlyStringCreatedByAndLocation(t *testing.T) {
	f := memSetup(t, true)
	vars := map[string]any{
		"_runtime": map[string]any{"memory_spans": []any{map[string]any{
			"kind": "conversation_span", "artifact_id": "span1", "created_at": "2026-01-01T00:00:00+00:00",
			"created_by": int64(5), "location": int64(7),
		}}},
	}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"span_id": "span1"}),
	)
	mustComplete(t, run)
	out, _ := res(t, run, 0)["output"].(string)
	if strings.Contains(out, "created_by: 5") || strings.Contains(out, "location: 7") {
		t.Errorf("rendered output %q has created_by/location lines for non-string values; Python writes none", out)
	}
}

// A superscript digit passes str.isdigit() but int() refuses it, so Python
// raises ValueError where it reads the id as an index: MEMORY_TAG,
// MEMORY_QUERY's index resolution and MEMORY_REHYDRATE fail the effect
// with int()'s message, while MEMORY_QUERY scope="all" (which only tests
// isdigit()) refuses it as an index.
func TestMemorySpanIDSuperscriptDigitFailsAsPythonInt(t *testing.T) {
	const want = "invalid literal for int() with base 10: '²'"
	for _, tc := range []struct {
		name string
		eff  map[string]any
		want string
	}{
		{"tag", step(durable.EffectMemoryTag, map[string]any{"span_id": "²", "tags": map[string]any{"a": "b"}}), want},
		{"query", step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{"x", " ² "}}), want},
		{"rehydrate", step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"²"}}), want},
		{"query scope all", step(durable.EffectMemoryQuery, map[string]any{"span_id": "²", "scope": "all"}),
			"memory_query scope='all' requires explicit span_ids as artifact ids (no indices)"},
	} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}), tc.eff)
		if run.Status != durable.RunFailed || !strings.HasSuffix(run.Error, tc.want) {
			t.Errorf("%s: status %s, error %q; want failed ending %q", tc.name, run.Status, run.Error, tc.want)
		}
	}
}

// A note span whose location is not a non-blank string shows the note
// payload's own location, as Python's renderer does.
func TestMemoryQueryNoteShowsPayloadLocationUnlessSpanHasOne(t *testing.T) {
	f := memSetup(t, true)
	meta, err := artifact.PutJSON(context.Background(), f.arts,
		map[string]any{"note": "alpha", "location": " Paris ", "created_at": "2026-01-01T00:00:00+00:00"},
		artifact.PutParams{Tags: map[string]string{"kind": "memory_note"}})
	if err != nil {
		t.Fatal(err)
	}
	for give, want := range map[any]string{int64(7): "    location: Paris", "  ": "    location: Paris", " Rome ": "    location: Rome"} {
		vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{map[string]any{
			"kind": "memory_note", "artifact_id": meta.ArtifactID, "created_at": "2026-01-01T00:00:00+00:00", "location": give,
		}}}}
		run := f.runSteps(t, runtime.StartParams{Vars: vars},
			step(durable.EffectMemoryQuery, map[string]any{"span_id": meta.ArtifactID}),
		)
		mustComplete(t, run)
		out, _ := res(t, run, 0)["output"].(string)
		if strings.Count(out, "    location: ") != 1 || !strings.Contains(out, want+"\n") && !strings.HasSuffix(out, want) {
			t.Errorf("span location %#v: output %q, want one line %q", give, out, want)
		}
	}
}
