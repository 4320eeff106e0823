package runtime_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Promise: RetryPolicy.Backoff is "exponential backoff: min(Base·2^(n-1),
// Max)" (handler.go, RetryPolicy doc; spec runtime-model.md §2.10
// "Backoff after failed attempt n = min(base * 2^(n-1), max) seconds
// (1, 2, 4, 8… capped)"; Python policy.py DefaultEffectPolicy.backoff_seconds,
// float arithmetic that never wraps). A policy whose cap is effectively
// "no cap" (Max = the largest Duration) must give a non-decreasing,
// positive back-off. The doubling loop overflows int64 nanoseconds after
// ~34 doublings of 1s: attempt 35 gets a negative back-off and attempt 64
// on gets 0, so a long retry budget hammers a failing service with no
// pause at all.
func TestRetryBackoffDoesNotWrapAround(t *testing.T) {
	t.Parallel()
	p := runtime.RetryPolicy{DefaultAttempts: 100, Base: time.Second, Max: time.Duration(math.MaxInt64)}
	eff := &durable.Effect{Type: durable.EffectLLMCall}
	prev := time.Duration(0)
	for n := 1; n <= 100; n++ {
		d := p.Backoff(eff, n)
		if d <= 0 || d < prev {
			t.Fatalf("Backoff(attempt %d) = %v after %v for attempt %d; want min(1s·2^%d, Max) (positive, non-decreasing)",
				n, d, prev, n-1, n-1)
		}
		prev = d
	}
	if got := p.Backoff(eff, 100); got != time.Duration(math.MaxInt64) {
		t.Errorf("Backoff(attempt 100) = %v, want the cap %v", got, time.Duration(math.MaxInt64))
	}
}

// Promise: Start with an explicit run id "creates the run only if absent:
// a run with that id and the same identity (workflow, session, parent,
// vars) is returned as is; a different identity is an
// *IdentityConflictError" (start.go, StartParams.RunID; docs/compatibility.md
// "explicit run ids"; spec runtime-model.md §2.2). Upstream's
// verify_run_identity (run_identity.py) compares vars._meta.creation_digest
// "when either side carries them": an existing run without a digest
// against a request that has one is a conflict. checkIdentity skips the
// vars comparison whenever the stored run has no digest (a run created by
// Start without RunID, by Python 0.4.28, or whose _meta a node replaced),
// so a create-if-absent with entirely different vars is answered "that is
// your run".
func TestStartExplicitIDAgainstRunWithoutDigestConflicts(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", Vars: map[string]any{"task": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", RunID: id, Vars: map[string]any{"task": "b"}})
	var conflict *runtime.IdentityConflictError
	if !errors.As(err, &conflict) {
		st, _ := f.rt.GetState(ctx, id)
		t.Fatalf("Start(RunID=%s, vars task=b) over a run created with task=a: got (%q, %v), want an IdentityConflictError; "+
			"the stored run still has task=%v", id, got, err, st.Vars["task"])
	}
}

// Promise: calls on one run are serialised by a per-run mutation lock
// (runtime.go, Runtime doc) — the v0.7 run_mutation_lock, which the spec
// describes as re-entrant (runtime-model.md §2.6: "the per-run re-entrant
// run_mutation_lock(run_id) held by tick and by the resume commit"). The
// StepGate is "a host callback consulted at each step boundary" (tick.go,
// StepGate; spec §2.3), and "current_iteration is never incremented by the
// kernel (workflows do it)" (§1.14) through UpdateLimits: a host gate that
// counts iterations (or pauses the run, or a handler that records usage)
// through the runtime waits on the lock its own tick holds. Called
// directly from the gate that is a deadlock forever, and every later
// Tick, Pause or Cancel of the run blocks behind it. The call is made here
// from a helper goroutine with the gate's context so the test can give up
// after 2 s and release the tick (a context-carried re-entrant lock, or an
// immediate error, would both pass).
func TestOwnRunUpdateLimitsFromStepGateDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(3))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	blocked, asked := false, false
	gate := func(ctx context.Context, run *durable.RunState, nodeID string) error {
		if asked {
			return nil
		}
		asked = true
		go func() {
			done <- f.rt.UpdateLimits(ctx, run.RunID, map[string]any{"current_iteration": 1})
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			blocked = true
		}
		return nil
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{StepGate: gate}); err != nil {
		t.Fatal(err)
	}
	if blocked {
		<-done // the tick has released the lock: the update goes through now
		t.Fatalf("UpdateLimits of the run from its own tick's StepGate blocked for 2 s on the run's lock " +
			"held by that tick (a deadlock when called directly)")
	}
}

