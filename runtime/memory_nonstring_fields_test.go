package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Python's memory handlers read target_run_id as str(target_run_id or
// run.run_id).strip(): a target that is not a string (a number a flow pin or
// a tool call passed) names the run of that text, which does not exist, and
// the effect fails "Unknown target_run_id: 12345" (VARS_QUERY here does
// read it so). Dropping the number would store the note in the requesting
// run instead, reported as a success.
func TestMemoryNoteNonStringTargetRunIDIsNotIgnored(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "for run 12345", "target_run_id": int64(12345)}))
	if n := len(spansOf(run)); n != 0 {
		t.Errorf("the requesting run got %d memory span(s); the note was meant for run 12345", n)
	}
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown target_run_id: 12345") {
		t.Fatalf("status %s, error %q; want failed with \"Unknown target_run_id: 12345\" (Python)", run.Status, run.Error)
	}
}

// The other fields the memory handlers read with Python's str(x or
// default): a non-string scope is the scope of its text, a falsy target is
// the requesting run, a number as sources.run_id is kept as its text, and a
// non-string dedup_by is an unknown key (dedup off).
func TestMemoryNonStringFieldsReadAsPythonStr(t *testing.T) {
	f := memSetup(t, true)
	for _, c := range []struct {
		typ     durable.EffectType
		payload map[string]any
		want    string
	}{
		{durable.EffectMemoryNote, map[string]any{"note": "x", "scope": int64(5)}, "Unknown memory scope: 5"},
		{durable.EffectMemoryNote, map[string]any{"note": "x", "target_run_id": true}, "Unknown target_run_id: True"},
		{durable.EffectMemoryTag, map[string]any{"span_id": "a", "tags": map[string]any{"k": "v"}, "scope": int64(5)},
			"Unknown memory_tag scope: 5"},
		{durable.EffectMemoryTag, map[string]any{"span_id": "a", "tags": map[string]any{"k": "v"}, "target_run_id": 7.5},
			"Unknown target_run_id: 7.5"},
		{durable.EffectMemoryQuery, map[string]any{"scope": int64(5)}, "Unknown memory_query scope: 5"},
		{durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"a"}, "target_run_id": int64(9)},
			"Unknown target_run_id: 9"},
	} {
		run := f.runSteps(t, runtime.StartParams{}, step(c.typ, c.payload))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, c.want) {
			t.Errorf("%s %v: status %s error %q, want %q", c.typ, c.payload, run.Status, run.Error, c.want)
		}
	}

	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryNote, map[string]any{
		"note": "x", "target_run_id": int64(0), "sources": map[string]any{"run_id": int64(42), "span_ids": []any{"s"}}}))
	mustComplete(t, run)
	spans := spansOf(run)
	if len(spans) != 1 {
		t.Fatalf("target_run_id 0 (falsy): %d spans in the requesting run, want 1", len(spans))
	}
	span := spans[0].(map[string]any)
	content, err := artifact.LoadJSON(context.Background(), f.arts, span["artifact_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if got := content.(map[string]any)["sources"].(map[string]any)["run_id"]; got != "42" {
		t.Errorf("artifact sources.run_id %v, want \"42\" (str of the number)", got)
	}
	if got := span["sources"].(map[string]any)["run_id"]; got != "42" {
		t.Errorf("span sources.run_id %v, want \"42\"", got)
	}

	run = f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "Remember the milk.", "keep_in_context": true}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{int64(1)}, "dedup_by": int64(1)}),
	)
	mustComplete(t, run)
	if rh, _ := run.Vars["r1"].(map[string]any); rh["inserted"] != int64(1) || rh["skipped"] != int64(0) {
		t.Errorf("rehydrate with dedup_by 1: inserted %v skipped %v, want the note inserted again (unknown key: no dedup)",
			rh["inserted"], rh["skipped"])
	}
}

// archiveSpan stores msgs as a conversation_span artifact, as
// MEMORY_COMPACT archives them, and returns its id.
func archiveSpan(t *testing.T, f *memFixture, msgs []any) string {
	t.Helper()
	meta, err := artifact.PutJSON(context.Background(), f.arts, map[string]any{"messages": msgs},
		artifact.PutParams{Tags: map[string]string{"kind": "conversation_span"}})
	if err != nil {
		t.Fatal(err)
	}
	return meta.ArtifactID
}

// conversationSpanVars stores one conversation_span artifact holding msgs
// and returns its id and run vars that list it in _runtime.memory_spans.
func conversationSpanVars(t *testing.T, f *memFixture, msgs []any) (string, map[string]any) {
	t.Helper()
	id := archiveSpan(t, f, msgs)
	span := map[string]any{"kind": "conversation_span", "artifact_id": id, "created_at": "2026-01-01T00:00:01+00:00",
		"from_timestamp": "2026-01-01T00:00:00+00:00", "to_timestamp": "2026-01-01T00:00:01+00:00",
		"message_count": int64(len(msgs))}
	return id, map[string]any{"_runtime": map[string]any{"memory_spans": []any{span}}}
}

// A message content that is not a string (the multimodal form
// [{"type":"text","text":…}]) is read as Python's str(content), its repr,
// by MEMORY_QUERY's deep scan (`q in str(content).lower()`) and rendered
// text (`str(m.get("content") or "")`). A query quoting the user finds
// the span because repr writes 'Bob said "ship it"', where JSON text would
// escape the quotes.
func TestMemoryQueryNonStringContentReadAsPythonStr(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"text": `Bob said "ship it"`}}},
	})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"query": `said "ship it"`, "return": "both"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_id": id}),
	)
	mustComplete(t, run)
	if got := spanIDs(t, res(t, run, 0)); len(got) != 1 {
		t.Errorf("deep scan for %q found %v; want the span", `said "ship it"`, got)
	}
	want := `    - user: [{'text': 'Bob said "ship it"'}]`
	if out, _ := res(t, run, 1)["output"].(string); !strings.Contains(out, want) {
		t.Errorf("rendered text lacks Python's str(content) line %q:\n%s", want, out)
	}
}

// MEMORY_REHYDRATE's per-span preview reads a non-string content as
// Python's _preview_inserted does: role + ": " + str(content).strip().
func TestMemoryRehydratePreviewNonStringContentAsPythonStr(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"text": "it is PELICAN"}},
			"metadata": map[string]any{"message_id": "m1"}},
	})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}}),
	)
	mustComplete(t, run)
	r, _ := run.Vars["r0"].(map[string]any)
	arts, _ := r["artifacts"].([]any)
	if len(arts) != 1 {
		t.Fatalf("artifacts = %v", r["artifacts"])
	}
	want := "user: [{'text': 'it is PELICAN'}]"
	if got := arts[0].(map[string]any)["preview"]; got != want {
		t.Errorf("preview = %q, want Python's %q", got, want)
	}
}
