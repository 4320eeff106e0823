package offload_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// LedgerFindCompleted's doc: it "puts back the values offloaded from its
// result: the runtime reuses that result on replay, and must write what
// the effect returned into the vars, not refs to it". It skips the
// restore whenever this decorator's threshold is ≤0 (offloading disabled,
// e.g. ABSTRACTRUNTIME_MAX_INLINE_BYTES=0 after a restart, or Config
// MaxInlineBytes -1). But the threshold only governs what is offloaded
// from now on: records written while offloading was on (by this host
// before the change, or by a Python host with an OffloadingLedgerStore)
// still hold refs whose artifacts are in the store, and a replay then
// writes the refs into the vars instead of what the effect returned.
func TestFindCompletedRestoresWithOffloadingDisabled(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	arts := artifact.NewMemory()
	big := strings.Repeat("x", 500)
	result := map[string]any{"content": big, "ok": true}

	// Written while offloading was on.
	on := offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: 100})
	rec := &durable.StepRecord{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k1", Result: result}
	if err := on.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	recs, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("setup: %d records, %v", len(recs), err)
	}
	if res, _ := recs[0].Result.(map[string]any); !artifact.IsRef(res["content"]) {
		t.Fatalf("setup: stored content %.40v, want a ref", res["content"])
	}

	// Read back by the same stack restarted with offloading disabled.
	off := offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: -1})
	got, err := off.LedgerFindCompleted(ctx, "r", "k1")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v", got, err)
	}
	if !reflect.DeepEqual(got.Result, result) {
		res, _ := got.Result.(map[string]any)
		t.Errorf("replayed result content = %.60v; want the %d-byte value the effect returned (its artifact is in the store)", res["content"], len(big))
	}
}
