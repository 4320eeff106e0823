package offload_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// TestNeighboursOfExemptPathsAreOffloaded: only the exempt paths
// themselves (and what is inside them) stay inline, not vars whose names
// merely start like them. What would break: matching the exempt paths as
// bare prefixes keeps vars._runtime.memory_spans_archive,
// vars._runtime.cancelled_with_note and vars._meta.occurrence_count
// inline, and a terminal run's stored state keeps every such large value.
func TestNeighboursOfExemptPathsAreOffloaded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	run := newRun(durable.RunCompleted)
	run.Vars = map[string]any{
		"_runtime": map[string]any{"memory_spans_archive": big, "cancelled_with_note": big2},
		"_meta":    map[string]any{"occurrence_count": big + "m"},
	}
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	got, err := b.inner.RunGet(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	rt := got.Vars["_runtime"].(map[string]any)
	meta := got.Vars["_meta"].(map[string]any)
	for path, c := range map[string]struct {
		v    any
		want string
	}{
		"vars._runtime.memory_spans_archive": {rt["memory_spans_archive"], big},
		"vars._runtime.cancelled_with_note":  {rt["cancelled_with_note"], big2},
		"vars._meta.occurrence_count":        {meta["occurrence_count"], big + "m"},
	} {
		if !artifact.IsRef(c.v) {
			t.Errorf("%s stored inline; want it offloaded", path)
			continue
		}
		if tags := refTags(t, b, c.v, c.want); tags["path"] != path {
			t.Errorf("%s offloaded with tags %v", path, tags)
		}
	}
}

// TestThresholdIsResolvedOnceAtWrap: a store wrapped while
// ABSTRACTRUNTIME_MAX_INLINE_BYTES turns offloading off keeps it off
// (Wrap resolves the threshold once). What would break: letting a zero
// threshold through to the offloading walk, which reads the variable
// again at each value, so a later change of the environment turns
// offloading on under a store that was configured without it.
func TestThresholdIsResolvedOnceAtWrap(t *testing.T) {
	t.Setenv(artifact.EnvMaxInlineBytes, "0")
	ctx := context.Background()
	inner := memory.New()
	arts := artifact.NewMemory()
	st := offload.Wrap(inner, arts, offload.Config{})
	t.Setenv(artifact.EnvMaxInlineBytes, "100")
	run := newRun(durable.RunCompleted)
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{newRecord()}}); err != nil {
		t.Fatal(err)
	}
	rec := newRecord()
	rec.StepID = "s2"
	if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	if ms, err := arts.ListByRun(ctx, "run-1"); err != nil || len(ms) != 0 {
		t.Errorf("offloading off at Wrap: %d artifacts stored after the environment changed (%v); want none", len(ms), err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 2 || stored[1].Effect.Payload["prompt"] != big {
		t.Errorf("stored ledger: %d records (%v); want two, inline", len(stored), err)
	}
}
