package runtime_test

// ApplyEffect: one effect run on an existing run outside its graph (the
// gateway's compact_memory command), recorded and replayed as a tick's
// effect is, leaving the run where it was.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// askThenDone asks a person, then completes with the answer.
func askThenDone() *runtime.Workflow {
	return &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectAskUser, map[string]any{"prompt": "Go?"}, "answer", "done")
		}),
		"done": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Complete(map[string]any{"answer": run.Vars["answer"]})
		}),
	}}
}

// scriptedEffect answers each call with the next outcome of script (the
// last one repeated), counting calls.
type scriptedEffect struct {
	mu     sync.Mutex
	calls  int
	script []runtime.Outcome
}

func (e *scriptedEffect) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.calls++
		return e.script[min(e.calls, len(e.script))-1], nil
	}}
}

func (e *scriptedEffect) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

func applyRuntime(t *testing.T, cfg runtime.Config, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store == nil {
		st := memory.New()
		t.Cleanup(func() { _ = st.Close() })
		cfg.Store = st
	}
	cfg.Registry = reg
	rt, err := runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func ledgerOf(t *testing.T, rt *runtime.Runtime, id string) []*durable.StepRecord {
	t.Helper()
	recs, err := rt.GetLedger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestApplyEffectLeavesTheRunWhereItWasAndReusesItsResult(t *testing.T) {
	ctx := t.Context()
	eff := &scriptedEffect{script: []runtime.Outcome{runtime.Completed(map[string]any{"n": 1})}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"annotate": eff.handler()}}, askThenDone())
	before := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	if before.Status != durable.RunWaiting {
		t.Fatalf("run %s, want waiting", before.Status)
	}
	n0 := len(ledgerOf(t, rt, before.RunID))
	p := runtime.ApplyEffectParams{RunID: before.RunID, NodeID: "compact_memory", IdempotencyKey: "command:compact_memory:c1",
		Effect: &durable.Effect{Type: "annotate", Payload: map[string]any{"k": "v"}, ResultKey: "_temp.command.annotate"}}
	out, err := rt.ApplyEffect(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != runtime.OutcomeCompleted || jsonOf(t, out.Result) != `{"n":1}` {
		t.Fatalf("outcome %s %s, want completed {\"n\":1}", out.Status, jsonOf(t, out.Result))
	}
	after := mustState(t, rt, before.RunID)
	if after.Status != durable.RunWaiting || after.CurrentNode != before.CurrentNode || after.Waiting == nil ||
		after.Waiting.WaitKey != before.Waiting.WaitKey {
		t.Fatalf("run after the effect: %s at %s (wait %v); want it waiting where it was", after.Status, after.CurrentNode, after.Waiting)
	}
	if got := jsonOf(t, after.Vars["_temp"].(map[string]any)["command"]); got != `{"annotate":{"n":1}}` {
		t.Fatalf("vars._temp = %s, want the result at the effect's result key", got)
	}
	recs := ledgerOf(t, rt, before.RunID)[n0:]
	if len(recs) != 2 || recs[0].Status != durable.StepStarted || recs[1].Status != durable.StepCompleted ||
		recs[0].StepID != recs[1].StepID {
		t.Fatalf("records %s; want STARTED then COMPLETED of one step", jsonOf(t, recs))
	}
	for _, r := range recs {
		if r.NodeID != "compact_memory" || r.IdempotencyKey != "command:compact_memory:c1" || r.Effect == nil || r.Effect.Type != "annotate" {
			t.Fatalf("record %s; want node compact_memory, the caller's key, the effect", jsonOf(t, r))
		}
	}

	// The same command again: its completed record is reused.
	if out, err := rt.ApplyEffect(ctx, p); err != nil || jsonOf(t, out.Result) != `{"n":1}` {
		t.Fatalf("second apply: %v %v", out, err)
	}
	if eff.count() != 1 || len(ledgerOf(t, rt, before.RunID)) != n0+2 {
		t.Fatalf("handler called %d times, %d records; want one call and no new record", eff.count(), len(ledgerOf(t, rt, before.RunID))-n0)
	}
	// The run goes on as if nothing happened.
	done, err := rt.Resume(ctx, runtime.ResumeParams{RunID: before.RunID, WaitKey: before.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
	if err != nil || done.Status != durable.RunCompleted {
		t.Fatalf("resume after the effect: %v %v", done, err)
	}
}

func TestApplyEffectRetriesAndReportsAFailure(t *testing.T) {
	ctx := t.Context()
	flaky := &scriptedEffect{script: []runtime.Outcome{runtime.Failed("busy"), runtime.Failed("busy"), runtime.Completed(map[string]any{"ok": true})}}
	broken := &scriptedEffect{script: []runtime.Outcome{runtime.Failed("down")}}
	rt := applyRuntime(t, runtime.Config{
		Policy: runtime.RetryPolicy{DefaultAttempts: 3}, Sleep: func(context.Context, time.Duration) error { return nil },
		Handlers: map[durable.EffectType]runtime.Handler{"flaky": flaky.handler(), "broken": broken.handler()},
	}, askThenDone())
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	n0 := len(ledgerOf(t, rt, run.RunID))

	out, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k1",
		Effect: &durable.Effect{Type: "flaky"}})
	if err != nil || out.Status != runtime.OutcomeCompleted || flaky.count() != 3 {
		t.Fatalf("flaky effect: %v %v after %d calls; want completed on the third", out, err, flaky.count())
	}
	var statuses []string
	for _, r := range ledgerOf(t, rt, run.RunID)[n0:] {
		statuses = append(statuses, string(r.Status))
	}
	if got := strings.Join(statuses, ","); got != "started,failed,started,failed,started,completed" {
		t.Fatalf("records %s", got)
	}

	out, err = rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k2",
		Effect: &durable.Effect{Type: "broken", ResultKey: "r"}})
	if err != nil || out.Status != runtime.OutcomeFailed || out.Error != "Effect failed after 3 attempts: down" {
		t.Fatalf("broken effect: %+v %v; want a failed outcome, no error", out, err)
	}
	st := mustState(t, rt, run.RunID)
	if st.Status != durable.RunWaiting || st.Vars["r"] != nil {
		t.Fatalf("run %s, vars.r %v; want waiting, nothing written", st.Status, st.Vars["r"])
	}
}

