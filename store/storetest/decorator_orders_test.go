package storetest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// Stacking orders that keep offload outside the hash chain all give a
// verified chain, notified records equal to the stored ones, results put
// back, and the right version.
func TestDecoratedOrders(t *testing.T) {
	ctx := context.Background()
	type mk func(store.Store, artifact.Store) (store.Store, *observe.Store)
	orders := map[string]mk{
		"obs>off>hc": func(b store.Store, a artifact.Store) (store.Store, *observe.Store) {
			o := observe.Wrap(offload.Wrap(hashchain.Wrap(b), a, offload.Config{MaxInlineBytes: 128}))
			return o, o
		},
		"off>obs>hc": func(b store.Store, a artifact.Store) (store.Store, *observe.Store) {
			o := observe.Wrap(hashchain.Wrap(b))
			return offload.Wrap(o, a, offload.Config{MaxInlineBytes: 128}), o
		},
		"off>hc>obs": func(b store.Store, a artifact.Store) (store.Store, *observe.Store) {
			o := observe.Wrap(b)
			return offload.Wrap(hashchain.Wrap(o), a, offload.Config{MaxInlineBytes: 128}), o
		},
		"obs>off>obs>hc": func(b store.Store, a artifact.Store) (store.Store, *observe.Store) {
			o := observe.Wrap(offload.Wrap(observe.Wrap(hashchain.Wrap(b)), a, offload.Config{MaxInlineBytes: 128}))
			return o, o
		},
	}
	for name, f := range orders {
		t.Run(name, func(t *testing.T) {
			backend := memory.New()
			st, obs := f(backend, artifact.NewMemory())
			sub := obs.Subscribe("", 100)
			defer sub.Cancel()
			run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
			r0 := oddRecord("r", 0, true)
			r0.IdempotencyKey = "k0"
			if err := st.RunCommit(ctx, &store.CommitParams{Create: true, RandomID: true, Run: run, Records: []*durable.StepRecord{r0, oddRecord("r", 1, false)}}); err != nil {
				t.Fatal(err)
			}
			if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{oddRecord("r", 2, true)}); err != nil {
				t.Fatal(err)
			}
			run.Status = durable.RunCompleted
			run.Vars["_temp"] = map[string]any{"big": strings.Repeat("v", 500)}
			run.Output = map[string]any{"o": strings.Repeat("o", 500)}
			if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{oddRecord("r", 3, true)}}); err != nil {
				t.Fatal(err)
			}
			wantChainVerifies(t, backend, "r", 4)
			stored, _ := backend.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
			var got []*durable.StepRecord
			for len(got) < 4 {
				select {
				case ev := <-sub.C:
					got = append(got, ev.Records...)
				default:
					t.Fatalf("notified %d", len(got))
				}
			}
			for i := range stored {
				a, _ := durable.MarshalRecord(stored[i], pyjson.Line)
				b, _ := durable.MarshalRecord(got[i], pyjson.Line)
				if string(a) != string(b) {
					t.Errorf("record %d differs:\n%s\n%s", i, a, b)
				}
			}
			fc, err := store.FindCompleted(ctx, st, "r", "k0")
			if err != nil || fc == nil || len(fc.Result.(map[string]any)["content"].(string)) != 300 {
				t.Errorf("find completed: %v %v", fc, err)
			}
			if run.Version != 2 {
				t.Errorf("version %d", run.Version)
			}
		})
	}
}
