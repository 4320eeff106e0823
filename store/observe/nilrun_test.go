package observe_test

// The observable store decorator with a commit that has no run.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// RunCommit read p.Run.RunID before calling the inner store, so a commit
// without a run panicked with a nil dereference inside the decorator,
// where every backend (and the offload decorator, which checks p.Run ==
// nil) returns an error ("run id is required"). A decorator should not
// turn the inner store's error into a crash of the caller.
func TestRunCommitWithoutRunReturnsInnerError(t *testing.T) {
	ctx := context.Background()
	innerErr := memory.New().RunCommit(ctx, &store.CommitParams{})
	if innerErr == nil {
		t.Fatal("memory store accepted a commit without a run")
	}
	st := observe.Wrap(memory.New())
	sub := st.Subscribe("", 1)
	defer sub.Cancel()
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("observe.Store.RunCommit(no run) panicked: %v; the inner store returns %q", p, innerErr)
			}
		}()
		err = st.RunCommit(ctx, &store.CommitParams{})
	}()
	if err == nil && !t.Failed() {
		t.Errorf("RunCommit(no run) = nil, want the inner store's error %q", innerErr)
	}
}
