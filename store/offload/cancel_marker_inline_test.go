package offload_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// The marker a tree cancel leaves on each run it ends
// (vars._runtime.cancelled_with: the run the Cancel was aimed at and its
// reason) is read from the cancelled, terminal run by whoever hands its
// parent its end. Offloaded (a reason past the threshold), it read as no
// marker, and a parent the cancel covered went on instead of being
// cancelled. It stays inline whole; its siblings are offloaded as before.
func TestCancelMarkerStaysInline(t *testing.T) {
	ctx := context.Background()
	b := setup(t)
	run := newRun(durable.RunCancelled)
	run.Error = big
	rt := run.Vars["_runtime"].(map[string]any)
	rt["cancelled_with"] = map[string]any{"run_id": "root-run", "reason": big}
	rt["note"] = big2
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	stored, err := b.inner.RunGet(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	srt, _ := stored.Vars["_runtime"].(map[string]any)
	with, _ := srt["cancelled_with"].(map[string]any)
	if with["run_id"] != "root-run" || with["reason"] != big {
		t.Errorf("stored vars._runtime.cancelled_with = %.80v; want it inline with its reason", srt["cancelled_with"])
	}
	if !artifact.IsRef(srt["note"]) {
		t.Errorf("vars._runtime.note stayed inline; only the marker is exempt")
	}
}
