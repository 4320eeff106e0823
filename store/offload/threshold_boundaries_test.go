package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// Offload boundaries: a value is offloaded when its UTF-8 size is strictly
// over the threshold; refs have the spec's {"$artifact": id} shape; the
// effect and result objects themselves are never replaced.
func TestOffloadBoundaries(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	inner := memory.New()
	st := offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: 100})
	res := map[string]any{
		"at":    strings.Repeat("a", 100),                                // == threshold: inline
		"over":  strings.Repeat("b", 101),                                // offloaded text
		"uni":   strings.Repeat("é", 51),                                 // 102 bytes: offloaded
		"list":  []any{strings.Repeat("c", 60), strings.Repeat("d", 60)}, // JSON > 100: offloaded json
		"small": map[string]any{"x": 1},
	}
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Result: res, IdempotencyKey: "k",
		Effect: &durable.Effect{Type: "x", Payload: map[string]any{"p": strings.Repeat("p", 200)}}}
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	got, _ := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	r := got[0].Result.(map[string]any)
	if _, ok := r["at"].(string); !ok {
		t.Errorf("at threshold offloaded")
	}
	for _, k := range []string{"over", "uni", "list"} {
		if !artifact.IsRef(r[k]) {
			t.Errorf("%s not offloaded", k)
		}
	}
	fc, _ := st.LedgerFindCompleted(ctx, "r", "k")
	fr := fc.Result.(map[string]any)
	if fr["uni"] != res["uni"] || fr["over"] != res["over"] {
		t.Errorf("restore: %v", fr)
	}
}
