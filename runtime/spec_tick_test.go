package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// specRuntime is a runtime over st serving wfs with the handlers and policy.
func specRuntime(t *testing.T, st store.Store, hs map[durable.EffectType]runtime.Handler, policy runtime.EffectPolicy, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: hs, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// specStartTick starts wfID on rt and ticks it once.
func specStartTick(t *testing.T, rt *runtime.Runtime, wfID string) *durable.RunState {
	t.Helper()
	return wevStartTick(t, rt, runtime.StartParams{WorkflowID: wfID})
}

// Spec §2.1: "caller-supplied handlers are merged over them (a host may
// replace a built-in)", and a handler receives the plan's next node as its
// default resume target.
func TestSpecHostHandlerReplacesABuiltin(t *testing.T) {
	var defaultNext string
	ask := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		defaultNext = req.DefaultNext
		return runtime.Completed(map[string]any{"text": "auto"}), nil
	}}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	rt := specRuntime(t, st, map[durable.EffectType]runtime.Handler{durable.EffectAskUser: ask}, nil, askWorkflow())
	run := specStartTick(t, rt, "ask")
	if run.Status != durable.RunCompleted || run.Output["answer"] != "auto" {
		t.Fatalf("run %s output %v; want completed by the host's ASK_USER handler", run.Status, run.Output)
	}
	if defaultNext != "done" {
		t.Errorf("handler's DefaultNext = %q; want the plan's next node \"done\"", defaultNext)
	}
}

// Spec §2.3 step 1 (and §2.12 get_state): a run id the store does not hold
// is an error (Python: `Unknown run_id: <id>`), for tick, resume and reads.
func TestSpecUnknownRunIDIsAnError(t *testing.T) {
	f := setup(t, chain(1))
	ctx := context.Background()
	if _, err := f.rt.Tick(ctx, "ghost", runtime.TickOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Tick of an unknown run: %v; want store.ErrNotFound", err)
	}
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: "ghost"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resume of an unknown run: %v; want store.ErrNotFound", err)
	}
	if _, err := f.rt.GetState(ctx, "ghost"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetState of an unknown run: %v; want store.ErrNotFound", err)
	}
}

// Spec §2.3 step 3 / §2.5: a due UNTIL wait is released by tick "without
// writing anything to result_key and without a ledger record" (no resume
// record).
func TestSpecDueUntilReleaseAppendsNoResumeRecord(t *testing.T) {
	f := setup(t, waitUntilWorkflow("due", func(rc *runtime.RunContext) string {
		return durable.FormatTime(rc.Now().Add(time.Minute))
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "due"})
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("first tick: %v %v", st, err)
	}
	before, _ := f.rt.GetLedger(ctx, id)
	f.now = f.now.Add(2 * time.Minute)
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick after the deadline: %v %v", st, err)
	}
	after, _ := f.rt.GetLedger(ctx, id)
	for _, r := range after[len(before):] {
		if r.Effect != nil && (r.Effect.Type == durable.EffectResume || r.Effect.Type == durable.EffectWaitUntil) {
			t.Errorf("the release appended a %s record (%s); want none", r.Effect.Type, r.Status)
		}
	}
}

// Spec §2.3 step 4.5.l: an effect that completes on a plan without
// next_node completes the run with output {"success": true, "result":
// <result>} and no plan-completion record, then the terminal status event.
func TestSpecCompletedEffectWithoutNextNodeEndsTheRun(t *testing.T) {
	wf := &runtime.Workflow{ID: "last", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "job", Payload: map[string]any{}, ResultKey: "r"}, "")
		}),
	}}
	job := runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"v": "x"}), nil
	}}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	rt := specRuntime(t, st, map[durable.EffectType]runtime.Handler{"job": job}, nil, wf)
	run := specStartTick(t, rt, "last")
	if run.Status != durable.RunCompleted || feJSON(run.Output) != feJSON(map[string]any{"success": true, "result": map[string]any{"v": "x"}}) {
		t.Fatalf("run %s output %v; want completed with {success: true, result: {v: x}}", run.Status, run.Output)
	}
	if r, _ := run.Vars["r"].(map[string]any); r["v"] != "x" {
		t.Errorf("vars.r = %v; want the result at result_key", run.Vars["r"])
	}
	recs, _ := rt.GetLedger(context.Background(), run.RunID)
	for _, r := range recs {
		if r.Effect == nil {
			t.Errorf("plan-completion record %v in this path; want none", r.Result)
		}
	}
	if last := recs[len(recs)-1]; !runtime.IsTerminalStatusRecord(last) || last.IdempotencyKey != runtime.TerminalStatusKey(durable.RunCompleted) {
		t.Errorf("last record %+v; want the terminal status event", last)
	}
}

