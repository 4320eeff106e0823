package postgres_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestLifecycleOfGoTypedVars: runArgs fills the
// run_lifecycle column only when vars._run_lifecycle is a map[string]any,
// and RunIndex reads the lifecycle from that column; a lifecycle given in
// another Go type the encoder writes as the same JSON object (a
// map[string]string) is in run_json but missing from every index row,
// which the memory and SQLite stores (reading the vars as stored) list.
func TestLifecycleOfGoTypedVars(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	pg := newStore(t)
	mem := memory.New()
	at := durable.NewTime(time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC))
	for _, s := range []store.Store{pg, mem} {
		r := &durable.RunState{RunID: "run-lc", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
			CreatedAt: at, UpdatedAt: at, Vars: map[string]any{
				"_run_lifecycle": map[string]string{"source": "api"},
			}}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	lifecycle := func(s store.Store) map[string]any {
		rows, err := s.RunIndex(ctx, &store.RunIndexParams{})
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %v, %v", rows, err)
		}
		return rows[0].RunLifecycle
	}
	want := lifecycle(mem)
	if want == nil {
		t.Fatal("precondition: the memory store lists no lifecycle")
	}
	if got := lifecycle(pg); !reflect.DeepEqual(got, want) {
		t.Errorf("PostgreSQL RunIndex lifecycle = %v, memory store = %v", got, want)
	}
}
