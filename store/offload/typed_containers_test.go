package offload_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Offload walked only map[string]any and []any (artifact/offload.go walk);
// a value the kernel hands over in a typed Go container ([]map[string]any,
// []string, map[string]string — which every store accepts and stores as
// the JSON list/object it encodes to) was a leaf, so a large string inside
// it was never offloaded, and under a root that may not be replaced (a
// ledger result) the record was stored with the value inline. Python walks
// every list and dict and offloads the string (spec §4.7).
func TestTypedContainersAreWalked(t *testing.T) {
	ctx := context.Background()
	b := setup(t)
	rec := &durable.StepRecord{
		RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
		Result: map[string]any{
			"items": []map[string]any{{"text": big}},
			"lines": []string{big2},
		},
	}
	if err := b.st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, err := b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	res, _ := stored[0].Result.(map[string]any)
	items, _ := res["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("stored items = %#v", res["items"])
	}
	item, _ := items[0].(map[string]any)
	if !artifact.IsRef(item["text"]) {
		t.Errorf("ledger.result.items[0].text stored inline (%d bytes > threshold %d), want an artifact ref", len(big), limit)
	}
	lines, _ := res["lines"].([]any)
	if len(lines) != 1 || !artifact.IsRef(lines[0]) {
		t.Errorf("ledger.result.lines[0] stored inline (%d bytes > threshold %d), want an artifact ref", len(big2), limit)
	}
}