func TestApplyEffectRefusesWhatItCannotDo(t *testing.T) {
	ctx := t.Context()
	waits := &scriptedEffect{script: []runtime.Outcome{runtime.Waiting(&durable.WaitState{Reason: durable.WaitUser, WaitKey: "x"})}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"waits": waits.handler()}}, askThenDone(),
		&runtime.Workflow{ID: "done", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{}) }),
		}})
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	ended := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "done"})
	n0 := len(ledgerOf(t, rt, run.RunID))
	for _, tc := range []struct {
		name string
		p    runtime.ApplyEffectParams
		want string
	}{
		{"ended run", runtime.ApplyEffectParams{RunID: ended.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "waits"}}, "run has ended"},
		{"no handler", runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "nope"}}, "no effect handler registered for nope"},
		{"no key", runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", Effect: &durable.Effect{Type: "waits"}}, "idempotency key is empty"},
		{"no node", runtime.ApplyEffectParams{RunID: run.RunID, IdempotencyKey: "k", Effect: &durable.Effect{Type: "waits"}}, "node id is empty"},
		{"not JSON", runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k",
			Effect: &durable.Effect{Type: "waits", Payload: map[string]any{"f": func() {}}}}, "effect.payload.f"},
	} {
		if _, err := rt.ApplyEffect(ctx, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: ended.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "waits"}}); !errors.Is(err, runtime.ErrRunEnded) {
		t.Errorf("ended run: %v, want ErrRunEnded", err)
	}
	if n := len(ledgerOf(t, rt, run.RunID)); n != n0 || waits.count() != 0 {
		t.Fatalf("refused calls left %d records and %d handler calls", n-n0, waits.count())
	}

	// A handler asking to wait fails the attempt: there is no node to resume.
	out, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "waits"}})
	if err != nil || out.Status != runtime.OutcomeFailed || !strings.Contains(out.Error, "outside its graph") {
		t.Fatalf("waiting handler: %+v %v; want a failed outcome", out, err)
	}
	if st := mustState(t, rt, run.RunID); st.Status != durable.RunWaiting || st.Waiting.WaitKey != run.Waiting.WaitKey {
		t.Fatalf("run %s (wait %v), want its own wait kept", st.Status, st.Waiting)
	}
}

