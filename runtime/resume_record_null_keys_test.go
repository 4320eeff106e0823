package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A wait a handler made without a wait key or a result key is resumed with
// a record whose wait_key and result_key are null, as Python writes None:
// an empty string there would name a key no wait had.
func TestResumeRecordOfKeylessWaitHasNullKeys(t *testing.T) {
	ctx := context.Background()
	job := func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		return Waiting(&durable.WaitState{Reason: durable.WaitJob, ResumeToNode: req.ResumeTarget()}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"job": {Func: job}}},
		callThenDoneWorkflow("job", map[string]any{"q": "x"}))
	id := startRun(t, rt, StartParams{})
	if run, err := rt.Tick(ctx, id, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v; want the run waiting on the job", err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: id, Payload: map[string]any{"a": int64(1)}}); err != nil {
		t.Fatal(err)
	}
	var resumes int
	for _, r := range listLedger(t, st, id) {
		if r.Effect == nil || r.Effect.Type != durable.EffectResume {
			continue
		}
		resumes++
		for _, k := range []string{"wait_key", "result_key"} {
			if v, ok := r.Effect.Payload[k]; !ok || v != nil {
				t.Errorf("resume record's %s = %#v (present %v); want null", k, v, ok)
			}
		}
	}
	if resumes != 1 {
		t.Errorf("ledger holds %d resume records, want 1", resumes)
	}
}