// Promise: a node's writes that are not JSON (a cycle included) fail the
// run with an error naming the key path, never the process (start.go
// Start doc "a NaN, a channel or a cycle is refused with an error naming
// its key path"; session.go failUnserialisable: "fails the run because a
// node or handler put a value in vars ... that is not JSON"; every other
// built-in effect after such a node does exactly that). The built-in
// VARS_QUERY handler (builtin_vars.go handleVarsQuery) first walks the
// whole live vars with pyjson.IsNormalized, which has no cycle guard
// ("v must be free of cycles"): a run whose node left a self-containing
// object in vars and then asks inspect_vars for anything (here
// "scratchpad.n") overflows the goroutine stack, a fatal error that kills
// the whole process and every run in it; the cycle was never committed,
// so the replay after a restart does it again. Runs in a child process
// (runInChildProcess, badinput_cycles_depth_test.go).
func TestVarsQueryOnCyclicVarsFailsRunNotProcess(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	wf := &runtime.Workflow{ID: "cyc", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			sp := map[string]any{"n": "x"}
			sp["self"] = sp // a node bug: the scratchpad holds itself
			run.Vars["scratchpad"] = sp
			return runtime.Next("b")
		}),
		"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectVarsQuery,
				Payload: map[string]any{"path": "scratchpad.n"}, ResultKey: "q"}, "c")
		}),
		"c": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{})
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "cyc"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.rt.Tick(ctx, id, runtime.TickOptions{})
	st, err := f.rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "cycle") {
		t.Errorf("run %s %q, want failed naming the cycle in vars.scratchpad.self", st.Status, st.Error)
	}
}

// Promise: PythonIdempotencyKey "is the Python 0.4.28 key of an effect"
// (idempotency.go), byte-exact key material (spec runtime-model.md §2.9).
// Python's _normalize_tool_call_for_idempotency parses string arguments
// with _loads_dict_like, which first does text = value.strip() (policy.py:
// Unicode whitespace: NBSP, U+3000, \x0b, \x0c, \x1c-\x1f, \x85 …) and
// then json.loads. normalizeArguments (idempotency.go) hands the text to
// the JSON decoder unstripped, which accepts only JSON's four whitespace
// bytes, so arguments "\u00a0{\"a\":1}" become {} here and {"a": 1} in
// Python: a different key, and a completed tool step a Python runtime left
// unsaved is not found (the tools run again). Expected keys computed with
// the Python policy code.
func TestPythonKeyStripsArgumentsTextAsPython(t *testing.T) {
	t.Parallel()
	for _, args := range []string{"\u00a0{\"a\":1}", "{\"a\":1}\u3000", "\x0c{\"a\":1}\x1f"} {
		eff := &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": "a", "arguments": args}},
		}}
		// Python: compute_idempotency_key(run_id="r", node_id="n", effect=…)
		// with arguments parsed to {"a": 1}, as for " {\"a\":1} ".
		const want = "456022992c93a298623f1eee1880c02e"
		if got := runtime.PythonIdempotencyKey("r", "n", eff); got != want {
			t.Errorf("arguments %q: key %s, Python gives %s (text stripped, then parsed to {\"a\": 1})", args, got, want)
		}
	}
}

// Promise: pause_run stores pause_reason as reason.strip() when that is
// non-empty (spec runtime-model.md §2.7; Python runtime.py pause_run:
// "if isinstance(reason, str) and reason.strip(): control["pause_reason"] =
// reason.strip()"); the project strips as Python's str.strip() does
// (internal/pyval.Strip, store/python_strip_test.go). Pause uses
// strings.TrimSpace (control.go), which keeps U+001C..U+001F: a reason
// "\x1fbudget\x1e" is stored as is, and a reason of only such characters
// is stored where Python stores none.
func TestPauseReasonStrippedAsPython(t *testing.T) {
	t.Parallel()
	f := setup(t, askWorkflow(), chain(2))
	ctx := context.Background()
	for _, c := range []struct{ reason, want string }{{"\x1fbudget\x1e", "budget"}, {"\x1c\x1d", ""}} {
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.rt.Pause(ctx, id, c.reason)
		if err != nil {
			t.Fatal(err)
		}
		rt, _ := st.Vars["_runtime"].(map[string]any)
		ctl, _ := rt["control"].(map[string]any)
		got, has := ctl["pause_reason"]
		switch {
		case c.want == "" && has:
			t.Errorf("Pause(reason %q): pause_reason %q stored; Python's strip() leaves nothing and stores none", c.reason, got)
		case c.want != "" && got != c.want:
			t.Errorf("Pause(reason %q): pause_reason %q, Python stores %q", c.reason, got, c.want)
		}
	}
}
