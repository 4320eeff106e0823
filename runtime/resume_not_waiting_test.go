package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// A run stored with status "waiting" but no wait (a Python writer can
// save one: waiting is nullable) cannot be resumed, and the error says
// the run is not waiting (spec §2.6 step 1, as Python's resume), not that
// the caller's key mismatched an empty stored key.
func TestResumeOfWaitingRunWithoutWaitSaysNotWaiting(t *testing.T) {
	f := setup(t, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	run, err := f.st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	run.Status = durable.RunWaiting
	run.Waiting = nil
	if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	_, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "k", Payload: map[string]any{"text": "x"}})
	var stale *runtime.StaleResumeError
	if !errors.As(err, &stale) || !stale.NoWait {
		t.Fatalf("resume error %v; want a StaleResumeError with NoWait", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "not waiting") || strings.Contains(msg, "mismatch") {
		t.Fatalf("error %q; want it to say the run is not waiting, not blame the key", msg)
	}
}
