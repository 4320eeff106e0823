package runtime_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestMemoryRehydrateRecallMaxMessagesZeroUsesTheDefault: with a
// recall_level, a max_messages below 1 is replaced by the level's default
// with a warning (Python's "max_messages must be >=1; using N"); taking 0
// as the cap would insert nothing and warn of nothing.
func TestMemoryRehydrateRecallMaxMessagesZeroUsesTheDefault(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha"}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{int64(1)}, "recall_level": "urgent", "max_messages": 0}),
	)
	mustComplete(t, run)
	r, _ := run.Vars["r1"].(map[string]any)
	if r["inserted"] != int64(1) {
		t.Errorf("inserted %v, want 1", r["inserted"])
	}
	applied, _ := r["effort"].(map[string]any)["applied"].(map[string]any)
	if applied["max_messages"] != int64(30) {
		t.Errorf("effort %v, want applied max_messages 30 (urgent's default)", r["effort"])
	}
	if w, _ := r["warnings"].([]any); len(w) != 1 || w[0] != "recall_level=urgent: max_messages must be >=1; using 30" {
		t.Errorf("warnings %v", r["warnings"])
	}
}

// TestMemoryRehydrateKeepsMarksAMessageHasAlready: an archived message
// that already carries metadata.rehydrated / source_artifact_id keeps
// them (the runtime only adds the marks that are missing), so a message
// archived from another span still names that span.
func TestMemoryRehydrateKeepsMarksAMessageHasAlready(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{
		map[string]any{"role": "user", "content": "hi", "metadata": map[string]any{
			"message_id": "m1", "rehydrated": false, "source_artifact_id": "older_span"}},
		map[string]any{"role": "user", "content": "there", "metadata": map[string]any{"message_id": "m2"}},
	})
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}}))
	mustComplete(t, run)
	msgs := run.Vars["context"].(map[string]any)["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages %v", msgs)
	}
	m1 := msgs[0].(map[string]any)["metadata"].(map[string]any)
	if m1["rehydrated"] != false || m1["source_artifact_id"] != "older_span" {
		t.Errorf("first message metadata %v, want its own marks kept", m1)
	}
	m2 := msgs[1].(map[string]any)["metadata"].(map[string]any)
	if m2["rehydrated"] != true || m2["source_artifact_id"] != id {
		t.Errorf("second message metadata %v, want rehydrated true, source_artifact_id %s", m2, id)
	}
}

// TestMemoryRehydratePlacementAfterSystemIgnoresTheSummary: placement
// "after_system" puts a span's messages after the leading system
// messages even when the span's summary message sits further down
// (spec §3.8 placement); only "after_summary" (the default) looks for it.
func TestMemoryRehydratePlacementAfterSystemIgnoresTheSummary(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{
		map[string]any{"role": "user", "content": "archived", "metadata": map[string]any{"message_id": "a1"}},
	})
	vars["context"] = map[string]any{"messages": []any{
		map[string]any{"role": "system", "content": "prompt"},
		map[string]any{"role": "user", "content": "turn"},
		map[string]any{"role": "system", "content": "summary", "metadata": map[string]any{"kind": "memory_summary", "source_artifact_id": id}},
		map[string]any{"role": "user", "content": "recent"},
	}}
	for placement, want := range map[string]string{
		"after_system":  "prompt,archived,turn,summary,recent",
		"after_summary": "prompt,turn,summary,archived,recent",
	} {
		run := f.runSteps(t, runtime.StartParams{Vars: vars},
			step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}, "placement": placement}))
		mustComplete(t, run)
		var got []string
		for _, m := range run.Vars["context"].(map[string]any)["messages"].([]any) {
			got = append(got, m.(map[string]any)["content"].(string))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("placement %s: %v, want %s", placement, got, want)
		}
	}
}

// TestMemoryRehydrateIntoEndedRunUpdatesOutputMessages: a run that has an
// output object (an ended run, a synthetic memory owner) mirrors its
// context messages in output.messages; rehydrating into it by
// target_run_id must update both, not leave output.messages stale.
func TestMemoryRehydrateIntoEndedRunUpdatesOutputMessages(t *testing.T) {
	f := memSetup(t, true)
	id, vars := conversationSpanVars(t, f, []any{
		map[string]any{"role": "user", "content": "archived", "metadata": map[string]any{"message_id": "a1"}},
	})
	ended := f.runSteps(t, runtime.StartParams{Vars: vars})
	mustComplete(t, ended)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{id}, "target_run_id": ended.RunID}))
	mustComplete(t, run)
	target := f.state(t, ended.RunID)
	out, _ := target.Output["messages"].([]any)
	if len(out) != 1 || out[0].(map[string]any)["content"] != "archived" {
		t.Errorf("output.messages %v, want the rehydrated message", target.Output["messages"])
	}
}
