package runtime

// Effect execution (execute.go): when an attempt starts, what it records
// and when that is durable, and how retries and their back-off meet a
// cancel or a pause.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// callThenDoneWorkflow: node "call" requests one effect of type typ with
// payload into vars.r and moves to "done", which completes.
func callThenDoneWorkflow(typ durable.EffectType, payload map[string]any) *Workflow {
	return &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: typ, Payload: payload, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
}

// startRun starts workflow "w" on rt.
func startRun(t *testing.T, rt *Runtime, p StartParams) string {
	t.Helper()
	if p.WorkflowID == "" {
		p.WorkflowID = "w"
	}
	id, err := rt.Start(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// listLedger lists the run's ledger from the store.
func listLedger(t *testing.T, st store.Store, id string) []*durable.StepRecord {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// lastNodeTrace is the last node trace entry of node.
func lastNodeTrace(t *testing.T, run *durable.RunState, node string) map[string]any {
	t.Helper()
	rt, _ := run.Vars["_runtime"].(map[string]any)
	traces, _ := rt["node_traces"].(map[string]any)
	tr, _ := traces[node].(map[string]any)
	steps, _ := tr["steps"].([]any)
	if len(steps) == 0 {
		t.Fatalf("no trace of node %s in %v", node, run.Vars["_runtime"])
	}
	e, _ := steps[len(steps)-1].(map[string]any)
	return e
}

// execute: "Nothing leaves the process for a caller that went away; the
// run stays before the effect." A caller gone while the node ran must not
// reach an external handler.
func TestExternalEffectNotStartedForACallerThatWentAway(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Completed(map[string]any{"answer": "42"}), nil
	}
	tctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			cancel() // the caller goes away while the node runs
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "r"}, "done"), nil
		},
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id := startRun(t, rt, StartParams{})
	_, err := rt.Tick(tctx, id, TickOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("tick of a caller gone: err %v, want context.Canceled", err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the external handler ran %d times for a caller that went away; want 0", n)
	}
	for _, r := range listLedger(t, st, id) {
		if r.Effect != nil && r.Effect.Type == "llm" {
			t.Errorf("ledger holds a %s record of the effect that was never started", r.Status)
		}
	}
	run, _ := rt.GetState(context.Background(), id)
	if run.Status != durable.RunRunning || run.CurrentNode != "call" {
		t.Errorf("run %s at %q, want still running before the effect (call)", run.Status, run.CurrentNode)
	}
}

// callHandler: "Cancelled before it started (during the node or the
// STARTED checkpoint): the attempt is recorded cancelled, never run."
func TestEffectCancelledDuringItsNodeNeverRunsTheHandler(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Completed(map[string]any{"answer": "42"}), nil
	}
	var rt *Runtime
	var id string
	cancelled := make(chan error, 1)
	var once sync.Once
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			hostStopsOnce(&once, rt, id, cancelled, func() error {
				_, err := rt.Cancel(context.Background(), id, "user cancelled")
				return err
			})
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	st := memory.New()
	rt = errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id = startRun(t, rt, StartParams{})
	_, _ = rt.Tick(context.Background(), id, TickOptions{})
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for an attempt cancelled before it started; want 0", n)
	}
	run, _ := rt.GetState(context.Background(), id)
	if run.Status != durable.RunCancelled {
		t.Errorf("run %s, want cancelled", run.Status)
	}
	var got []durable.StepStatus
	for _, r := range listLedger(t, st, id) {
		if r.Effect != nil && r.Effect.Type == "llm" {
			got = append(got, r.Status)
		}
	}
	if len(got) != 2 || got[0] != durable.StepStarted || got[1] != durable.StepCancelled {
		t.Errorf("records of the effect %v, want [started cancelled]", got)
	}
}

