package jsonfile_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestLifecycleOfGoTypedVars: RunIndex's RunLifecycle is
// store.RunLifecycle of vars._run_lifecycle. The memory and SQLite
// stores compute it from the vars as stored (decoded JSON), the JSON-file
// store (newMeta) from the caller's vars as given: store.RunLifecycle
// only knows map[string]any objects and a few number types, so a
// lifecycle given in other Go types the encoder writes as the same JSON
// (a map[string]string, an int32 ttl_s) is missing from the JSON-file
// store's index rows until the store is reopened and reads the file —
// while the memory store, and the same store after a restart, list it.
func TestLifecycleOfGoTypedVars(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.New()
	at := durable.NewTime(time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC))
	newRun := func() *durable.RunState {
		return &durable.RunState{RunID: "run-lc", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
			CreatedAt: at, UpdatedAt: at, Vars: map[string]any{
				"_run_lifecycle": map[string]any{
					"source":    "api",
					"retention": map[string]any{"ttl_s": int32(3600)},
				},
				"other": map[string]string{"k": "v"},
			}}
	}
	newRun2 := func() *durable.RunState {
		r := newRun()
		r.RunID = "run-lc2"
		r.Vars["_run_lifecycle"] = map[string]string{"source": "api"}
		return r
	}
	for _, s := range []store.Store{js, mem} {
		for _, r := range []*durable.RunState{newRun(), newRun2()} {
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lifecycles := func(s store.Store) map[string]map[string]any {
		rows, err := s.RunIndex(ctx, &store.RunIndexParams{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, row := range rows {
			out[row.RunID] = row.RunLifecycle
		}
		return out
	}
	want := lifecycles(mem)
	if want["run-lc"] == nil || want["run-lc2"] == nil {
		t.Fatalf("precondition: memory store rows %v", want)
	}
	got := lifecycles(js)
	if err := js.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	after := lifecycles(reopened)
	if !reflect.DeepEqual(after, want) {
		t.Errorf("precondition: reopened JSON-file store rows %v, memory store rows %v", after, want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON-file store RunIndex lifecycles before a reopen = %v\nafter a reopen = %v\nmemory store = %v", got, after, want)
	}
}
