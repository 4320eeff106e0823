package runtime

// Error paths of the kernel: store failures, interruptions and cancels at
// awkward moments. Each test failed on the code before its fix.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

func errRuntime(t *testing.T, st store.Store, cfg Config, wfs ...*Workflow) *Runtime {
	t.Helper()
	reg, err := NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Registry = st, reg
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func errNode(fn func(run *durable.RunState) StepPlan) NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
		return fn(run), nil
	}
}

// effectThenComplete is workflow "w": node a requests eff and goes on to
// node b, which completes the run with an empty output.
func effectThenComplete(eff *durable.Effect) *Workflow {
	return &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan {
			e := *eff // each request its own effect, as when built in the node
			return Request(&e, "b")
		}),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
}

// startTickW starts workflow "w" on rt and ticks it once: the run's id
// and the state the tick left.
func startTickW(t *testing.T, rt *Runtime) (string, *durable.RunState) {
	t.Helper()
	ctx := context.Background()
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return id, st
}

// On a non-atomic store a commit can fail after appending its records.
// The tick must not commit them again (it retried them once, appending the
// terminal status event twice); the next tick starts from what the store
// holds and finishes the run with one terminal record.
func TestFailedCommitIsNotRetriedInTheSameTick(t *testing.T) {
	ctx := context.Background()
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Next("b") }),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	st := &storetest.HalfCommit{Store: memory.New(), FailAt: 1}
	rt := errRuntime(t, st, Config{}, wf)
	if rt.atomic {
		t.Fatal("the wrapper must be non-atomic")
	}
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	_, tickErr := rt.Tick(ctx, id, TickOptions{})
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	terminal, steps := 0, map[string]int{}
	for _, r := range recs {
		if r.IdempotencyKey == TerminalStatusKey(durable.RunCompleted) {
			terminal++
		}
		steps[r.StepID]++
	}
	t.Logf("tick error: %v; run %s; %d ledger records", tickErr, run.Status, len(recs))
	if terminal != 1 {
		t.Errorf("terminal status records = %d, want 1", terminal)
	}
	for sid, n := range steps {
		if n > 1 {
			t.Errorf("record with step id %s appended %d times", sid, n)
		}
	}
	if tickErr == nil || run.Status != durable.RunRunning {
		t.Fatalf("after the failed commit: tick error %v, run %s; want the error and the run left running", tickErr, run.Status)
	}
	if st, err := rt.Tick(ctx, id, TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("next tick: %v, %v", st, err)
	}
	recs, err = rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	terminal = 0
	for _, r := range recs {
		if r.IdempotencyKey == TerminalStatusKey(durable.RunCompleted) {
			terminal++
		}
	}
	if terminal != 1 {
		t.Errorf("after the next tick: %d terminal status records, want 1", terminal)
	}
}

// A node may change vars and request an effect in the same step (the
// VisualFlow agent node does: it sets its phase, then asks for the child
// run or the structured LLM call, resuming to itself). The checkpoint
// taken before a non-local effect used to commit those changes while the
// run still stood at the node, so a tick interrupted during the effect
// left a run whose replay called the node on its own writes: it took the
// "effect done" branch and completed without the effect. The checkpoint
// now keeps the vars the node saw.
func TestEffectCheckpointKeepsTheVarsTheNodeSaw(t *testing.T) {
	ctx := context.Background()
	wf := &Workflow{ID: "w", Entry: "agent", Nodes: map[string]NodeFunc{
		// The agent pattern (visualflow/agent.go runAgent): phase init →
		// request the effect, resuming to this node → phase "called":
		// use the result.
		"agent": errNode(func(run *durable.RunState) StepPlan {
			tmp := namespace(run.Vars, "_temp")
			if tmp["phase"] == "called" {
				res, _ := tmp["res"].(map[string]any)
				return Complete(map[string]any{"answer": res["answer"]})
			}
			tmp["phase"] = "called"
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "_temp.res"}, "agent")
		}),
	}}
	entered := make(chan struct{}, 1)
	var calls atomic.Int32
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		if calls.Add(1) == 1 {
			entered <- struct{}{}
			<-hctx.Done() // a shutdown while the call runs
			return Failed("llm call: " + hctx.Err().Error()), nil
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	interruptTick(t, rt, id, entered)
	st, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["answer"] != "42" || calls.Load() != 2 {
		t.Fatalf("after the interrupted effect: status %s, output %v, effect executed %d times; "+
			"want completed with answer 42 and the interrupted call made again", st.Status, st.Output, calls.Load())
	}
}

