package storetest_test

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

type observedRecords struct {
	A float64 `json:"a"`
	B []byte
}

// The records an observer is told of are the stored ones byte for byte
// (their chain verifies), whatever Go values the writer gave (float32,
// typed slices and maps, []byte, time.Time, structs, raw JSON).
func TestDecoratedObserveMatchesStored(t *testing.T) {
	ctx := context.Background()
	for _, b := range decoratedBackends() {
		t.Run(b.name, func(t *testing.T) {
			backend := b.openFresh(t)
			obs := observe.Wrap(offload.Wrap(hashchain.Wrap(backend), artifact.NewMemory(), offload.Config{MaxInlineBytes: 128}))
			sub := obs.Subscribe("", 100)
			defer sub.Cancel()
			mk := func(i int) *durable.StepRecord {
				r := oddRecord("r", i, i%2 == 0)
				r.Result.(map[string]any)["odd"] = []any{float32(0.1), []string{"a", strings.Repeat("b", 200)}, []byte("hi"), time.Date(2026, 1, 1, 0, 0, 0, 5, time.UTC),
					big.NewInt(12345), observedRecords{A: 2.0, B: []byte{1}}, map[string]int{"x": 1}, []float64{1, 2.5, math.Copysign(0, -1)}, json.RawMessage(`{"b":1.0,"a":[]}`)}
				r.Extra = map[string]any{"zz": 1.0}
				return r
			}
			if err := obs.RunCommit(ctx, &store.CommitParams{Create: true, Run: &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}},
				Records: []*durable.StepRecord{mk(0), mk(1)}}); err != nil {
				t.Fatal(err)
			}
			if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{mk(2), mk(3)}); err != nil {
				t.Fatal(err)
			}
			var got []*durable.StepRecord
			for len(got) < 4 {
				select {
				case ev := <-sub.C:
					got = append(got, ev.Records...)
				default:
					t.Fatalf("only %d notified", len(got))
				}
			}
			stored, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
			if err != nil {
				t.Fatal(err)
			}
			if rep := hashchain.VerifyLedgerChain(got); !rep.OK {
				t.Errorf("notified chain: %+v", rep)
			}
			if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
				t.Errorf("stored chain: %+v", rep)
			}
			for i := range stored {
				a, _ := durable.MarshalRecord(stored[i], pyjson.Line)
				b, _ := durable.MarshalRecord(got[i], pyjson.Line)
				if string(a) != string(b) || stored[i].Seq != got[i].Seq || !reflect.DeepEqual(stored[i].Result, got[i].Result) {
					t.Errorf("record %d:\nstored   %s (seq %d)\nnotified %s (seq %d)", i, a, stored[i].Seq, b, got[i].Seq)
				}
			}
		})
	}
}
