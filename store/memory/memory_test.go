package memory_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memory.New()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s := memory.New()
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestHandoffIsReadOnce: a run created with Handoff reads back as the very
// object committed, once; then as private copies.
func TestHandoffIsReadOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	r := &durable.RunState{RunID: "run-h", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{"k": "v"}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Handoff: true}); err != nil {
		t.Fatal(err)
	}
	for i, wantSame := range []bool{true, false} {
		got, err := s.RunGet(ctx, r.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if (got == r) != wantSame || got.Vars["k"] != "v" || got.Version != 1 {
			t.Fatalf("read %d: the committed object: %v (want %v), vars %v, version %d", i+1, got == r, wantSame, got.Vars, got.Version)
		}
	}
}