func TestApplyEffectInterruptedByCancel(t *testing.T) {
	ctx := t.Context()
	started := make(chan struct{}, 1)
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"slow": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		started <- struct{}{}
		<-ctx.Done()
		return runtime.Outcome{}, ctx.Err()
	}}}}, askThenDone())
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	applied := make(chan error, 1)
	go func() {
		_, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "slow"}})
		applied <- err
	}()
	<-started
	if _, err := rt.Cancel(ctx, run.RunID, "stop"); err != nil {
		t.Fatal(err)
	}
	if err := <-applied; !errors.Is(err, runtime.ErrRunCancelled) {
		t.Fatalf("apply during a cancel: %v, want ErrRunCancelled", err)
	}
	st := mustState(t, rt, run.RunID)
	if st.Status != durable.RunCancelled || st.Error != "stop" {
		t.Fatalf("run %s (%q), want cancelled with the cancel's reason", st.Status, st.Error)
	}
	var cancelledAttempt bool
	for _, r := range ledgerOf(t, rt, run.RunID) {
		cancelledAttempt = cancelledAttempt || (r.NodeID == "n" && r.Status == durable.StepCancelled)
	}
	if !cancelledAttempt {
		t.Fatalf("no cancelled attempt in %s", jsonOf(t, ledgerOf(t, rt, run.RunID)))
	}
}

// The gateway's compact_memory command: MEMORY_COMPACT applied to a run
// waiting for a person compacts its own messages, through the summariser
// child, and is not made twice for the same command.
func TestApplyEffectCompactsAWaitingRunsMessages(t *testing.T) {
	for _, kind := range []string{"memory", "jsonfile", "sqlite"} {
		t.Run(kind, func(t *testing.T) { testApplyEffectCompacts(t, kind) })
	}
}

func testApplyEffectCompacts(t *testing.T, kind string) {
	ctx := t.Context()
	st := storeOfKind(t, kind)
	llm := &scriptedLLM{content: `{"summary": "They talked.", "key_points": [], "confidence": 0.9}`}
	rt := applyRuntime(t, runtime.Config{Store: st, Artifacts: artifact.NewMemory(),
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}}, askThenDone())
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", Vars: map[string]any{"context": map[string]any{"messages": conversation(8)}}})
	if err != nil {
		t.Fatal(err)
	}
	run := tickDone(t, rt, id)
	p := runtime.ApplyEffectParams{RunID: id, NodeID: "compact_memory", IdempotencyKey: "command:compact_memory:c9",
		Effect: &durable.Effect{Type: durable.EffectMemoryCompact, Payload: map[string]any{"preserve_recent": 2, "compression_mode": "standard"},
			ResultKey: "_temp.command.compact_memory"}}
	out, err := rt.ApplyEffect(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(jsonOf(t, out.Result), `"success":true`) || llm.calls() != 1 {
		t.Fatalf("compaction %s after %d LLM calls; want success after one", jsonOf(t, out.Result), llm.calls())
	}
	after := mustState(t, rt, id)
	msgs := messagesOf(after)
	// The system prompt, the summary and the two preserved turns.
	if len(msgs) != 4 || !strings.Contains(jsonOf(t, msgs[1]), "They talked.") {
		t.Fatalf("messages after compaction: %s", jsonOf(t, msgs))
	}
	if after.Status != durable.RunWaiting || after.Waiting.WaitKey != run.Waiting.WaitKey {
		t.Fatalf("run %s (wait %v), want it waiting as before", after.Status, after.Waiting)
	}
	if _, err := rt.ApplyEffect(ctx, p); err != nil {
		t.Fatal(err)
	}
	if llm.calls() != 1 || jsonOf(t, messagesOf(mustState(t, rt, id))) != jsonOf(t, msgs) {
		t.Fatalf("the same command again called the LLM %d times in all, messages %s; want once, unchanged",
			llm.calls(), jsonOf(t, messagesOf(mustState(t, rt, id))))
	}
}

// steppingClock moves a millisecond at each read, so that every commit
// has its own updated_at.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

