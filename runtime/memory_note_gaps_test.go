package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// TestMemoryNoteSourceRunDefaultsToTheRequestingRunNotTheTarget: a note
// written into another run (target_run_id) citing span ids without a
// sources.run_id names the run that made it (Python's run_id or
// run.run_id, run being the requesting run); taking the target run's id
// would attribute the sources to the wrong run.
func TestMemoryNoteSourceRunDefaultsToTheRequestingRunNotTheTarget(t *testing.T) {
	f := memSetup(t, true)
	other := f.runSteps(t, runtime.StartParams{})
	mustComplete(t, other)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "target_run_id": other.RunID,
			"sources": map[string]any{"span_ids": []any{"s1"}}}))
	mustComplete(t, run)
	id, _ := metaOf(t, res(t, run, 0))["span_id"].(string)
	v, err := artifact.LoadJSON(context.Background(), f.arts, id)
	if err != nil {
		t.Fatal(err)
	}
	if src := v.(map[string]any)["sources"].(map[string]any); src["run_id"] != run.RunID {
		t.Errorf("artifact sources %v, want run_id %s (the requesting run)", src, run.RunID)
	}
	src, _ := spansOf(f.state(t, other.RunID))[0].(map[string]any)["sources"].(map[string]any)
	if src["run_id"] != run.RunID {
		t.Errorf("span sources %v, want run_id %s", src, run.RunID)
	}
}

// TestMemoryNoteKeepInContextFailureIsReportedNotFatal: when the note's
// owner is not the base run (scope global, target_run_id), the note is
// stored first and a base run that cannot be written (held by another
// runner) leaves kept_in_context {inserted:0, skipped:0, error} in the
// result instead of failing the effect; dropping the error entry would
// hide that the note never reached the context.
func TestMemoryNoteKeepInContextFailureIsReportedNotFatal(t *testing.T) {
	rt, st, base := memRunnerA(t)
	if err := st.RunClaim(context.Background(), &store.RunClaimParams{RunID: base, Owner: "b", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	run := tickSteps(t, rt,
		step(durable.EffectMemoryNote, map[string]any{"note": "x", "scope": "global", "target_run_id": base, "keep_in_context": true}))
	mustComplete(t, run)
	kept, _ := metaOf(t, res(t, run, 0))["kept_in_context"].(map[string]any)
	if kept["inserted"] != int64(0) || kept["skipped"] != int64(0) || !strings.Contains(anyString(kept["error"]), "another runner") {
		t.Errorf("kept_in_context %v, want inserted 0, skipped 0 and the write's error", kept)
	}
}

func anyString(v any) string { s, _ := v.(string); return s }