// Spec §2.2: a STARTED record has ended_at null; it is set when the record
// is finished (completed, waiting, failed).
func TestStartedRecordHasNoEndedAt(t *testing.T) {
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		return Completed(map[string]any{"answer": "42"}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}},
		callThenDoneWorkflow("llm", map[string]any{"prompt": "q"}))
	id := startRun(t, rt, StartParams{})
	if _, err := rt.Tick(context.Background(), id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range listLedger(t, st, id) {
		if r.Effect == nil || r.Effect.Type != "llm" {
			continue
		}
		seen++
		switch r.Status {
		case durable.StepStarted:
			if !r.EndedAt.IsZero() {
				t.Errorf("STARTED record ended_at = %v, want null", r.EndedAt)
			}
		case durable.StepCompleted:
			if r.EndedAt.IsZero() {
				t.Errorf("COMPLETED record has no ended_at")
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d records of the effect, want 2", seen)
	}
}

// execute: "checkpoints taken while it is in flight (its STARTED record, a
// failed attempt before a retry, ...)": the failed attempt is durable
// before the retry backoff starts.
func TestFailedAttemptIsDurableBeforeTheRetryBackoff(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		if calls.Add(1) == 1 {
			return Failed("provider unavailable"), nil
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}
	st := memory.New()
	var id string
	var during []string
	sleep := func(sctx context.Context, d time.Duration) error {
		for _, r := range listLedger(t, st, id) {
			if r.Effect != nil && r.Effect.Type == "llm" {
				during = append(during, string(r.Status))
			}
		}
		return nil
	}
	rt := errRuntime(t, st, Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 2},
		Sleep:    sleep,
	}, callThenDoneWorkflow("llm", map[string]any{"prompt": "q"}))
	id = startRun(t, rt, StartParams{})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	if len(during) != 2 || during[0] != "started" || during[1] != "failed" {
		t.Errorf("ledger during the backoff holds %v of the effect, want [started failed] (attempt 1 committed)", during)
	}
}

// effectStep: "The completion of an effect that left the process becomes
// durable at once and together with the move past its node: a run
// replayed from this checkpoint never executes it again." It is in the
// store before the next node runs.
func TestExternalCompletionIsDurableBeforeTheNextNodeRuns(t *testing.T) {
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		return Completed(map[string]any{"answer": "42"}), nil
	}
	st := memory.New()
	var id string
	var storedNode string
	var completed bool
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "r"}, "next")
		}),
		"next": errNode(func(run *durable.RunState) StepPlan {
			cur, err := st.RunGet(context.Background(), id)
			if err == nil {
				storedNode = cur.CurrentNode
			}
			for _, r := range listLedger(t, st, id) {
				if r.Effect != nil && r.Effect.Type == "llm" && r.Status == durable.StepCompleted {
					completed = true
				}
			}
			return Complete(map[string]any{})
		}),
	}}
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id = startRun(t, rt, StartParams{})
	if _, err := rt.Tick(context.Background(), id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if !completed || storedNode != "next" {
		t.Errorf("when the next node ran, the store held the completion: %v, the run at %q; want true at next", completed, storedNode)
	}
}

// Spec §2.3: a result reused from the ledger is traced with
// reused_prior_result true (here: a non-atomic store whose commit of the
// completion appended the record but failed to save the state).
func TestReusedResultIsTracedAsReused(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Completed(map[string]any{"answer": "42"}), nil
	}
	// Commit 1: the STARTED checkpoint; commit 2: the completion.
	st := &storetest.HalfCommit{Store: memory.New(), FailAt: 2}
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}},
		callThenDoneWorkflow("llm", map[string]any{"prompt": "q"}))
	id := startRun(t, rt, StartParams{})
	if _, err := rt.Tick(context.Background(), id, TickOptions{}); err == nil {
		t.Fatal("first tick: no error from the half commit")
	}
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("second tick: %v %v", run, err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1 (the completed record reused)", n)
	}
	if e := lastNodeTrace(t, run, "call"); e["reused_prior_result"] != true {
		t.Errorf("trace of the reused effect: reused_prior_result = %v, want true", e["reused_prior_result"])
	}
}

// backoff: "A cancel of the run cuts it short, as it cancels an attempt
// in flight; the caller then sees the stop request": the tick stops as
// for any cancel, without an error of its own.
func TestCancelCutsTheRetryBackoffShortWithoutATickError(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Failed("provider unavailable"), nil
	}
	var rt *Runtime
	var id string
	cancelled := make(chan error, 1)
	var once sync.Once
	sleep := func(sctx context.Context, d time.Duration) error {
		hostStopsOnce(&once, rt, id, cancelled, func() error {
			_, err := rt.Cancel(context.Background(), id, "user cancelled")
			return err
		})
		select {
		case <-sctx.Done():
			return context.Cause(sctx)
		case <-time.After(10 * time.Second):
			return nil
		}
	}
	rt = errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
	}, callThenDoneWorkflow("llm", map[string]any{}))
	id = startRun(t, rt, StartParams{})
	start := time.Now()
	_, terr := rt.Tick(context.Background(), id, TickOptions{})
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the cancel did not cut the backoff short")
	}
	if terr != nil {
		t.Errorf("tick cancelled during its retry backoff: error %v, want none (a stop)", terr)
	}
	run, _ := rt.GetState(context.Background(), id)
	if run.Status != durable.RunCancelled || calls.Load() != 1 {
		t.Errorf("run %s after %d attempts, want cancelled after 1", run.Status, calls.Load())
	}
}

