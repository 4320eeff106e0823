package runtime

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// The memory handlers write into vars they read with asList / asObject.
// The kernel checks vars before it calls them, save where it re-runs one
// on replay (RerunOnReplay), which hands it the vars the node just left:
// there a value that is not JSON was read as nothing and a new list or
// object written in its place, erasing it and its valid siblings without
// a word. These tests call the handlers as that replay does.

// runMemoryEffect calls the handler of typ on a run holding vars (scope
// run: the run is its own owner).
func runMemoryEffect(t *testing.T, typ durable.EffectType, payload map[string]any, vars map[string]any) Outcome {
	t.Helper()
	rt, err := New(Config{Store: memory.New(), Artifacts: artifact.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	req := &EffectRequest{
		Run:            &durable.RunState{RunID: "r1", Vars: vars},
		Effect:         &durable.Effect{Type: typ, Payload: payload},
		IdempotencyKey: "key-1",
		Runtime:        rt,
	}
	out, err := builtinHandlers()[typ].Func(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantNamed requires vars to hold a value the run's commit check refuses
// naming path, or out to have failed naming it.
func wantNamed(t *testing.T, out Outcome, vars map[string]any, path string) {
	t.Helper()
	if out.Status == OutcomeFailed {
		if !strings.Contains(out.Error, path) {
			t.Errorf("effect failed with %q; want an error naming %s", out.Error, path)
		}
		return
	}
	if err := pyjson.CheckMember(vars, "vars", 1); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("effect %s; the commit check finds %v, want an error naming %s (the value left in place)", out.Status, err, path)
	}
}

// MEMORY_NOTE keep_in_context (the context inserter, shared with
// MEMORY_REHYDRATE) wrote the note alone over a context.messages it could
// not normalise.
func TestNonJSONContextMessagesLeftInPlace(t *testing.T) {
	msgs := []map[string]any{
		{"role": "user", "content": "my name is Ada"},
		{"role": "user", "content": "hi", "score": math.NaN()},
	}
	vars := map[string]any{"context": map[string]any{"messages": msgs}}
	out := runMemoryEffect(t, durable.EffectMemoryNote, map[string]any{"note": "Ada likes tea.", "keep_in_context": true}, vars)
	wantNamed(t, out, vars, "vars.context.messages[1].score")
	if got, ok := vars["context"].(map[string]any)["messages"].([]map[string]any); !ok || len(got) != 2 {
		t.Errorf("context.messages after MEMORY_NOTE keep_in_context = %v; want the node's two messages left in place", vars["context"])
	}
}

// MEMORY_TAG with merge read span tags it could not normalise as none and
// wrote the new tags in their place.
func TestNonJSONSpanTagsFailMergeNamingPath(t *testing.T) {
	tags := map[string]float64{"keep": 1, "bad": math.NaN()}
	span := map[string]any{"kind": "memory_note", "artifact_id": "n1", "created_at": "2026-01-01T00:00:00+00:00", "tags": tags}
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{span}}}
	out := runMemoryEffect(t, durable.EffectMemoryTag, map[string]any{"span_id": "n1", "tags": map[string]any{"topic": "tea"}}, vars)
	wantNamed(t, out, vars, "vars._runtime.memory_spans[0].tags.bad")
	if got, ok := span["tags"].(map[string]float64); !ok || got["keep"] != 1 {
		t.Errorf("span tags after MEMORY_TAG = %v; want the node's tags left in place", span["tags"])
	}
}

// A memory effect read a span index it could not normalise as no spans,
// and MEMORY_NOTE wrote an index holding only its span over it.
func TestNonJSONSpanIndexFailsMemoryEffectNamingPath(t *testing.T) {
	spans := []map[string]any{{"kind": "memory_note", "artifact_id": "kept", "bad": math.NaN()}}
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": spans}}
	out := runMemoryEffect(t, durable.EffectMemoryNote, map[string]any{"note": "Ada likes tea."}, vars)
	wantNamed(t, out, vars, "vars._runtime.memory_spans[0].bad")
	if got, ok := vars["_runtime"].(map[string]any)["memory_spans"].([]map[string]any); !ok || len(got) != 1 {
		t.Errorf("memory_spans after MEMORY_NOTE = %v; want the node's index left in place", vars["_runtime"])
	}
}
