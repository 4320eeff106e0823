package runtime_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestMemoryTagScopeAllTagsARootRunOnce: a root run without a session id
// is its own session owner, so scope "all" names it twice (as the run and
// as the session owner); the owners are deduplicated (spec §3.8), so the
// span is tagged once and the run listed once. Without the dedup the
// result would list the run twice.
func TestMemoryTagScopeAllTagsARootRunOnce(t *testing.T) {
	f := memSetup(t, true)
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{
		map[string]any{"kind": "memory_note", "artifact_id": "note1", "created_at": "2026-01-01T00:00:00+00:00"},
	}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryTag, map[string]any{"span_id": "note1", "scope": "all", "tags": map[string]any{"topic": "t"}}),
	)
	mustComplete(t, run)
	tag := res(t, run, 0)
	if applied := metaOf(t, tag)["applied"].([]any); len(applied) != 1 {
		t.Errorf("applied: %v, want one entry", applied)
	}
	if want := "scope=all runs=[" + run.RunID + "] "; !strings.Contains(tag["output"].(string), want) {
		t.Errorf("output %q lacks %q", tag["output"], want)
	}
}

// TestMemorySessionScopeWithMissingParentUsesTheRun: the walk up
// parent_run_id ends at the last run found, so a run whose parent is gone
// is its own session owner (spec §1.13); reading the missing parent as an
// error would fail every session-scoped effect of an orphaned run.
func TestMemorySessionScopeWithMissingParentUsesTheRun(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{ParentRunID: "gone_parent"},
		step(durable.EffectMemoryNote, map[string]any{"note": "orphan note", "scope": "session"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "orphan", "scope": "session", "return": "meta"}),
	)
	mustComplete(t, run)
	if spans := spansOf(run); len(spans) != 1 {
		t.Fatalf("the run's own index: %v, want the session note", spans)
	}
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 {
		t.Errorf("session query: %v", got)
	}
}

// TestMemoryTagIndexPastTheEndIgnoresSpansWithoutID: an index out of
// range resolves to no artifact id, which must not match a span record
// that has none (a hand-written or foreign index entry); the tag fails as
// an unknown index instead of tagging that span.
func TestMemoryTagIndexPastTheEndIgnoresSpansWithoutID(t *testing.T) {
	f := memSetup(t, false)
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{
		map[string]any{"kind": "conversation_span", "created_at": "2026-01-01T00:00:00+00:00"},
	}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryTag, map[string]any{"span_id": 5, "tags": map[string]any{"topic": "t"}}))
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown span index: 5") {
		t.Fatalf("status %s error %q, want failed with \"Unknown span index: 5\"", run.Status, run.Error)
	}
}
