package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Respond to a run stored with status "waiting" but no wait (another
// writer may store one so) says the run is not waiting (spec §2.6 step 1),
// as a StaleResumeError with NoWait, not a key mismatch.
func TestRespondToWaitingRunWithoutWaitSaysNotWaiting(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	wf := longAfterAsk("ask-count", true)
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	run.Status = durable.RunWaiting
	run.Waiting = nil
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	_, err = sch.Respond(ctx, id, map[string]any{"text": "x"})
	var stale *runtime.StaleResumeError
	if !errors.As(err, &stale) || !stale.NoWait || !strings.Contains(err.Error(), "not waiting") {
		t.Fatalf("Respond error %v; want a StaleResumeError saying the run is not waiting (NoWait)", err)
	}
}
