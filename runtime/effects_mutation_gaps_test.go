package runtime

// Tests added by a mutation-testing round over the kernel's effect paths
// (execute.go, followretry.go, toolcalls.go, builtin_subworkflow.go,
// builtin_events.go, resume.go, control.go): each guards a promise of the
// spec, the docs or a doc comment that no earlier test checked.

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

// kfxCallThenDone: node "call" requests one effect of type typ with
// payload into vars.r and moves to "done", which completes.
func kfxCallThenDone(typ durable.EffectType, payload map[string]any) *Workflow {
	return &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: typ, Payload: payload, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
}

// kfxStart starts workflow "w" on rt.
func kfxStart(t *testing.T, rt *Runtime, p StartParams) string {
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

// kfxLedger lists the run's ledger from the store.
func kfxLedger(t *testing.T, st store.Store, id string) []*durable.StepRecord {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// kfxLastTrace is the last node trace entry of node.
func kfxLastTrace(t *testing.T, run *durable.RunState, node string) map[string]any {
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
	id := kfxStart(t, rt, StartParams{})
	_, err := rt.Tick(tctx, id, TickOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("tick of a caller gone: err %v, want context.Canceled", err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the external handler ran %d times for a caller that went away; want 0", n)
	}
	for _, r := range kfxLedger(t, st, id) {
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
	id = kfxStart(t, rt, StartParams{})
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
	for _, r := range kfxLedger(t, st, id) {
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
		kfxCallThenDone("llm", map[string]any{"prompt": "q"}))
	id := kfxStart(t, rt, StartParams{})
	if _, err := rt.Tick(context.Background(), id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range kfxLedger(t, st, id) {
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
		for _, r := range kfxLedger(t, st, id) {
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
	}, kfxCallThenDone("llm", map[string]any{"prompt": "q"}))
	id = kfxStart(t, rt, StartParams{})
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
			for _, r := range kfxLedger(t, st, id) {
				if r.Effect != nil && r.Effect.Type == "llm" && r.Status == durable.StepCompleted {
					completed = true
				}
			}
			return Complete(map[string]any{})
		}),
	}}
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id = kfxStart(t, rt, StartParams{})
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
		kfxCallThenDone("llm", map[string]any{"prompt": "q"}))
	id := kfxStart(t, rt, StartParams{})
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
	if e := kfxLastTrace(t, run, "call"); e["reused_prior_result"] != true {
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
	}, kfxCallThenDone("llm", map[string]any{}))
	id = kfxStart(t, rt, StartParams{})
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
	}, kfxCallThenDone("llm", map[string]any{}))
	id = kfxStart(t, rt, StartParams{})
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

// followRetry.gen: "a retry settles the entry only if nothing kept it
// again meanwhile": a follow-up kept again while its retry runs stays kept
// when that retry succeeds.
func TestRetryDoesNotSettleAFollowUpKeptAgainWhileItRan(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }})
	f := followUp{kind: followTick, runID: "r1"}
	rt.retryLater(ctx, f, false)
	now = now.Add(time.Hour)
	due := rt.takeDueRetries()
	if len(due) != 1 {
		t.Fatalf("due retries: %d, want 1", len(due))
	}
	rt.retryLater(ctx, f, false) // kept again (a new failure) while the retry runs
	rt.settleFollowUp(ctx, due[0], nil)
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept; the retry settled an entry kept again after it was taken", n)
	}
}

// kfxToolCallsRun runs one TOOL_CALLS effect with payload at node "call"
// (looping back to it loops times) and returns the run and the payloads
// the handler received.
func kfxToolCallsRun(t *testing.T, payload map[string]any, loops int) (*durable.RunState, []map[string]any) {
	t.Helper()
	var seen []map[string]any
	handler := func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		seen = append(seen, req.Effect.Payload)
		return Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			tmp := namespace(run.Vars, "_temp")
			n, _ := tmp["n"].(int64)
			tmp["n"] = n + 1
			next := "done"
			if int(n+1) < loops {
				next = "call"
			}
			return Request(&durable.Effect{Type: durable.EffectToolCalls, Payload: payload, ResultKey: "r"}, next)
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{durable.EffectToolCalls: {Func: handler}}}, wf)
	id := kfxStart(t, rt, StartParams{})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	return run, seen
}

