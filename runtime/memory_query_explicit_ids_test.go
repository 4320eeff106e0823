package runtime_test

// MEMORY_QUERY with explicit span ids (span_id / span_ids): the ids select
// the spans and no filter applies, as in Python core/runtime.py
// _handle_memory_query, whose filtering branch is taken only when no
// explicit ids are given.

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// With explicit span ids, since/until are never read: Python wraps them
// in a TimeRange only in the branch taken without ids (`else: time_range
// = TimeRange(start=str(since) …)`), so {"span_ids": [id], "since": "not a
// time"} completes and returns the span instead of failing on a time
// range it would not apply.
func TestMemoryQueryExplicitIDsIgnoreUnparsableTimeRange(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "hello"}),
	)
	mustComplete(t, run)
	id := metaOf(t, res(t, run, 0))["span_id"].(string)
	for _, k := range []string{"since", "until"} {
		run2 := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"_runtime": map[string]any{"memory_spans": spansOf(run)}}},
			step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{id}, k: "not a time", "return": "meta"}),
		)
		if run2.Status != durable.RunCompleted {
			t.Errorf("%s=\"not a time\" with explicit span_ids: run %s %q; want completed (Python never reads %s when ids are given)",
				k, run2.Status, run2.Error, k)
			continue
		}
		if got := spanIDs(t, res(t, run2, 0)); len(got) != 1 || got[0] != id {
			t.Errorf("%s with explicit span_ids: span_ids %v, want [%s]", k, got, id)
		}
	}
}

// Explicit span ids bypass every MEMORY_QUERY filter and limit (spec
// §3.8): Python core/runtime.py _handle_memory_query takes the ids (resolved by
// resolve_span_ids_from_spans: given order, first occurrence kept) and
// never calls filter_spans_from_run, so a query, tags, authors,
// locations, a (valid) time range excluding the spans and limit_spans=1
// change nothing. meta.matches follow the selection order.
func TestMemoryQueryExplicitIDsBypassFilters(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{ActorID: "bob"},
		step(durable.EffectMemoryNote, map[string]any{"note": "first", "tags": map[string]any{"topic": "a"}}),
		step(durable.EffectMemoryNote, map[string]any{"note": "second", "tags": map[string]any{"topic": "b"}}),
	)
	mustComplete(t, run)
	a := metaOf(t, res(t, run, 0))["span_id"].(string)
	b := metaOf(t, res(t, run, 1))["span_id"].(string)
	run2 := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"_runtime": map[string]any{"memory_spans": spansOf(run)}}},
		step(durable.EffectMemoryQuery, map[string]any{
			"span_ids": []any{b, a, b}, "query": "nothing like this", "tags": map[string]any{"topic": "zzz"},
			"authors": []any{"carol"}, "locations": []any{"Mars"}, "since": "2999-01-01T00:00:00+00:00",
			"limit_spans": int64(1), "return": "both",
		}),
	)
	mustComplete(t, run2)
	r := res(t, run2, 0)
	if got := spanIDs(t, r); len(got) != 2 || got[0] != b || got[1] != a {
		t.Fatalf("span_ids %v, want [%s %s]", got, b, a)
	}
	matches, _ := metaOf(t, r)["matches"].([]any)
	if len(matches) != 2 || matches[0].(map[string]any)["span_id"] != b || matches[1].(map[string]any)["span_id"] != a {
		t.Errorf("matches %v, want b then a", matches)
	}
	out, _ := r["output"].(string)
	if !strings.Contains(out, "[1] span_id="+b+" kind=memory_note msgs= created_at=") ||
		!strings.Contains(out, "[2] span_id="+a+" kind=memory_note") ||
		!strings.Contains(out, "    note: second") || !strings.Contains(out, "    created_by: bob") {
		t.Errorf("rendered output:\n%s", out)
	}
}

// MEMORY_QUERY scope "all" with an explicit artifact id held by the global
// owner: the id is taken as given and rendered from the owner's span
// (Python: `all_selected = _dedup_preserve_order([str(x).strip() …])`,
// rendered from all_spans, which includes the global owner's).
func TestMemoryQueryScopeAllFindsGlobalNoteByID(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "global fact", "scope": "global", "location": "Lyon"}),
	)
	mustComplete(t, run)
	id := metaOf(t, res(t, run, 0))["span_id"].(string)
	run2 := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{" " + id + " "}, "scope": "all", "return": "both"}),
	)
	mustComplete(t, run2)
	r := res(t, run2, 0)
	if got := spanIDs(t, r); len(got) != 1 || got[0] != id {
		t.Fatalf("span_ids %v, want [%s]", got, id)
	}
	m := metaOf(t, r)["matches"].([]any)
	if len(m) != 1 || m[0].(map[string]any)["location"] != "Lyon" || m[0].(map[string]any)["note_preview"] != "global fact" {
		t.Errorf("matches %v", m)
	}
	if out, _ := r["output"].(string); !strings.Contains(out, "    location: Lyon\n    note: global fact") {
		t.Errorf("output:\n%s", out)
	}
}
