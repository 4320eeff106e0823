package runtime_test

// Which JSON values the memory effects take as span ids, as Python 0.4.28
// core/runtime.py reads them with isinstance checks: an int (a bool is an
// int: True is index 1) or a str; a float, even 1.0, is neither. Numbers
// keep their kind through a store (int64 / json.Number "1" is an int,
// float64 / json.Number "1.0" a float), so the distinction survives a
// round trip.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// _handle_memory_tag: a float such as 1.0 is neither int nor str, so the
// effect fails "MEMORY_TAG requires span_id as str or int".
func TestMemoryTagFloatSpanIDRefused(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": float64(1), "tags": map[string]any{"topic": "x"}}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "MEMORY_TAG requires span_id as str or int") {
		t.Fatalf("span_id=1.0: status %s error %q; want failed \"MEMORY_TAG requires span_id as str or int\"", run.Status, run.Error)
	}
}

// Python's bool is an int: span_id=True is index 1 and tags span 1;
// False is index 0, reported as Python's str(False) writes it.
func TestMemoryTagBoolSpanIDIsAnIndex(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": true, "tags": map[string]any{"topic": "x"}}),
	)
	mustComplete(t, run)
	tags, _ := spansOf(run)[0].(map[string]any)["tags"].(map[string]any)
	if tags["topic"] != "x" {
		t.Errorf("span 1 tags %v, want topic=x", tags)
	}

	run = f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": false, "tags": map[string]any{"topic": "x"}}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown span index: False") {
		t.Errorf("span_id=false: status %s error %q; want failed \"Unknown span index: False\"", run.Status, run.Error)
	}
}

// Scope "all" takes artifact ids only: a bool is an index there, so MEMORY_TAG
// and MEMORY_QUERY refuse it as they refuse 1.
func TestMemoryScopeAllRefusesBoolSpanID(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": true, "scope": "all", "tags": map[string]any{"topic": "x"}}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "memory_tag scope='all' requires span_id as artifact id (no indices)") {
		t.Errorf("tag span_id=true scope=all: status %s error %q", run.Status, run.Error)
	}
	run = f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{"x", false}, "scope": "all"}),
	)
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "memory_query scope='all' requires explicit span_ids as artifact ids (no indices)") {
		t.Errorf("query span_ids [x, false] scope=all: status %s error %q", run.Status, run.Error)
	}
}

// With scope "all" Python takes every value that is not an index as the
// artifact id str(x) spells: 1.0 is the id "1.0" (which names nothing).
func TestMemoryQueryScopeAllFloatSpanIDIsAnArtifactID(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{float64(1)}, "scope": "all", "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 || got[0] != "1.0" {
		t.Errorf("scope=all span_ids [1.0]: selected %v, want [1.0]", got)
	}
}

// ActiveContextPolicy.resolve_span_ids_from_spans keeps only ints (bool
// included) and strings: MEMORY_QUERY drops an explicit id 1.0 and selects
// nothing, and takes True as index 1.
func TestMemoryQuerySpanIDTypes(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{float64(1)}, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{true}, "return": "meta"}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 1)); len(got) != 0 {
		t.Errorf("span_ids [1.0]: selected %v, want none (a float id is ignored)", got)
	}
	note := metaOf(t, res(t, run, 0))["span_id"]
	if got := spanIDs(t, res(t, run, 2)); len(got) != 1 || got[0] != note {
		t.Errorf("span_ids [true]: selected %v, want [%v] (index 1)", got, note)
	}
}

// MEMORY_REHYDRATE resolves ids with the same resolver: True is the int 1,
// the newest span, which is inserted; 1.0 is dropped.
func TestMemoryRehydrateSpanIDTypes(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{true}}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{float64(1)}}),
	)
	mustComplete(t, run)
	if r, _ := run.Vars["r1"].(map[string]any); r["inserted"] != int64(1) {
		t.Errorf("span_ids [true]: result %v, want the note inserted (inserted=1)", r)
	}
	if r, _ := run.Vars["r2"].(map[string]any); r["inserted"] != int64(0) {
		t.Errorf("span_ids [1.0]: result %v, want nothing inserted", r)
	}
}

// Span ids read back from a store keep their kind: a flow that saved an
// int index and a float in its vars, then resumed from a SQLite store,
// tags with the int and is refused the float, as it was in memory.
func TestMemorySpanIDKindSurvivesStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "runs.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, tc := range []struct {
		id   any
		fail bool
	}{{int64(1), false}, {float64(1), true}} {
		f := memSetupStore(t, st, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
			step(durable.EffectMemoryTag, map[string]any{"span_id": tc.id, "tags": map[string]any{"topic": "x"}}),
		)
		// Tick read the run (the span id in its steps) back from the store.
		stored := f.state(t, run.RunID)
		steps, _ := stored.Vars["steps"].([]any)
		payload, _ := steps[1].(map[string]any)["payload"].(map[string]any)
		if _, decoded := payload["span_id"].(json.Number); !decoded {
			t.Fatalf("span_id %#v read back as %#v; want the store's json.Number", tc.id, payload["span_id"])
		}
		if failed := run.Status == durable.RunFailed; failed != tc.fail {
			t.Errorf("span_id %#v: status %s error %q; want failed=%v", tc.id, run.Status, run.Error, tc.fail)
		}
	}
}

// _handle_memory_note's _norm_list keeps str items (stripped) and int
// items as str(item); a bool is an int, so sources.span_ids [true, "s1",
// 2.0] is stored as ["True", "s1"] in the artifact and the span.
func TestMemoryNoteSourceIDTypes(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha",
			"sources": map[string]any{"span_ids": []any{true, "s1", float64(2), int64(3)}}}),
	)
	mustComplete(t, run)
	span, _ := spansOf(run)[0].(map[string]any)
	src, _ := span["sources"].(map[string]any)
	ids, _ := src["span_ids"].([]any)
	if len(ids) != 3 || ids[0] != "True" || ids[1] != "s1" || ids[2] != "3" {
		t.Errorf("span sources.span_ids %v, want [True s1 3]", ids)
	}
}

// The query renderer lists a note's sources as [str(x) for x in ids if
// isinstance(x, (str, int))]: not stripped nor deduplicated, unlike what
// MEMORY_NOTE itself stores, which shows with a note another writer stored.
func TestMemoryQueryRendersNoteSourceIDsAsStored(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	content := map[string]any{"note": "alpha", "created_at": "2026-01-01T00:00:00+00:00",
		"sources": map[string]any{"run_id": "r0", "span_ids": []any{" a ", "a", true, 1.5, int64(2)}}}
	meta, err := artifact.PutJSON(ctx, f.arts, content, artifact.PutParams{RunID: "r0", Tags: map[string]string{"kind": "memory_note"}})
	if err != nil {
		t.Fatal(err)
	}
	span := map[string]any{"kind": "memory_note", "artifact_id": meta.ArtifactID, "created_at": "2026-01-01T00:00:00+00:00"}
	run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"_runtime": map[string]any{"memory_spans": []any{span}}}},
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{meta.ArtifactID}}),
	)
	mustComplete(t, run)
	out, _ := res(t, run, 0)["output"].(string)
	if !strings.Contains(out, "\n    sources.span_ids:  a , a, True, 2\n") && !strings.HasSuffix(out, "\n    sources.span_ids:  a , a, True, 2") {
		t.Errorf("rendered output %q; want the line \"    sources.span_ids:  a , a, True, 2\"", out)
	}
}