// toolCallID: "call_id, or id when call_id is absent or null": a call
// whose call_id is null is not missing its id, and keeps id as call_id.
func TestToolCallWithNullCallIDUsesItsID(t *testing.T) {
	run, seen := kfxToolCallsRun(t, map[string]any{"tool_calls": []any{
		map[string]any{"call_id": nil, "id": "abc", "name": "x"},
	}}, 1)
	if w := run.Vars["_flow_warnings"]; w != nil {
		t.Errorf("_flow_warnings %v, want none (the call has id abc)", w)
	}
	call := seen[0]["tool_calls"].([]any)[0].(map[string]any)
	if call["call_id"] != "abc" {
		t.Errorf("call_id handed to the handler %v, want abc (its id)", call["call_id"])
	}
}

// warnToolCallIDs: "the ids given to more than one call": an id given
// three times is listed once.
func TestToolCallIDGivenThreeTimesIsListedOnce(t *testing.T) {
	run, _ := kfxToolCallsRun(t, map[string]any{"tool_calls": []any{
		map[string]any{"call_id": "a", "name": "x"},
		map[string]any{"call_id": "a", "name": "x"},
		map[string]any{"call_id": "a", "name": "x"},
	}}, 1)
	w, _ := run.Vars["_flow_warnings"].([]any)
	want := "#WARN: TOOL_CALLS duplicate call_id at node 'call' (a)"
	if len(w) != 1 || w[0] != want {
		t.Errorf("_flow_warnings %v, want [%q]", w, want)
	}
}

// warnToolCallIDs/addFlowWarning: vars._flow_warnings is "a list of
// unique strings": a loop repeating the same calls warns once.
func TestToolCallWarningsAreNotRepeatedByALoop(t *testing.T) {
	run, seen := kfxToolCallsRun(t, map[string]any{"tool_calls": []any{
		map[string]any{"name": "x"},
	}}, 3)
	if len(seen) != 3 {
		t.Fatalf("handler called %d times, want 3", len(seen))
	}
	w, _ := run.Vars["_flow_warnings"].([]any)
	want := "#WARN: TOOL_CALLS missing call_id at node 'call' (count=1)"
	if len(w) != 1 || w[0] != want {
		t.Errorf("_flow_warnings %v, want [%q] once", w, want)
	}
}

// withRuntimeCallIDs: the handler gets "a deduplicated, sorted
// allowed_tools" (trimmed, blanks dropped), the authored effect left as is.
func TestToolCallsHandlerGetsCanonicalAllowedTools(t *testing.T) {
	authored := []any{" search", "read", "search", "", "read "}
	_, seen := kfxToolCallsRun(t, map[string]any{
		"tool_calls":    []any{map[string]any{"call_id": "c1", "name": "read"}},
		"allowed_tools": authored,
	}, 1)
	got, _ := seen[0]["allowed_tools"].([]any)
	if len(got) != 2 || got[0] != "read" || got[1] != "search" {
		t.Errorf("allowed_tools handed to the handler %v, want [read search]", got)
	}
	if authored[0] != " search" || len(authored) != 5 {
		t.Errorf("authored allowed_tools changed: %v", authored)
	}
}

