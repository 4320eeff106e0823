package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestPausedTypedVarsNotDue: a waiting run whose host pause is held
// in typed Go maps (vars._runtime = map[string]map[string]bool{"control":
// {"paused": true}}) is stored paused: every read (RunGet) gives vars in
// the decoder's types, and HostPaused() of what is read back is true. The
// due index must then leave it out (store.Deadline: "unless a host paused
// the run"), as it does for the same run committed with map[string]any.
// RunCommit indexes the deadline from the caller's un-normalized vars
// (s.due.Update(&next)), where HostPaused's type assertions do not see the
// pause, so RunListDue lists a run the store itself says is paused.
func TestPausedTypedVarsNotDue(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &durable.RunState{
		RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
		Vars:      map[string]any{"_runtime": map[string]map[string]bool{"control": {"paused": true}}},
		Waiting:   &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(base.Add(time.Second))},
		CreatedAt: durable.NewTime(base), UpdatedAt: durable.NewTime(base),
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.HostPaused() {
		t.Fatalf("the stored run does not read back paused: vars %#v", got.Vars)
	}
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: base.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Errorf("RunListDue lists %v, a run that RunGet reads back as paused (store.Deadline leaves paused runs out)", due)
	}
	if next, _ := s.RunNextDue(ctx); !next.IsZero() {
		t.Errorf("RunNextDue = %v for a paused run, want zero", next)
	}
}

func nestedArrays(n int) any {
	v := any("leaf")
	for range n {
		v = []any{v}
	}
	return v
}

// TestDeepValueUnderInvalidKeyRefused: frozen.NewStoredRun
// promises "An r that cannot be encoded is an error", and the memory store
// refuses vars nested past the encoder's limit (TestRefusesWhatNoDurable-
// StoreCanWrite). Under an object key that is not valid UTF-8, the
// one-pass freeze (internal/frozen/stored.go, normalizedObject) falls back
// to pyjson.NormalizeObject(m), which counts depth from m rather than from
// the run document's root, and packs the result with p.object, which
// checks no depth: a value exactly at the limit under such a key is
// accepted, while every durable store's encoder refuses the run.
func TestDeepValueUnderInvalidKeyRefused(t *testing.T) {
	n := pyjson.MaxDepth - 1
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{"k\xff": nestedArrays(n)}}
	if _, err := durable.MarshalRun(r, pyjson.Line); err == nil {
		t.Fatalf("the encoder accepts %d levels; the test needs a run it refuses", n)
	}
	if err := memory.New().RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true}); err == nil {
		t.Error("RunCommit accepted vars that the encoder (every durable store) refuses as nested too deep")
	}
}
