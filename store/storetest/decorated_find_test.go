package storetest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// LedgerFindCompleted through the stack puts offloaded values back in the
// record it returns, without changing the stored record (its chain still
// verifies) or any cache.
func TestDecoratedFindCompletedDoesNotAlterStored(t *testing.T) {
	ctx := context.Background()
	for _, b := range decoratedBackends() {
		t.Run(b.name, func(t *testing.T) {
			backend := b.openFresh(t)
			st := observe.Wrap(offload.Wrap(hashchain.Wrap(backend), artifact.NewMemory(), offload.Config{MaxInlineBytes: 128}))
			r := oddRecord("r", 1, true)
			r.IdempotencyKey = "k"
			r.Result.(map[string]any)["nested"] = map[string]any{"deep": strings.Repeat("q", 300)}
			if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{r}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				got, err := store.FindCompleted(ctx, st, "r", "k")
				if err != nil || got == nil {
					t.Fatal(got, err)
				}
				if c, _ := got.Result.(map[string]any)["content"].(string); len(c) != 300 {
					t.Fatalf("not restored: %v", got.Result)
				}
				got.Result.(map[string]any)["content"] = "mutated"
			}
			wantChainVerifies(t, backend, "r", 1)
			wantChainVerifies(t, st, "r", 1)
		})
	}
}