// kfxChildRun has a parent (vars pvars, session sid) start child "c" with
// payload sync and returns the child's state.
func kfxChildRun(t *testing.T, pvars map[string]any, sid string, payload map[string]any) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	var childID string
	parent := &Workflow{ID: "w", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan {
			r, _ := run.Vars["r"].(map[string]any)
			childID, _ = r["sub_run_id"].(string)
			return Complete(map[string]any{})
		}),
	}}
	child := &Workflow{ID: "c", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	id := kfxStart(t, rt, StartParams{Vars: pvars, SessionID: sid})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted || childID == "" {
		t.Fatalf("parent tick: %v %v (child %q)", run, err, childID)
	}
	c, err := rt.GetState(ctx, childID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Spec §3.6: the parent's workspace_* vars are copied into the child
// "unless the child sets them".
func TestSubworkflowChildKeepsTheWorkspaceItSets(t *testing.T) {
	c := kfxChildRun(t, map[string]any{"workspace_root": "/parent", "workspace_access_mode": "rw"}, "",
		map[string]any{"workflow_id": "c", "vars": map[string]any{"workspace_root": "/child"}})
	if c.Vars["workspace_root"] != "/child" {
		t.Errorf("child workspace_root %v, want /child (set by the child)", c.Vars["workspace_root"])
	}
	if c.Vars["workspace_access_mode"] != "rw" {
		t.Errorf("child workspace_access_mode %v, want rw (inherited)", c.Vars["workspace_access_mode"])
	}
}

// Spec §3.6: session_id defaults to the parent's session_id.
func TestSubworkflowChildInheritsTheParentsSession(t *testing.T) {
	c := kfxChildRun(t, nil, "sess-1", map[string]any{"workflow_id": "c"})
	if c.SessionID != "sess-1" {
		t.Errorf("child session %q, want the parent's sess-1", c.SessionID)
	}
}

// Spec §3.1: ASK_USER's allow_free_text defaults to true.
func TestAskUserAllowsFreeTextByDefault(t *testing.T) {
	rt := errRuntime(t, memory.New(), Config{}, kfxCallThenDone(durable.EffectAskUser, map[string]any{"prompt": "Continue?"}))
	id := kfxStart(t, rt, StartParams{})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	if !run.Waiting.AllowFreeText {
		t.Errorf("ask_user without allow_free_text: wait allow_free_text false, want true")
	}
}

// kfxWaitEventRun starts and ticks a "listen" run and returns it waiting.
func kfxWaitEventRun(t *testing.T, rt *Runtime) *durable.RunState {
	t.Helper()
	id := kfxStart(t, rt, StartParams{WorkflowID: "listen"})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	return run
}

// kfxEventRuntime registers a listener workflow "listen" (WAIT_EVENT with
// the payload listen gives) and an emitter "emit" (EMIT_EVENT with the
// payload emit gives, result at vars.r).
func kfxEventRuntime(t *testing.T, now time.Time, listen func(run *durable.RunState) map[string]any, emit map[string]any) *Runtime {
	t.Helper()
	listener := &Workflow{ID: "listen", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: listen(run), ResultKey: "ev"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	emitter := &Workflow{ID: "emit", Entry: "e", Nodes: map[string]NodeFunc{
		"e": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectEmitEvent, Payload: emit, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan {
			return Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	return errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }}, listener, emitter)
}

// Spec §3.3: WAIT_EVENT keeps prompt only when it is a non-blank string.
func TestWaitEventDropsABlankPrompt(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := kfxEventRuntime(t, now, func(*durable.RunState) map[string]any {
		return map[string]any{"name": "ping", "prompt": "   "}
	}, nil)
	run := kfxWaitEventRun(t, rt)
	if run.Waiting.Prompt != "" {
		t.Errorf("wait prompt %q, want none for a blank prompt", run.Waiting.Prompt)
	}
}

// handleWaitEvent/eventDeadline: timeout_s must be "a non-negative
// number": 0 is a deadline of now, not an error; a blank until counts as
// absent.
func TestWaitEventDeadlineFromZeroTimeoutAndBlankUntil(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		payload map[string]any
		want    time.Time
	}{
		{map[string]any{"name": "ping", "timeout_s": int64(0)}, now},
		{map[string]any{"name": "ping", "until": "  ", "timeout_s": int64(5)}, now.Add(5 * time.Second)},
	} {
		rt := kfxEventRuntime(t, now, func(*durable.RunState) map[string]any { return c.payload }, nil)
		run := kfxWaitEventRun(t, rt)
		if !run.Waiting.Until.Time.Equal(c.want) {
			t.Errorf("payload %v: wait until %v, want %v", c.payload, run.Waiting.Until, c.want)
		}
	}
}

// Spec §3.5: the global scope's scope id is the literal "global", whatever
// id is given.
func TestEventKeyGlobalScopeIDIsGlobal(t *testing.T) {
	for _, sid := range []string{"", "s1"} {
		key, err := EventKey("global", "ping", sid)
		if err != nil || key != "evt:global:global:ping" {
			t.Errorf("EventKey(global, ping, %q) = %q, %v; want evt:global:global:ping", sid, key, err)
		}
	}
}

// EMIT_EVENT: "resumes every non-paused run waiting on the event's key"
// (spec §3.5 step 2: paused runs are skipped, not reported).
func TestEmitEventSkipsPausedListeners(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := kfxEventRuntime(t, now, func(*durable.RunState) map[string]any {
		return map[string]any{"name": "ping", "scope": "global"}
	}, map[string]any{"name": "ping", "scope": "global"})
	l := kfxWaitEventRun(t, rt)
	if _, err := rt.Pause(ctx, l.RunID, ""); err != nil {
		t.Fatal(err)
	}
	id := kfxStart(t, rt, StartParams{WorkflowID: "emit"})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	if resumed, _ := r["resumed"].([]any); len(resumed) != 0 || r["delivered"] != int64(0) {
		t.Errorf("emit result %v; want nothing delivered and the paused listener not listed in resumed", r)
	}
	after, _ := rt.GetState(ctx, l.RunID)
	if after.Status != durable.RunWaiting || !IsPaused(after) {
		t.Errorf("paused listener %s (paused %v), want still waiting and paused", after.Status, IsPaused(after))
	}
}

// sessionListeners: "the event names runs of a session wait on ... (at
// most 15)".
func TestEmitEventListsAtMostFifteenSessionListeners(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	rt := kfxEventRuntime(t, now, func(*durable.RunState) map[string]any {
		n++
		return map[string]any{"name": "ev" + string(rune('a'+n)), "session_id": "s1"}
	}, map[string]any{"name": "nobody", "session_id": "s1"})
	for range 16 {
		kfxWaitEventRun(t, rt)
	}
	id := kfxStart(t, rt, StartParams{WorkflowID: "emit", SessionID: "s1"})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	if avail, _ := r["available_listeners_in_session"].([]any); len(avail) != 15 {
		t.Errorf("available_listeners_in_session lists %d names, want 15 of the 16", len(avail))
	}
}

// kfxResumedValue parks a run in the wait a handler returns (reason,
// details) and resumes it with payload; it returns what the resume stored
// at the result key.
func kfxResumedValue(t *testing.T, reason durable.WaitReason, details, payload map[string]any) any {
	t.Helper()
	ctx := context.Background()
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		return Waiting(&durable.WaitState{Reason: reason, WaitKey: "k1", ResumeToNode: "done", ResultKey: "r", Details: details}), nil
	}
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "host", Payload: map[string]any{}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{"host": {Func: handler}}}, wf)
	id := kfxStart(t, rt, StartParams{})
	if run, err := rt.Tick(ctx, id, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	run, err := rt.Resume(ctx, ResumeParams{RunID: id, WaitKey: "k1", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	return run.Vars["r"]
}

// resumeValue / spec §2.6: a wrapped subworkflow wait resumed with a
// payload that is already a tool result ({mode, results}) stores it as
// given, not wrapped a second time.
func TestWrappedSubworkflowResumeKeepsAToolResultPayload(t *testing.T) {
	payload := map[string]any{"mode": "executed", "results": []any{
		map[string]any{"call_id": "c1", "name": "agent", "success": true, "output": "done", "error": nil},
	}}
	got := kfxResumedValue(t, durable.WaitSubworkflow, map[string]any{"wrap_as_tool_result": true, "sub_run_id": "child-1"}, payload)
	m, _ := got.(map[string]any)
	res, _ := m["results"].([]any)
	first, _ := res[0].(map[string]any)
	if len(res) != 1 || first["call_id"] != "c1" || first["output"] != "done" {
		t.Errorf("stored %v, want the host's tool result as given", got)
	}
}

// mergeBlockedResults: the results are rebuilt "only when ... the host's
// results are fewer or more" than the calls; as many as the calls are
// stored as the host gave them.
func TestToolWaitResumeWithAllResultsIsNotMerged(t *testing.T) {
	details := map[string]any{
		"mode":                "delegated",
		"original_call_count": int64(2),
		"blocked_by_index":    map[string]any{"0": map[string]any{"call_id": "b0", "success": false, "error": "blocked"}},
	}
	payload := map[string]any{"mode": "executed", "results": []any{
		map[string]any{"call_id": "h0", "success": true},
		map[string]any{"call_id": "h1", "success": true},
	}}
	got := kfxResumedValue(t, durable.WaitEvent, details, payload)
	m, _ := got.(map[string]any)
	res, _ := m["results"].([]any)
	var ids []any
	for _, r := range res {
		ids = append(ids, r.(map[string]any)["call_id"])
	}
	if len(ids) != 2 || ids[0] != "h0" || ids[1] != "h1" {
		t.Errorf("stored results %v, want the host's [h0 h1] unmerged", ids)
	}
}

// kfxPauseOnList pauses a run right after the first RunList of event
// listeners, so a delivery finds it paused meanwhile.
type kfxPauseOnList struct {
	store.Store
	once  sync.Once
	pause func()
}

func (s *kfxPauseOnList) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	runs, err := s.Store.RunList(ctx, p)
	if p.WaitReason == durable.WaitEvent && len(runs) > 0 {
		s.once.Do(s.pause)
	}
	return runs, err
}

// EmitEvent: "a listener that moved on or was paused meanwhile is not an
// error".
func TestEmitEventToAListenerPausedMeanwhileIsNoError(t *testing.T) {
	ctx := context.Background()
	listener := &Workflow{ID: "listen", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "ping", "scope": "global"}, ResultKey: "ev"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	st := &kfxPauseOnList{Store: memory.New()}
	rt := errRuntime(t, st, Config{}, listener)
	l := kfxStart(t, rt, StartParams{WorkflowID: "listen"})
	if run, err := rt.Tick(ctx, l, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", run, err)
	}
	st.pause = func() {
		if _, err := rt.Pause(ctx, l, ""); err != nil {
			t.Error(err)
		}
	}
	got, err := rt.EmitEvent(ctx, EmitParams{Name: "ping", Scope: "global"})
	if err != nil || len(got) != 0 {
		t.Errorf("EmitEvent to a listener paused meanwhile: delivered %v, error %v; want none, no error", got, err)
	}
	after, _ := rt.GetState(ctx, l)
	if !IsPaused(after) || after.Status != durable.RunWaiting {
		t.Errorf("listener %s paused %v, want still waiting, paused", after.Status, IsPaused(after))
	}
}

// approvalResults: an approval_required wait's calls are answered from
// {"approved": ...} only; a denial's reason is trimmed (Python:
// str(reason or "Denied by user").strip()); a payload without "approved"
// is stored as given.
func TestApprovalWaitResumeReadsApprovedOnly(t *testing.T) {
	details := func() map[string]any {
		return map[string]any{"mode": "approval_required", "tool_calls": []any{
			map[string]any{"call_id": "c1", "name": "rm"},
		}}
	}
	got := kfxResumedValue(t, durable.WaitUser, details(), map[string]any{"approved": false, "reason": "  not now  "})
	m, _ := got.(map[string]any)
	res, _ := m["results"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["error"] != "not now" {
		t.Errorf("denied with a padded reason: stored %v, want one failed call with error %q", got, "not now")
	}
	got = kfxResumedValue(t, durable.WaitUser, details(), map[string]any{"note": "hello"})
	if m, _ := got.(map[string]any); len(m) != 1 || m["note"] != "hello" {
		t.Errorf("resumed without approved: stored %v, want the payload as given", got)
	}
}

// syntheticToolCompletion: the completed record it appends for a tool
// wait answered by the host is that of the waiting attempt (same key,
// same attempt), here the second.
func TestSyntheticToolCompletionKeepsTheWaitingAttempt(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		if calls.Add(1) == 1 {
			return Failed("transient"), nil
		}
		return Waiting(&durable.WaitState{Reason: durable.WaitEvent, WaitKey: "tools:1", ResumeToNode: "done", ResultKey: "r",
			Details: map[string]any{"mode": "delegated"}}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{
		Handlers: map[durable.EffectType]Handler{durable.EffectToolCalls: {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 2},
		Sleep:    func(context.Context, time.Duration) error { return nil },
	}, kfxCallThenDone(durable.EffectToolCalls, map[string]any{"tool_calls": []any{map[string]any{"call_id": "c1", "name": "x"}}}))
	id := kfxStart(t, rt, StartParams{})
	if run, err := rt.Tick(ctx, id, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: id, WaitKey: "tools:1", Payload: map[string]any{"mode": "executed", "results": []any{}}}); err != nil {
		t.Fatal(err)
	}
	var waitingKey string
	for _, r := range kfxLedger(t, st, id) {
		if r.Effect == nil || r.Effect.Type != durable.EffectToolCalls {
			continue
		}
		switch r.Status {
		case durable.StepWaiting:
			waitingKey = r.IdempotencyKey
		case durable.StepCompleted:
			if r.IdempotencyKey != waitingKey || r.Attempt != 2 {
				t.Errorf("synthetic completion: key %q attempt %d, want the waiting record's key %q and attempt 2", r.IdempotencyKey, r.Attempt, waitingKey)
			}
			return
		}
	}
	t.Fatal("no synthetic completion of the tool step in the ledger")
}

// openAttemptEnd: Cancel ends an attempt an interrupted tick left open
// with a "cancelled" end record, error "cancelled", as an attempt
// cancelled in flight ends.
func TestCancelEndsAnOpenAttemptAsCancelled(t *testing.T) {
	ctx := context.Background()
	entered := make(chan struct{}, 1)
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		entered <- struct{}{}
		<-hctx.Done()
		return Failed("llm call: " + hctx.Err().Error()), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}},
		kfxCallThenDone("llm", map[string]any{"prompt": "q"}))
	id := kfxStart(t, rt, StartParams{})
	interruptTick(t, rt, id, entered)
	if _, err := rt.Cancel(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	var started *durable.StepRecord
	for _, r := range kfxLedger(t, st, id) {
		if r.Effect == nil || r.Effect.Type != "llm" {
			continue
		}
		switch r.Status {
		case durable.StepStarted:
			started = r
		case durable.StepCancelled:
			if started == nil || r.StepID != started.StepID || r.Error != "cancelled" || r.EndedAt.IsZero() {
				t.Errorf("end of the open attempt: step %s error %q ended_at %v; want step %v, error \"cancelled\", an end time",
					r.StepID, r.Error, r.EndedAt, started)
			}
			return
		}
	}
	t.Fatal("no cancelled end of the open attempt in the ledger")
}