// Spec §2.3 step 4.5.d: "A null result counts as 'no prior result', so
// effects completing with null are re-executed on replay" (here a
// non-atomic store whose commit of the completion appended the record but
// failed to save the state).
func TestSpecNullResultIsNotReusedOnReplay(t *testing.T) {
	var calls atomic.Int32
	job := runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Completed(nil), nil
	}}
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "job", Payload: map[string]any{"q": "1"}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	// Commit 1: the STARTED checkpoint; commit 2: the completion.
	st := &storetest.HalfCommit{Store: memory.New(), FailAt: 2}
	rt := specRuntime(t, st, map[durable.EffectType]runtime.Handler{"job": job}, nil, wf)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("first tick: no error from the half commit")
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("second tick: %v %v", run, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("handler ran %d times; want 2 (a null completed result is not reused)", n)
	}
}

// Spec §2.4 step 6 / §2.10: a waiting outcome is recorded with result
// {"wait": …} and "waits are never retried", whatever the policy allows.
func TestSpecWaitingOutcomeIsNeverRetried(t *testing.T) {
	var calls atomic.Int32
	job := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Waiting(&durable.WaitState{Reason: durable.WaitJob, WaitKey: "job:1", ResumeToNode: req.DefaultNext, ResultKey: "r"}), nil
	}}
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "job", Payload: map[string]any{}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	rt := specRuntime(t, st, map[durable.EffectType]runtime.Handler{"job": job},
		runtime.RetryPolicy{DefaultAttempts: 3, Base: -1}, wf)
	run := specStartTick(t, rt, "w")
	if run.Status != durable.RunWaiting || calls.Load() != 1 {
		t.Fatalf("run %s after %d calls; want waiting after one call", run.Status, calls.Load())
	}
	recs, _ := rt.GetLedger(context.Background(), run.RunID)
	if len(recs) != 2 || recs[0].Status != durable.StepStarted || recs[1].Status != durable.StepWaiting || recs[1].Attempt != 1 {
		t.Fatalf("ledger %s; want one started and one waiting record (attempt 1)", feSummary(recs))
	}
	res, _ := recs[1].Result.(map[string]any)
	if w, _ := res["wait"].(map[string]any); w["wait_key"] != "job:1" || w["reason"] != "job" {
		t.Errorf("waiting record result %v; want {\"wait\": <the wait>}", recs[1].Result)
	}
	// Step 4.5.k: the waiting step writes _temp.prev_* as a transition does.
	if tmp, _ := mustGet(t, rt, run.RunID).Vars["_temp"].(map[string]any); tmp["prev_node_id"] != "call" || tmp["prev_next_node"] != "done" {
		t.Errorf("_temp = %v; want prev_node_id call, prev_next_node done", tmp)
	}
}

