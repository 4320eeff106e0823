package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestMemoryNoteBlankSourceRunIsTheRequestingRun: sources.run_id is read
// as str(run_id or run.run_id).strip(), and a blank one names the run
// that made the note (spec §3.8 sources) — not an empty run id.
func TestMemoryNoteBlankSourceRunIsTheRequestingRun(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "sources": map[string]any{"run_id": "  ", "span_ids": []any{"s1"}}}))
	mustComplete(t, run)
	src, _ := spansOf(run)[0].(map[string]any)["sources"].(map[string]any)
	if src["run_id"] != run.RunID {
		t.Errorf("span sources %v, want run_id %s", src, run.RunID)
	}
}

// TestMemoryNoteSpanSourcesWithOnlyMessageIDs: the span record carries
// sources when the note cites span ids or message ids (spec §1.13); a
// note citing message ids alone must keep them in the index too.
func TestMemoryNoteSpanSourcesWithOnlyMessageIDs(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "sources": map[string]any{"message_ids": []any{"m1"}}}))
	mustComplete(t, run)
	src, ok := spansOf(run)[0].(map[string]any)["sources"].(map[string]any)
	if !ok || len(src["message_ids"].([]any)) != 1 || src["message_ids"].([]any)[0] != "m1" {
		t.Errorf("span sources %v, want message_ids [m1]", src)
	}
}

// TestMemoryNotePreviewOfExactly160CharactersIsNotCut: note_preview holds
// up to 160 characters (spec §1.13); only a longer note is cut and marked.
func TestMemoryNotePreviewOfExactly160CharactersIsNotCut(t *testing.T) {
	f := memSetup(t, true)
	exact, long := strings.Repeat("é", 160), strings.Repeat("é", 161)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": exact}),
		step(durable.EffectMemoryNote, map[string]any{"note": long}))
	mustComplete(t, run)
	if got := spansOf(run)[0].(map[string]any)["note_preview"]; got != exact {
		t.Errorf("preview of 160 characters: %q, want it whole", got)
	}
	got, _ := spansOf(run)[1].(map[string]any)["note_preview"].(string)
	if !strings.HasSuffix(got, "… (truncated)") || len([]rune(got)) != 160 {
		t.Errorf("preview of 161 characters: %q (%d), want 160 ending with the marker", got, len([]rune(got)))
	}
}

// TestMemoryNoteSessionIDIsTheTargetRunsForScopeRun: with scope "run" the
// owner is the target run, and the note's session_id is the owner's
// session (Python: target_run.session_id or run.session_id), not the
// session of the run that asked.
func TestMemoryNoteSessionIDIsTheTargetRunsForScopeRun(t *testing.T) {
	f := memSetup(t, true)
	other := f.runSteps(t, runtime.StartParams{SessionID: "sx"})
	mustComplete(t, other)
	run := f.runSteps(t, runtime.StartParams{SessionID: "sr"},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "target_run_id": other.RunID}))
	mustComplete(t, run)
	id, _ := metaOf(t, res(t, run, 0))["span_id"].(string)
	v, err := artifact.LoadJSON(context.Background(), f.arts, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.(map[string]any)["session_id"]; got != "sx" {
		t.Errorf("note artifact session_id %v, want the target run's \"sx\"", got)
	}
}

// TestMemoryNoteSpanWithoutTagsHasNoTagsKey: the span record carries tags
// only when the note has some (spec §1.13 "optional tags"; Python sets
// span["tags"] only for non-empty clean tags), so a note whose tags are
// all dropped (kind, blank values) leaves no empty tags object.
func TestMemoryNoteSpanWithoutTagsHasNoTagsKey(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "tags": map[string]any{"kind": "x", "topic": ""}}))
	mustComplete(t, run)
	if tags, has := spansOf(run)[0].(map[string]any)["tags"]; has {
		t.Errorf("span tags %v, want none", tags)
	}
}