// A tick interrupted during its external effect (a shutdown), or paused
// during a retry's back-off, leaves the plan in flight in its checkpoint.
// An effect applied to the run meanwhile keeps that plan current: the next
// tick (or the resume-run) runs the interrupted effect, not its node again.
func TestApplyEffectKeepsTheRunsPlanInFlight(t *testing.T) {
	for _, pause := range []bool{false, true} {
		name := "interrupted tick"
		if pause {
			name = "then paused"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			var mu sync.Mutex
			calls, seen := 0, ""
			entered := make(chan struct{}, 1)
			llm := func(hctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				if n == 1 {
					entered <- struct{}{}
					<-hctx.Done()
					return runtime.Failed("llm call: " + hctx.Err().Error()), nil
				}
				return runtime.Completed(map[string]any{"answer": "42"}), nil
			}
			note := func(hctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				rtv, _ := req.Run.Vars["_runtime"].(map[string]any)
				if _, ok := rtv["effect_in_flight"]; ok {
					seen = "the handler saw the plan in flight"
				}
				return runtime.Completed(map[string]any{"ok": true}), nil
			}
			agent := &runtime.Workflow{ID: "agent", Entry: "agent", Nodes: map[string]runtime.NodeFunc{
				"agent": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					tmp, _ := run.Vars["_temp"].(map[string]any)
					if tmp == nil {
						tmp = map[string]any{}
						run.Vars["_temp"] = tmp
					}
					if tmp["phase"] == "called" {
						res, _ := tmp["res"].(map[string]any)
						return runtime.Complete(map[string]any{"answer": res["answer"]}), nil
					}
					tmp["phase"] = "called"
					return runtime.Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "_temp.res"}, "agent"), nil
				},
			}}
			rt := applyRuntime(t, runtime.Config{Clock: steppingClock(),
				Handlers: map[durable.EffectType]runtime.Handler{"llm": {Func: llm}, "note": {Func: note}}}, agent)
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "agent"})
			if err != nil {
				t.Fatal(err)
			}
			tctx, cancel := context.WithCancel(ctx)
			ticked := make(chan error, 1)
			go func() { _, err := rt.Tick(tctx, id, runtime.TickOptions{}); ticked <- err }()
			<-entered
			cancel()
			if err := <-ticked; !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted tick: %v", err)
			}
			if pause {
				if _, err := rt.Pause(ctx, id, "operator"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: id, NodeID: "compact_memory", IdempotencyKey: "command:c1",
				Effect: &durable.Effect{Type: "note"}}); err != nil {
				t.Fatal(err)
			}
			var st *durable.RunState
			if pause {
				st, err = rt.ResumeRun(ctx, id)
			} else {
				st, err = rt.Tick(ctx, id, runtime.TickOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != durable.RunCompleted || st.Output["answer"] != "42" || calls != 2 || seen != "" {
				t.Fatalf("run %s, output %v, llm called %d times %s; want completed with the replayed effect's answer",
					st.Status, st.Output, calls, seen)
			}
		})
	}
}

// A run cancelled during an effect applied to it ends there: its parent,
// waiting on it, is handed its end by the time ApplyEffect returns.
func TestApplyEffectCancelledChildResumesItsParent(t *testing.T) {
	ctx := t.Context()
	started := make(chan struct{}, 1)
	slow := func(ctx context.Context, _ *runtime.EffectRequest) (runtime.Outcome, error) {
		started <- struct{}{}
		<-ctx.Done()
		return runtime.Outcome{}, ctx.Err()
	}
	parent := &runtime.Workflow{ID: "p", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "c", "async": true, "wait": true}, "sub", "end")
		}),
		"end": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	child := &runtime.Workflow{ID: "c", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"wait_key": "go"}, "go", "wait")
		}),
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"slow": {Func: slow}}}, parent, child)
	p := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "p"})
	cid := runtime.WaitedChild(p)
	if cid == "" {
		t.Fatalf("parent %s, want it waiting on its child", p.Status)
	}
	applied := make(chan error, 1)
	go func() {
		_, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: cid, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "slow"}})
		applied <- err
	}()
	<-started
	if _, err := rt.Cancel(ctx, cid, "stop"); err != nil {
		t.Fatal(err)
	}
	if err := <-applied; !errors.Is(err, runtime.ErrRunCancelled) {
		t.Fatalf("apply during a cancel: %v, want ErrRunCancelled", err)
	}
	if got := mustState(t, rt, p.RunID); got.Status != durable.RunCompleted {
		t.Fatalf("parent %s, want it resumed with its cancelled child's end and completed", got.Status)
	}
}