// cancellable/backoff: a pause requested while an attempt runs stops the
// tick before the next attempt without waiting out the backoff (Pause
// waits for the tick, and a backoff may last up to a minute).
func TestPauseDuringAFailingAttemptSkipsTheBackoff(t *testing.T) {
	var rt *Runtime
	var id string
	paused := make(chan error, 1)
	var once sync.Once
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		hostStopsOnce(&once, rt, id, paused, func() error {
			_, err := rt.Pause(context.Background(), id, "operator")
			return err
		})
		return Failed("provider unavailable"), nil
	}
	var slept atomic.Int32
	sleep := func(sctx context.Context, d time.Duration) error {
		slept.Add(1)
		return nil
	}
	rt = errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
	}, callThenDoneWorkflow("llm", map[string]any{}))
	id = startRun(t, rt, StartParams{})
	if _, err := rt.Tick(context.Background(), id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	if n := slept.Load(); n != 0 {
		t.Errorf("the tick waited out %d retry backoff(s) after a pause was requested; want none", n)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d attempts, want 1 (no attempt after the pause)", n)
	}
	run, _ := rt.GetState(context.Background(), id)
	if !IsPaused(run) {
		t.Errorf("run %s not paused", run.Status)
	}
}

// A handler that fails with an empty message: Python's retry loop records
// `last_error = outcome.error or "unknown error"` on the failed record and
// in "Effect failed after N attempts: <last error>". Ours recorded a null
// error and a run error ending in ": ".
func TestExecuteFailedWithoutMessageIsUnknownError(t *testing.T) {
	ctx := context.Background()
	wf := effectThenComplete(&durable.Effect{Type: "x", Payload: map[string]any{}})
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{
		"x": {Func: func(context.Context, *EffectRequest) (Outcome, error) { return Failed(""), nil }},
	}}, wf)
	id, st := startTickW(t, rt)
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var failedErr = "<no failed record>"
	for _, r := range recs {
		if r.Status == durable.StepFailed {
			failedErr = r.Error
		}
	}
	if st.Error != "Effect failed after 1 attempts: unknown error" || failedErr != "unknown error" {
		t.Fatalf("run error %q, failed record error %q; want %q and %q (Python: outcome.error or \"unknown error\")",
			st.Error, failedErr, "Effect failed after 1 attempts: unknown error", "unknown error")
	}
}

// zeroAttemptsPolicy is a host's EffectPolicy that breaks its contract
// (MaxAttempts ≥ 1) by allowing no attempt at all.
type zeroAttemptsPolicy struct{}

func (zeroAttemptsPolicy) MaxAttempts(*durable.Effect) int            { return 0 }
func (zeroAttemptsPolicy) Backoff(*durable.Effect, int) time.Duration { return 0 }

// An effect is attempted at least once whatever the policy says: a host
// policy that answers 0 attempts (a zero value, a missing map entry) must
// not fail every effect "after 0 attempts" without its handler ever
// being called.
func TestEffectAttemptedOnceUnderAPolicyAllowingNone(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Completed(map[string]any{"answer": "42"}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Policy: zeroAttemptsPolicy{}, Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}},
		callThenDoneWorkflow("llm", map[string]any{"prompt": "q"}))
	id := startRun(t, rt, StartParams{})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted || calls.Load() != 1 {
		t.Fatalf("run %s (error %q), handler called %d times; want completed after one call", run.Status, run.Error, calls.Load())
	}
	if r, _ := run.Vars["r"].(map[string]any); r["answer"] != "42" {
		t.Errorf("vars.r = %v, want the handler's result", run.Vars["r"])
	}
}
