package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Python _handle_memory_note: `session_id = getattr(target_run,
// "session_id", None) or getattr(run, "session_id", None)` — the scope
// owner's session, else the session of the run that emitted the effect.
// A global note written from run R (session "sr") with target_run_id X
// (session "sx") is stored by Python with session_id "sr" (the global
// owner has none); noteSessionID puts the base run's "sx" before the
// requesting run's.
func TestGlobalNoteSessionIDIsRequestingRuns(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	other := f.runSteps(t, runtime.StartParams{SessionID: "sx"})
	mustComplete(t, other)
	run := f.runSteps(t, runtime.StartParams{SessionID: "sr"},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "scope": "global", "target_run_id": other.RunID}))
	mustComplete(t, run)
	id, _ := metaOf(t, res(t, run, 0))["span_id"].(string)
	v, err := artifact.LoadJSON(ctx, f.arts, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.(map[string]any)["session_id"]; got != "sr" {
		t.Fatalf("note artifact session_id %v, want \"sr\" (Python: owner's session or the requesting run's)", got)
	}
}