// A handler that leaves a value in the run that is not JSON: nothing of
// the effect is kept, the attempt is recorded failed naming the value, and
// the run is left as it was, not failed.
func TestApplyEffectHandlerLeavingTheRunUnserialisable(t *testing.T) {
	ctx := t.Context()
	bad := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		req.Run.Vars["bad"] = func() {}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"bad": {Func: bad, Local: true}}}, askThenDone())
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	_, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "bad", ResultKey: "r"}})
	if err == nil || !strings.Contains(err.Error(), "vars.bad") {
		t.Fatalf("apply of a handler that broke the run: %v, want an error naming vars.bad", err)
	}
	st := mustState(t, rt, run.RunID)
	if st.Status != durable.RunWaiting || st.Vars["bad"] != nil || st.Vars["r"] != nil {
		t.Fatalf("run %s (%q), vars %v; want it waiting as before", st.Status, st.Error, st.Vars)
	}
	recs := ledgerOf(t, rt, run.RunID)
	last := recs[len(recs)-1]
	if last.NodeID != "n" || last.Status != durable.StepFailed || !strings.Contains(last.Error, "vars.bad") {
		t.Fatalf("last record %s, want the attempt failed naming vars.bad", jsonOf(t, last))
	}
	// Only the completion is recorded failed: the attempt's STARTED record
	// stays as it was, not a second failure.
	var keyed []durable.StepStatus
	for _, r := range recs {
		if r.IdempotencyKey == "k" {
			keyed = append(keyed, r.Status)
		}
	}
	if len(keyed) != 2 || keyed[0] != durable.StepStarted || keyed[1] != durable.StepFailed {
		t.Fatalf("records under the key: %v, want [started failed]", keyed)
	}
}

// A pause asked for during a retry's back-off waits for the effect's
// attempts: it is not a step of the run's graph that a pause stops.
func TestApplyEffectRetriesThroughAPauseRequest(t *testing.T) {
	ctx := t.Context()
	flaky := &scriptedEffect{script: []runtime.Outcome{runtime.Failed("busy"), runtime.Completed(map[string]any{"ok": true})}}
	var rt *runtime.Runtime
	var id string
	var once sync.Once
	paused := make(chan error, 1)
	sleep := func(sctx context.Context, d time.Duration) error {
		once.Do(func() {
			go func() { _, err := rt.Pause(context.Background(), id, "op"); paused <- err }()
		})
		select {
		case <-sctx.Done():
			return sctx.Err()
		case <-time.After(100 * time.Millisecond):
			return nil
		}
	}
	rt = applyRuntime(t, runtime.Config{Policy: runtime.RetryPolicy{DefaultAttempts: 3}, Sleep: sleep,
		Handlers: map[durable.EffectType]runtime.Handler{"flaky": flaky.handler()}}, loopingListener())
	id = wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"}).RunID
	out, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: id, NodeID: "n", IdempotencyKey: "k1", Effect: &durable.Effect{Type: "flaky"}})
	if err != nil || out.Status != runtime.OutcomeCompleted || flaky.count() != 2 {
		t.Fatalf("apply with a pause asked for during its back-off: %+v %v after %d calls; want completed on the second", out, err, flaky.count())
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	if st := mustState(t, rt, id); !runtime.IsPaused(st) {
		t.Fatalf("run %s, want paused once the effect ended", st.Status)
	}
}

// A completed record with a null result is reused as any other.
func TestApplyEffectReusesANullResult(t *testing.T) {
	ctx := t.Context()
	none := &scriptedEffect{script: []runtime.Outcome{runtime.Completed(nil)}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"none": none.handler()}}, askThenDone())
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	p := runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k1", Effect: &durable.Effect{Type: "none"}}
	for range 2 {
		if _, err := rt.ApplyEffect(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if none.count() != 1 {
		t.Fatalf("handler called %d times, want once", none.count())
	}
}
