package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A handler's change of a field the kernel owns fails its attempt and is
// undone (callHandler, kernelFields.restore): the retry of the effect gets
// the run as it was, and the run is committed so. Were parent_run_id,
// created_at or the status left as the failed attempt set them, the retry
// would see them, and the run would end under another parent (its end
// resuming a run that never started it) or another creation time.
func TestHandlerRetryGetsTheKernelFieldsAFailedAttemptChanged(t *testing.T) {
	ctx := context.Background()
	reg := badEffectThenDone(t)
	var seen []durable.RunState
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg,
		Policy: runtime.RetryPolicy{DefaultAttempts: 2, Base: -1},
		Handlers: map[durable.EffectType]runtime.Handler{
			"bad": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				seen = append(seen, *req.Run)
				if req.Attempt == 1 {
					req.Run.ParentRunID = "someone-else"
					req.Run.CreatedAt = durable.NewTime(req.Run.CreatedAt.AddDate(-1, 0, 0))
					req.Run.Status = "bogus"
				}
				return runtime.Completed("done"), nil
			}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("handler called %d times, want 2 (the changing attempt failed, then retried)", len(seen))
	}
	first, retry := seen[0], seen[1]
	if retry.ParentRunID != "" || !retry.CreatedAt.Equal(first.CreatedAt.Time) || retry.Status != durable.RunRunning {
		t.Errorf("retry got parent %q, created_at %v, status %q; want %q, %v, %q as before the failed attempt",
			retry.ParentRunID, retry.CreatedAt, retry.Status, "", first.CreatedAt, durable.RunRunning)
	}
	if got.Status != durable.RunCompleted || got.ParentRunID != "" || !got.CreatedAt.Equal(first.CreatedAt.Time) {
		t.Errorf("run %s with parent %q, created_at %v; want completed, parent %q, created_at %v",
			got.Status, got.ParentRunID, got.CreatedAt, "", first.CreatedAt)
	}
}