// The same after a crash: the image of a JSON store's directory taken
// while the effect runs (its STARTED checkpoint) is opened by a new
// runtime, whose tick executes the recorded effect again (its plan went
// through the run file's JSON) and completes with its result.
func TestEffectCheckpointSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	calls := map[string]int{}
	wf := &Workflow{ID: "w", Entry: "agent", Nodes: map[string]NodeFunc{
		"agent": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			calls["node"]++
			tmp := namespace(run.Vars, "_temp")
			if tmp["phase"] == "called" {
				res, _ := tmp["res"].(map[string]any)
				return Complete(map[string]any{"answer": res["answer"]}), nil
			}
			tmp["phase"] = "called"
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q", "n": 3}, ResultKey: "_temp.res"}, "agent"), nil
		},
	}}
	live, image := t.TempDir(), t.TempDir()
	var payloads []map[string]any
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		calls["effect"]++
		payloads = append(payloads, req.Effect.Payload)
		if _, ok := req.Run.Vars["_runtime"].(map[string]any)[effectInFlightKey]; ok {
			t.Errorf("a handler sees %s in the vars; it is only for checkpoints", effectInFlightKey)
		}
		if calls["effect"] == 1 {
			copyDir(t, live, image) // the process dies here
			return Failed("killed"), nil
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}
	open := func(dir string) *Runtime {
		st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	}
	first := open(live)
	id, err := first.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	second := open(image)
	saved, err := second.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := saved.Vars["_runtime"].(map[string]any)[effectInFlightKey]; !ok || saved.CurrentNode != "agent" {
		t.Fatalf("the checkpoint taken during the effect: node %q, _runtime %v; want the plan in flight recorded",
			saved.CurrentNode, saved.Vars["_runtime"])
	}
	st, err := second.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["answer"] != "42" {
		t.Fatalf("after the restart: %s, output %v", st.Status, st.Output)
	}
	if calls["effect"] != 2 || calls["node"] != 2 {
		t.Fatalf("effect executed %d times, node called %d times; want 2 and 2 (the replay executes the plan without calling the node)",
			calls["effect"], calls["node"])
	}
	if n := payloads[1]["n"]; fmt.Sprint(n) != "3" || payloads[1]["prompt"] != "q" {
		t.Fatalf("replayed payload %v", payloads[1])
	}
	if _, ok := st.Vars["_runtime"].(map[string]any)[effectInFlightKey]; ok {
		t.Fatalf("the finished run still holds %s", effectInFlightKey)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Cancel interrupts an effect in flight and promises its attempt is never
// retried. Between two attempts (the retry backoff) nothing is in flight:
// the retry loop must see the request and start no attempt, and the run
// ends cancelled.
func TestCancelDuringRetryBackoffStartsNoAttempt(t *testing.T) {
	ctx := context.Background()
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
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
		// A user cancels the run while it waits to retry its call.
		hostStopsOnce(&once, rt, id, cancelled, func() error {
			_, err := rt.Cancel(context.Background(), id, "user cancelled")
			return err
		})
		return nil // the backoff ends
	}
	rt = errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
	}, wf)
	var err error
	if id, err = rt.Start(ctx, StartParams{WorkflowID: "w"}); err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Tick(ctx, id, TickOptions{})
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, id)
	t.Logf("final status %s (%s)", st.Status, st.Error)
	if n := calls.Load(); n != 1 {
		t.Fatalf("the handler ran %d times; the cancel was requested after attempt 1, so no later attempt "+
			"may start (final status %s)", n, st.Status)
	}
	if st.Status != durable.RunCancelled {
		t.Fatalf("final status %s (%s), want cancelled", st.Status, st.Error)
	}
}

// hostStopsOnce runs stop (a host's Pause or Cancel of run id) once, in
// another goroutine, sending its result to done, and returns when it has
// asked the run to stop: the run's own goroutine is then at an awkward
// moment of the test's choosing.
func hostStopsOnce(once *sync.Once, rt *Runtime, id string, done chan<- error, stop func() error) {
	once.Do(func() { go func() { done <- stop() }() })
	for !stopRequested(rt, id) {
		time.Sleep(time.Millisecond)
	}
}

// stopRequested reports whether a host has asked the run to stop (the
// flag requestStop sets for Pause and Cancel).
func stopRequested(rt *Runtime, runID string) bool {
	rt.locksMu.Lock()
	l := rt.locks[runID]
	rt.locksMu.Unlock()
	if l == nil {
		return false
	}
	l.sigMu.Lock()
	defer l.sigMu.Unlock()
	return l.pauseRequests > 0
}

