package crashtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// flowJobWait: a host-wired external effect that submits a job and waits
// for it (the handler returns runtime.Waiting with a job wait); the host
// resumes the wait with the job's result, then the run charges.
//
// The job is submitted once: once the attempt's waiting end record (spec
// runtime-model.md §2 "effect attempt end | completed/waiting/failed") is
// durable, a restart does not call the handler again. On the JSON-file
// store a kill between the ledger append and the run-file replace of the
// commit that records the wait (json/kill-NN-between) leaves that record
// durable with the run at the STARTED checkpoint; the replay reuses the
// recorded wait (runtime/execute.go durableWait) as it reuses a completed
// result. The handler reports a second call made after its waiting
// record was durable as a problem.
var flowJobWait = &crashFlow{name: "job_wait", exact: true,
	handlers: func(w *cfWorld) map[durable.EffectType]runtime.Handler {
		return map[durable.EffectType]runtime.Handler{"submit": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			recs, err := req.Runtime.Store().LedgerList(ctx, &store.LedgerListParams{RunID: req.Run.RunID})
			if err == nil {
				for _, r := range recs {
					if r.IdempotencyKey == req.IdempotencyKey && r.Status == durable.StepWaiting {
						w.problem("job %s submitted again after its waiting record (step %s) was durable", req.IdempotencyKey, r.StepID)
					}
				}
			}
			w.log.add("submit " + req.IdempotencyKey)
			return runtime.Waiting(&durable.WaitState{Reason: durable.WaitJob, WaitKey: "job:" + req.IdempotencyKey,
				ResumeToNode: req.ResumeTarget(), ResultKey: req.Effect.ResultKey}), nil
		}}}
	},
	workflows: func() []*runtime.Workflow {
		return []*runtime.Workflow{{ID: "job_wait", Entry: "submit", Nodes: map[string]runtime.NodeFunc{
			"submit": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: "submit", Payload: map[string]any{"n": int64(1)}, ResultKey: "job"}, "pay")
			}),
			"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(81, "r", "done") }),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
				job, _ := run.Vars["job"].(map[string]any)
				return runtime.Complete(map[string]any{"r": cfReceipt(run, "r"), "job": job["out"]})
			}),
		}}}
	},
	host: func(ctx context.Context, e *cfEnv) error {
		if err := cfStart(ctx, e, "job_wait", "cf-job", ""); err != nil {
			return err
		}
		for range 10 {
			if err := e.sch.Recover(ctx); err != nil {
				return err
			}
			st, err := e.rt.Tick(ctx, "cf-job", runtime.TickOptions{})
			if err != nil {
				return err
			}
			if st.Status.Terminal() {
				return nil
			}
			if st.Status == durable.RunWaiting && st.Waiting.Reason == durable.WaitJob && strings.HasPrefix(st.Waiting.WaitKey, "job:") {
				if _, err := e.rt.Resume(ctx, runtime.ResumeParams{RunID: "cf-job", WaitKey: st.Waiting.WaitKey,
					Payload: map[string]any{"out": "done"}}); err != nil {
					return err
				}
			}
		}
		return errors.New("the flow did not end")
	},
}

// TestCrashJobWaitNotResubmitted runs flowJobWait with a kill at every
// commit phase on every store.
func TestCrashJobWaitNotResubmitted(t *testing.T) {
	t.Parallel()
	runCrashFlow(t, flowJobWait)
}
