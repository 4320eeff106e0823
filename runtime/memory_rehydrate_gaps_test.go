package runtime_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// putSpan archives msgs as one more conversation_span of vars (made by
// conversationSpanVars) and returns its id.
func putSpan(t *testing.T, f *memFixture, vars map[string]any, msgs []any) string {
	t.Helper()
	id := archiveSpan(t, f, msgs)
	rt := vars["_runtime"].(map[string]any)
	rt["memory_spans"] = append(rt["memory_spans"].([]any), map[string]any{"kind": "conversation_span",
		"artifact_id": id, "created_at": "2026-01-01T00:00:02+00:00", "message_count": int64(len(msgs))})
	return id
}

func msg(role, content, id string) map[string]any {
	return map[string]any{"role": role, "content": content, "metadata": map[string]any{"message_id": id}}
}

func contents(run *durable.RunState) string {
	var got []string
	for _, m := range run.Vars["context"].(map[string]any)["messages"].([]any) {
		got = append(got, m.(map[string]any)["content"].(string))
	}
	return strings.Join(got, ",")
}

// TestMemoryRehydrateMaxMessagesIsOneBudgetOverAllSpans: max_messages caps
// the messages inserted over all spans (Python's remaining =
// max_messages - inserted_total), so a second span only gets what the
// first left; capping each span at max_messages alone inserts 4 of 3.
func TestMemoryRehydrateMaxMessagesIsOneBudgetOverAllSpans(t *testing.T) {
	f := memSetup(t, true)
	a, vars := conversationSpanVars(t, f, []any{msg("user", "a1", "a1"), msg("user", "a2", "a2")})
	b := putSpan(t, f, vars, []any{msg("user", "b1", "b1"), msg("user", "b2", "b2")})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{a, b}, "max_messages": 3}))
	mustComplete(t, run)
	r := run.Vars["r0"].(map[string]any)
	if r["inserted"] != int64(3) {
		t.Errorf("inserted %v, want 3", r["inserted"])
	}
	second := r["artifacts"].([]any)[1].(map[string]any)
	if second["span_id"] != b || second["inserted"] != int64(1) {
		t.Errorf("second span entry %v, want inserted 1", second)
	}
}

// TestMemoryRehydrateDedupsWithinOneSpan: a message id seen earlier in
// the same batch counts as present (Python adds each inserted key to
// existing_keys), so a span archiving the same message twice inserts it
// once and reports one skipped.
func TestMemoryRehydrateDedupsWithinOneSpan(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{msg("user", "first", "dup"), msg("user", "again", "dup")})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}}))
	mustComplete(t, run)
	r := run.Vars["r0"].(map[string]any)
	if r["inserted"] != int64(1) || r["skipped"] != int64(1) || contents(run) != "first" {
		t.Errorf("result %v, messages %s; want inserted 1, skipped 1, messages first", r, contents(run))
	}
}

// TestMemoryRehydrateAfterSummaryNeedsASummaryMessage: after_summary
// places a span's messages after the system message of kind
// memory_summary naming it; another system message naming the span (one
// rehydrated from it before) is no summary, and the placement falls back
// to after the leading system messages.
func TestMemoryRehydrateAfterSummaryNeedsASummaryMessage(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{msg("user", "archived", "a1")})
	vars["context"] = map[string]any{"messages": []any{
		map[string]any{"role": "system", "content": "prompt"},
		map[string]any{"role": "user", "content": "turn"},
		map[string]any{"role": "system", "content": "old", "metadata": map[string]any{"kind": "memory_note", "source_artifact_id": id}},
		map[string]any{"role": "user", "content": "recent"},
	}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}}))
	mustComplete(t, run)
	if got, want := contents(run), "prompt,archived,turn,old,recent"; got != want {
		t.Errorf("messages %s, want %s", got, want)
	}
}

// TestMemoryRehydratePreviewOfARolelessMessageIsItsContent: the preview
// writes "role: content", and a message without a role as its content
// alone (Python: f"{role}: {content}" if role else content), not with an
// empty "role: " prefix.
func TestMemoryRehydratePreviewOfARolelessMessageIsItsContent(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{
		map[string]any{"content": "no role", "metadata": map[string]any{"message_id": "r1"}},
		msg("user", "hi", "r2"),
	})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}}))
	mustComplete(t, run)
	entry := run.Vars["r0"].(map[string]any)["artifacts"].([]any)[0].(map[string]any)
	if entry["preview"] != "no role\nuser: hi" {
		t.Errorf("preview %q, want %q", entry["preview"], "no role\nuser: hi")
	}
}

// TestMemoryRehydrateNamesASpanOnce: span ids that resolve to the same
// span (Python's resolve_span_ids_from_spans dedups, order kept) insert
// it once with one artifacts entry, even with message-id dedup off
// (dedup_by "none"), where a second pass would insert its messages again.
func TestMemoryRehydrateNamesASpanOnce(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{msg("user", "only", "o1")})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id, " " + id + " "}, "dedup_by": "none"}))
	mustComplete(t, run)
	r := run.Vars["r0"].(map[string]any)
	if r["inserted"] != int64(1) || len(r["artifacts"].([]any)) != 1 || contents(run) != "only" {
		t.Errorf("result %v, messages %s; want the span inserted once", r, contents(run))
	}
}

// TestMemoryRehydrateKindOfARepeatedSpanIsTheNewestEntrys: a span index
// listing the same artifact twice reads its kind from the newest entry
// (created_at), as Python's _handle_memory_rehydrate does (kind_by_artifact
// over list_memory_spans_from_run, newest first, keeps the first entry it
// meets: `if not aid or aid in kind_by_artifact: continue`). So a
// conversation_span re-listed earlier as evidence is rehydrated, and one
// re-listed later as evidence is skipped with kind "evidence". Letting a
// later entry of the newest-first list overwrite the kind reverses both.
func TestMemoryRehydrateKindOfARepeatedSpanIsTheNewestEntrys(t *testing.T) {
	for _, tc := range []struct {
		evidenceAt string // created_at of the evidence entry; the conversation_span's is 2026-01-01T00:00:01
		inserted   int64
		kind       any
	}{
		{"2025-06-01T00:00:00+00:00", 2, "conversation_span"},
		{"2026-06-01T00:00:00+00:00", 0, "evidence"},
	} {
		f := memSetup(t, true)
		id, vars := conversationSpanVars(t, f, []any{msg("user", "a1", "a1"), msg("user", "a2", "a2")})
		rt := vars["_runtime"].(map[string]any)
		rt["memory_spans"] = append(rt["memory_spans"].([]any),
			map[string]any{"kind": "evidence", "artifact_id": id, "created_at": tc.evidenceAt})
		run := f.runSteps(t, runtime.StartParams{Vars: vars},
			step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}}))
		mustComplete(t, run)
		r := run.Vars["r0"].(map[string]any)
		arts, _ := r["artifacts"].([]any)
		if r["inserted"] != tc.inserted || len(arts) != 1 || arts[0].(map[string]any)["kind"] != tc.kind {
			t.Errorf("evidence entry at %s: inserted %v, artifacts %v; want inserted %d, kind %v (the newest entry's)",
				tc.evidenceAt, r["inserted"], arts, tc.inserted, tc.kind)
		}
	}
}