// A commit that conflicts because another writer cancelled the run stops
// the tick: the cancel wins. It must win too when the working copy holds
// a non-JSON value (failUnserialisable used to fail the reloaded run
// without looking at it, overwriting the cancel).
func TestUnserialisableVarsDoNotOverwriteAConcurrentCancel(t *testing.T) {
	st := unserialisableAfterForeignWrite(t, func(cur *durable.RunState) {
		markCancelled(cur, cancelCause{reason: "cancelled elsewhere"})
	})
	if st.Status != durable.RunCancelled {
		t.Fatalf("run cancelled by another writer is now %s (%q), want it left cancelled", st.Status, st.Error)
	}
}

// A node that leaves a value that is not JSON while another runner pauses
// the run does not fail it: the pause, committed first, wins and the bad
// value (never durable) is dropped with the tick's work, as a concurrent
// cancel does. Checking only for a terminal run would fail the paused run.
func TestUnserialisableVarsDoNotOverwriteAConcurrentPause(t *testing.T) {
	st := unserialisableAfterForeignWrite(t, func(cur *durable.RunState) {
		namespace(namespace(cur.Vars, "_runtime"), "control")["paused"] = true
	})
	if st.Status != durable.RunRunning || !IsPaused(st) || st.CurrentNode != "a" {
		t.Fatalf("run paused by another writer is now %s at %s (paused %v, %q), want it left paused at a",
			st.Status, st.CurrentNode, IsPaused(st), st.Error)
	}
}

// unserialisableAfterForeignWrite ticks a run whose first node, meanwhile,
// has another writer change the stored run (change, committed) and then
// leaves a value that is not JSON in its own copy; it returns the stored
// run after the tick.
func unserialisableAfterForeignWrite(t *testing.T, change func(cur *durable.RunState)) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			cur, err := mem.RunGet(ctx, run.RunID)
			if err != nil {
				return StepPlan{}, err
			}
			change(cur)
			if err := mem.RunCommit(ctx, &store.CommitParams{Run: cur}); err != nil {
				return StepPlan{}, err
			}
			run.Vars["bad"] = make(chan int)
			return Next("b"), nil
		},
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, mem, Config{}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Tick(ctx, id, TickOptions{})
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// failOnceStore fails the first non-create RunCommit of run `runID` with
// an ordinary (non-conflict) error; nothing of that commit is written.
type failOnceStore struct {
	store.Wrapper
	runID  string
	failed atomic.Bool
}

func (s *failOnceStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if !p.Create && p.Run.RunID == s.runID && s.failed.CompareAndSwap(false, true) {
		return errors.New("injected: transient store error")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// A sync child whose terminal commit fails once used to be committed on a
// retry while its tick reported the error, so START_SUBWORKFLOW failed the
// parent of a completed child. Now the failed commit is not retried, the
// child's tick error interrupts the parent (left at its checkpoint), and
// the next tick of the parent finishes both.
func TestChildStoreErrorInterruptsTheParent(t *testing.T) {
	ctx := context.Background()
	child := &Workflow{ID: "c", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"v": "done"}) }),
	}}
	parent := &Workflow{ID: "p", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "c", "run_id": "child-1"}, ResultKey: "sub"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"sub": run.Vars["sub"]}) }),
	}}
	st := &failOnceStore{Wrapper: store.Wrapper{Store: memory.New()}, runID: "child-1"}
	rt := errRuntime(t, st, Config{}, parent, child)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Tick(ctx, id, TickOptions{})
	p, _ := rt.GetState(ctx, id)
	c, _ := rt.GetState(ctx, "child-1")
	if p.Status != durable.RunRunning || c.Status != durable.RunRunning {
		t.Fatalf("after the child's failed commit: parent %s (%q), child %s; want both running", p.Status, p.Error, c.Status)
	}
	p, err = rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ = rt.GetState(ctx, "child-1")
	sub, _ := p.Output["sub"].(map[string]any)
	out, _ := sub["output"].(map[string]any)
	if p.Status != durable.RunCompleted || c.Status != durable.RunCompleted || out["v"] != "done" {
		t.Fatalf("after the next tick: parent %s output %v, child %s", p.Status, p.Output, c.Status)
	}
}

// interruptTick ticks run id in a goroutine, cancels the tick's context
// once entered is signalled (an effect has started) and checks that the
// tick returned the cancellation.
func interruptTick(t *testing.T, rt *Runtime, id string, entered <-chan struct{}) {
	t.Helper()
	tctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := rt.Tick(tctx, id, TickOptions{})
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted tick: %v", err)
	}
}