// Spec §2.10: pause stores the (trimmed) pause_reason; resume_run
// "removes paused and pause_reason, sets resumed_at".
func TestResumeRunRemovesThePauseReason(t *testing.T) {
	ctx := context.Background()
	rt := errRuntime(t, memory.New(), Config{}, kfxCallThenDone(durable.EffectAskUser, map[string]any{"prompt": "?"}))
	id := kfxStart(t, rt, StartParams{})
	run, err := rt.Pause(ctx, id, "  maintenance  ")
	if err != nil {
		t.Fatal(err)
	}
	if ctl := controlOf(run.Vars); ctl["pause_reason"] != "maintenance" {
		t.Errorf("paused: pause_reason %q, want the trimmed reason", ctl["pause_reason"])
	}
	run, err = rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ctl := controlOf(run.Vars)
	if _, has := ctl["pause_reason"]; has {
		t.Errorf("after resume_run: control %v still holds pause_reason", ctl)
	}
	if _, has := ctl["paused"]; has || ctl["resumed_at"] == nil {
		t.Errorf("after resume_run: control %v, want no paused and a resumed_at", ctl)
	}
}

// kfxWrappedSyncChild has a parent start child "c" (whose node returns
// plan) synchronously, wrapped as a tool result, and returns vars.r.
func kfxWrappedSyncChild(t *testing.T, plan func() (StepPlan, error)) map[string]any {
	t.Helper()
	ctx := context.Background()
	parent := kfxCallThenDone(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "c", "wrap_as_tool_result": true})
	child := &Workflow{ID: "c", Entry: "a", Nodes: map[string]NodeFunc{
		"a": func(context.Context, *durable.RunState, *RunContext) (StepPlan, error) { return plan() },
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	id := kfxStart(t, rt, StartParams{})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("parent: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	res, _ := r["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("vars.r %v, want a tool result with one entry", r)
	}
	return res[0].(map[string]any)
}

// Spec §3.6: a sync child that failed gives, wrapped, an error tool
// result (the parent's effect completes).
func TestWrappedSyncSubworkflowFailureIsAnErrorToolResult(t *testing.T) {
	e := kfxWrappedSyncChild(t, func() (StepPlan, error) { return StepPlan{}, errors.New("boom") })
	if e["success"] != false || e["error"] == nil {
		t.Errorf("tool result entry %v, want success false with the child's error", e)
	}
}

// subworkflowToolOutput: the report is kept "when short" (Python:
// len(report) <= 4000 characters, not bytes).
func TestWrappedSubworkflowReportLengthCountsCharacters(t *testing.T) {
	report := ""
	for range 3000 {
		report += "é" // 3000 characters, 6000 bytes
	}
	e := kfxWrappedSyncChild(t, func() (StepPlan, error) {
		return Complete(map[string]any{"answer": "ok", "report": report}), nil
	})
	out, _ := e["output"].(map[string]any)
	if out["report"] != report {
		t.Errorf("a 3000-character report was dropped from the tool output %v", out)
	}
}