// Spec §2.3 step 4.4: a pure transition's `next_node` must be set (Python
// raises; compatibility.md "node returns no next node/effect/output": the
// run fails with a clear error, recorded as a node failure).
func TestSpecNodeWithoutNextNodeFailsTheRun(t *testing.T) {
	f := setup(t, &runtime.Workflow{ID: "empty", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(*durable.RunState, *runtime.RunContext) runtime.StepPlan { return runtime.StepPlan{} }),
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "empty"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunFailed || run.Error != `node "a" returned no next node, effect or output` {
		t.Fatalf("run %s error %q; want failed naming the node", run.Status, run.Error)
	}
	if got := statuses(t, f, id); got != "a:plan:failed a:emit_event:completed" {
		t.Errorf("ledger %q; want the node's failed record and the status event", got)
	}
}

// Spec §2.4 steps 1–6: each attempt is a StepRecord with a new step_id,
// attempt n and the effect's idempotency key, appended STARTED and then
// appended again finished (same step_id) with its error or result.
func TestSpecAttemptRecordsShareStepIDAndKey(t *testing.T) {
	var key string
	var calls atomic.Int32
	job := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		key = req.IdempotencyKey
		if calls.Add(1) == 1 {
			return runtime.Failed("flaky"), nil
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "job", Payload: map[string]any{}, ResultKey: "r"}, "")
		}),
	}}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	rt := specRuntime(t, st, map[durable.EffectType]runtime.Handler{"job": job}, runtime.RetryPolicy{DefaultAttempts: 2, Base: -1}, wf)
	run := specStartTick(t, rt, "w")
	if run.Status != durable.RunCompleted {
		t.Fatalf("run %s (%s)", run.Status, run.Error)
	}
	recs, _ := rt.GetLedger(context.Background(), run.RunID)
	if len(recs) < 4 {
		t.Fatalf("ledger %s", feSummary(recs))
	}
	want := []struct {
		status  durable.StepStatus
		attempt int
	}{{durable.StepStarted, 1}, {durable.StepFailed, 1}, {durable.StepStarted, 2}, {durable.StepCompleted, 2}}
	for i, w := range want {
		r := recs[i]
		if r.Status != w.status || r.Attempt != w.attempt || r.IdempotencyKey != key || r.StepID == "" || r.NodeID != "call" {
			t.Errorf("record %d: %s attempt %d key %q step %q; want %s attempt %d key %q", i, r.Status, r.Attempt, r.IdempotencyKey, r.StepID, w.status, w.attempt, key)
		}
	}
	if recs[0].StepID != recs[1].StepID || recs[2].StepID != recs[3].StepID || recs[0].StepID == recs[2].StepID {
		t.Errorf("step ids %s %s %s %s; want one per attempt, shared by its start and end", recs[0].StepID, recs[1].StepID, recs[2].StepID, recs[3].StepID)
	}
	if recs[1].Error != "flaky" {
		t.Errorf("failed record error %q; want flaky", recs[1].Error)
	}
}

// Spec §2.1: "An exception raised by a handler is converted to
// failed("Effect handler raised exception: <msg>")" (a Go handler's error or
// panic), and §2.10: such failures are retried like any failed outcome.
func TestSpecHandlerErrorIsAFailedOutcome(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func() (runtime.Outcome, error)
		want string
	}{
		{"error", func() (runtime.Outcome, error) { return runtime.Outcome{}, errors.New("boom") }, "Effect handler raised exception: boom"},
		{"panic", func() (runtime.Outcome, error) { panic("bang") }, "Effect handler raised exception: panic: bang"},
	} {
		var calls atomic.Int32
		job := runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
			calls.Add(1)
			return c.fn()
		}}
		wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
			"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: "job", Payload: map[string]any{}}, "")
			}),
		}}
		st := memory.New()
		t.Cleanup(func() { st.Close() })
		rt := specRuntime(t, st, map[durable.EffectType]runtime.Handler{"job": job}, runtime.RetryPolicy{DefaultAttempts: 2, Base: -1}, wf)
		run := specStartTick(t, rt, "w")
		if want := "Effect failed after 2 attempts: " + c.want; run.Status != durable.RunFailed || run.Error != want {
			t.Errorf("%s: run %s error %q; want failed with %q", c.name, run.Status, run.Error, want)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("%s: handler called %d times; want 2 (retried)", c.name, n)
		}
	}
}

// Spec §2.10: RetryPolicy() gives llm_call 3 attempts, tool_calls 2, others
// 1, with backoff min(1s * 2^(n-1), 30s) after failed attempt n.
func TestSpecLLMRetryPolicyTable(t *testing.T) {
	p := runtime.LLMRetry
	for typ, want := range map[durable.EffectType]int{durable.EffectLLMCall: 3, durable.EffectToolCalls: 2, durable.EffectAskUser: 1, "custom": 1} {
		if got := p.MaxAttempts(&durable.Effect{Type: typ}); got != want {
			t.Errorf("MaxAttempts(%s) = %d; want %d", typ, got, want)
		}
	}
	eff := &durable.Effect{Type: durable.EffectToolCalls}
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		if got := p.Backoff(eff, n+1); got != want {
			t.Errorf("Backoff(attempt %d) = %v; want %v", n+1, got, want)
		}
	}
}
