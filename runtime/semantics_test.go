package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func node(fn func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run, rc), nil
	}
}

func counter(run *durable.RunState, key string) int64 {
	switch v := run.Vars[key].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	n, _ := run.Vars[key].(interface{ Int64() (int64, error) })
	if n != nil {
		i, _ := n.Int64()
		return i
	}
	return 0
}

// A loop that issues the same effect three times must execute it three
// times: keys are scoped by the run's effect sequence.
func TestLoopRepeatsIdenticalEffect(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	wf := &runtime.Workflow{ID: "loop", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "echo", Payload: map[string]any{"x": "same"}, ResultKey: "last"}, "count")
		}),
		"count": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			n := counter(run, "n") + 1
			run.Vars["n"] = n
			if n < 3 {
				return runtime.Next("call")
			}
			return runtime.Complete(map[string]any{"n": n})
		}),
	}}
	f := setup(t, wf)
	f.rt.SetHandler("echo", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Completed(map[string]any{"call": calls.Load()}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "loop"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("%v %v", st, err)
	}
	if calls.Load() != 3 {
		t.Fatalf("handler calls = %d, want 3", calls.Load())
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	keys := map[string]bool{}
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == "echo" {
			keys[r.IdempotencyKey] = true
		}
	}
	if len(keys) != 3 {
		t.Fatalf("distinct keys = %d, want 3", len(keys))
	}
}

func TestIdempotencyKeyVectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		run, node string
		typ       durable.EffectType
		payload   map[string]any
		want      string
	}{
		{"run-1", "node-1", durable.EffectLLMCall, map[string]any{"prompt": "test"}, "564fe8958917cea0cd42b1f242cccc34"},
		{"run-1", "ask", durable.EffectAskUser, map[string]any{"prompt": "Café ☕?"}, "5d7377984db31e3f586d6d0c485ec075"},
		{"run-1", "tools", durable.EffectToolCalls, map[string]any{
			"tool_calls":    []any{map[string]any{"name": " read_file ", "arguments": `{"file_path": "a.txt"}`, "call_id": "abc"}},
			"allowed_tools": []any{"write_file", "read_file", "read_file"},
		}, "3cc3b4a58e2edd4b1da34b5c57319b43"},
	}
	for _, c := range cases {
		got := runtime.PythonIdempotencyKey(c.run, c.node, &durable.Effect{Type: c.typ, Payload: c.payload})
		if got != c.want {
			t.Errorf("%s: key %s, want %s", c.typ, got, c.want)
		}
	}
}

func child() *runtime.Workflow {
	return &runtime.Workflow{ID: "child", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			if run.Vars["interactive"] != true {
				return runtime.Next("done")
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "child?"}, ResultKey: "a"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"x": run.Vars["x"], "workspace_root": run.Vars["workspace_root"]})
		}),
	}}
}

func parent(mode map[string]any) *runtime.Workflow {
	return &runtime.Workflow{ID: "parent", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			p := map[string]any{"workflow_id": "child", "vars": map[string]any{"x": "hi", "interactive": run.Vars["interactive"]}}
			for k, v := range mode {
				p[k] = v
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: p, ResultKey: "sub"}, "after")
		}),
		"after": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
}

func TestSubworkflowModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		mode        map[string]any
		interactive bool
	}{
		{"sync", nil, false},
		{"sync-child-waits", nil, true},
		{"async-wait", map[string]any{"async": true, "wait": true}, false},
		{"async-wait-child-waits", map[string]any{"async": true, "wait": true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t, parent(tc.mode), child())
			ctx := context.Background()
			id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "parent",
				Vars: map[string]any{"interactive": tc.interactive, "workspace_root": "/ws"}})
			st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.interactive {
				if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitSubworkflow {
					t.Fatalf("parent %s %+v", st.Status, st.Waiting)
				}
				childID := st.Waiting.Details["sub_run_id"].(string)
				cs, _ := f.rt.GetState(ctx, childID)
				if cs.Status != durable.RunWaiting || cs.ParentRunID != id {
					t.Fatalf("child %s parent %q", cs.Status, cs.ParentRunID)
				}
				if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: childID, WaitKey: cs.Waiting.WaitKey,
					Payload: map[string]any{"text": "ok"}}); err != nil {
					t.Fatal(err)
				}
				st, _ = f.rt.GetState(ctx, id)
			}
			if st.Status != durable.RunCompleted {
				t.Fatalf("parent not completed: %s %q", st.Status, st.Error)
			}
			sub := st.Output["sub"].(map[string]any)
			out := sub["output"].(map[string]any)
			if out["x"] != "hi" || out["workspace_root"] != "/ws" {
				t.Fatalf("child output %v (workspace must be inherited)", out)
			}
		})
	}
}

func TestEmitEventResumesListeners(t *testing.T) {
	t.Parallel()
	listener := &runtime.Workflow{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": run.Vars["name"], "scope": "session"}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"got": run.Vars["evt"]})
		}),
	}}
	emitter := &runtime.Workflow{ID: "emit", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
		"emit": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": "ping", "payload": map[string]any{"n": 1}}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	f := setup(t, listener, emitter)
	ctx := context.Background()
	var listeners []string
	for _, name := range []string{"ping", "*", "other"} {
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "listen", SessionID: "s1", Vars: map[string]any{"name": name}})
		if st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
			t.Fatalf("listener %s: %s", name, st.Status)
		}
		listeners = append(listeners, id)
	}
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "emit", SessionID: "s1"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("emitter %v %v", st, err)
	}
	r := st.Output["r"].(map[string]any)
	if r["delivered"] != int64(2) || r["wait_key"] != "evt:session:s1:ping" {
		t.Fatalf("emit result %v", r)
	}
	for i, want := range []durable.RunStatus{durable.RunCompleted, durable.RunCompleted, durable.RunWaiting} {
		ls, _ := f.rt.GetState(ctx, listeners[i])
		if ls.Status != want {
			t.Fatalf("listener %d: %s, want %s", i, ls.Status, want)
		}
	}
	ls, _ := f.rt.GetState(ctx, listeners[0])
	env := ls.Output["got"].(map[string]any)
	if env["name"] != "ping" || env["payload"].(map[string]any)["n"] != json.Number("1") ||
		env["emitter"].(map[string]any)["run_id"] != id {
		t.Fatalf("envelope %v", env)
	}
	// External events reach exact keys.
	delivered, err := f.rt.EmitEvent(ctx, runtime.EmitParams{Name: "other", SessionID: "s1"})
	if err != nil || len(delivered) != 1 || delivered[0] != listeners[2] {
		t.Fatalf("external emit: %v %v", delivered, err)
	}
}

func TestWaitEventDeadlineTimesOut(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "w", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "k", "timeout_s": 60}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"evt": run.Vars["evt"]})
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if st.Status != durable.RunWaiting || st.Waiting.Until.IsZero() {
		t.Fatalf("%s until %v", st.Status, st.Waiting.Until)
	}
	due, _ := f.st.RunListDue(ctx, &store.RunListDueParams{Now: f.now.Add(2 * time.Minute)})
	if len(due) != 1 {
		t.Fatalf("event deadline not in the due index: %v", due)
	}
	f.now = f.now.Add(2 * time.Minute)
	st, _ = f.rt.Tick(ctx, id, runtime.TickOptions{})
	if st.Status != durable.RunCompleted || st.Output["evt"].(map[string]any)["timed_out"] != true {
		t.Fatalf("%s %v", st.Status, st.Output)
	}
}

func TestPauseAndResumeRun(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(3), askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	st, err := f.rt.Pause(ctx, id, "maintenance")
	if err != nil || st.Status != durable.RunWaiting || st.Waiting.WaitKey != "pause:"+id {
		t.Fatalf("pause: %v %v", st, err)
	}
	if st, _ = f.rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("paused run ticked: %s", st.Status)
	}
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id}); !errors.Is(err, runtime.ErrRunPaused) {
		t.Fatalf("resume of paused run: %v", err)
	}
	st, err = f.rt.ResumeRun(ctx, id)
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("resume_run: %v %v", st, err)
	}
	// A run waiting for a person is not paused (Python semantics).
	id2, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	f.rt.Tick(ctx, id2, runtime.TickOptions{})
	if st, _ = f.rt.Pause(ctx, id2, ""); runtime.IsPaused(st) {
		t.Fatal("user wait was paused")
	}
}

func TestCancelInterruptsInflightEffect(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	wf := &runtime.Workflow{ID: "slow", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "slow"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(nil)
		}),
	}}
	f := setup(t, wf)
	var attempts atomic.Int64
	f.rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		attempts.Add(1)
		close(started)
		<-ctx.Done()
		return runtime.Outcome{}, ctx.Err()
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	tickDone := make(chan error, 1)
	go func() {
		_, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		tickDone <- err
	}()
	<-started
	st, err := f.rt.Cancel(ctx, id, "user stop")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-tickDone; err != nil {
		t.Fatalf("tick: %v", err)
	}
	if st.Status != durable.RunCancelled || st.Error != "user stop" {
		t.Fatalf("%s %q", st.Status, st.Error)
	}
	if got := statuses(t, f, id); got != "call:slow:started call:slow:cancelled call:emit_event:completed" {
		t.Fatalf("ledger %q", got)
	}
	if attempts.Load() != 1 {
		t.Fatalf("attempts = %d", attempts.Load())
	}
}

// listSignal is a store that reports each RunListChildren call.
type listSignal struct {
	store.Wrapper
	listed chan string
}

func (l listSignal) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	kids, err := l.Wrapper.RunListChildren(ctx, parentID, status)
	select {
	case l.listed <- parentID:
	default:
	}
	return kids, err
}

// childCreateGate is listSignal that holds the creation of a child run
// until release is closed, after closing entered.
type childCreateGate struct {
	listSignal
	entered, release chan struct{}
}

func (g childCreateGate) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Create && p.Run.ParentRunID != "" {
		close(g.entered)
		<-g.release
	}
	return g.listSignal.RunCommit(ctx, p)
}

// A child the parent starts while Cancel waits for the parent's tick
// (Cancel listed the children before the child existed) is cancelled with
// the parent, not left waiting under a cancelled parent. (An effect a
// cancel request precedes does not start at all: the child's creation
// is held here, inside the effect, instead of the node.)
func TestCancelTakesAChildStartedDuringTheCancel(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan { return runtime.Complete(nil) }),
	}}
	child := &runtime.Workflow{ID: "child", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "")
		}),
	}}
	st := childCreateGate{listSignal: listSignal{Wrapper: store.Wrapper{Store: memory.New()}, listed: make(chan string, 1)},
		entered: entered, release: release}
	reg, _ := runtime.NewRegistry(parent, child)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	tickDone := make(chan error, 1)
	go func() {
		_, err := rt.Tick(ctx, id, runtime.TickOptions{})
		tickDone <- err
	}()
	<-entered
	cancelDone := make(chan error, 1)
	go func() {
		_, err := rt.Cancel(ctx, id, "")
		cancelDone <- err
	}()
	<-st.listed // Cancel has listed the (not yet started) children
	close(release)
	if err := <-tickDone; err != nil {
		t.Fatal(err)
	}
	if err := <-cancelDone; err != nil {
		t.Fatal(err)
	}
	kids, err := st.RunListChildren(ctx, id, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children: %v %v", kids, err)
	}
	if p, _ := rt.GetState(ctx, id); p.Status != durable.RunCancelled {
		t.Fatalf("parent %s", p.Status)
	}
	if kids[0].Status != durable.RunCancelled {
		t.Fatalf("child started during the cancel is %s under a cancelled parent", kids[0].Status)
	}
}

// A tick whose caller goes away (a shutdown cancels its context) while an
// effect or a node runs leaves the run at its last checkpoint: a failure
// the interruption causes (a handler's store call refused, a node giving
// up on its context) is not recorded as the run's, and the run completes
// when ticked again.
func TestInterruptedTickDoesNotFailTheRun(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"effect", "node"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			entered := make(chan struct{}, 1)
			var interrupted atomic.Bool
			wait := func(ctx context.Context) bool { // true when interrupted
				if interrupted.Load() {
					return false
				}
				entered <- struct{}{}
				<-ctx.Done()
				interrupted.Store(true)
				return true
			}
			wf := &runtime.Workflow{ID: "w", Entry: "work", Nodes: map[string]runtime.NodeFunc{
				"work": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					if where == "node" && wait(ctx) {
						return runtime.StepPlan{}, ctx.Err()
					}
					return runtime.Request(&durable.Effect{Type: "call", ResultKey: "r"}, "done"), nil
				},
				"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					return runtime.Complete(map[string]any{"r": run.Vars["r"]})
				}),
			}}
			f := setup(t, wf)
			var keysMu sync.Mutex
			var keys []string // the idempotency key of each execution
			f.rt.SetHandler("call", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				keysMu.Lock()
				keys = append(keys, req.IdempotencyKey)
				keysMu.Unlock()
				if where == "effect" && wait(ctx) {
					// As a handler does whose store call the cancel refused.
					return runtime.Failed("listing runs: " + ctx.Err().Error()), nil
				}
				return runtime.Completed(map[string]any{"ok": true}), nil
			}})
			id, _ := f.rt.Start(context.Background(), runtime.StartParams{WorkflowID: "w"})
			ctx, cancel := context.WithCancel(context.Background())
			tickDone := make(chan error, 1)
			go func() {
				_, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
				tickDone <- err
			}()
			<-entered
			cancel()
			if err := <-tickDone; !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted tick = %v, want context.Canceled", err)
			}
			if st, _ := f.rt.GetState(context.Background(), id); st.Status != durable.RunRunning {
				t.Fatalf("after the interruption the run is %s (%s), want running", st.Status, st.Error)
			}
			st, err := f.rt.Tick(context.Background(), id, runtime.TickOptions{})
			if err != nil || st.Status != durable.RunCompleted {
				t.Fatalf("tick after the interruption: %v %v", st, err)
			}
			// The interrupted attempt is replayed under its own key, so
			// the outside world can tell it is the same call.
			if where == "effect" && (len(keys) != 2 || keys[0] != keys[1]) {
				t.Fatalf("handler keys %v: want the interrupted attempt's key again", keys)
			}
		})
	}
}

// An external effect that completes after its tick's caller went away (a
// shutdown) is committed all the same: the run moves past it and the
// next tick does not execute it again.
func TestCompletionAfterTheCallerLeftIsKept(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "call", ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	st := memory.New()
	reg, _ := runtime.NewRegistry(wf)
	rt, _ := runtime.New(runtime.Config{Store: commitHonoursContext{store.Wrapper{Store: st}}, Registry: reg})
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	rt.SetHandler("call", runtime.Handler{Func: func(_ context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		cancel() // the caller leaves while the call finishes anyway
		return runtime.Completed(map[string]any{"ok": true}), nil
	}})
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "w"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	st2, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil || st2.Status != durable.RunCompleted || calls.Load() != 1 {
		t.Fatalf("after the interrupted tick: %v %v, the effect ran %d times (want once)", st2, err, calls.Load())
	}
}

// commitHonoursContext refuses a commit whose context is done, as a
// store waiting for its writer does.
type commitHonoursContext struct{ store.Wrapper }

func (c commitHonoursContext) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Wrapper.RunCommit(ctx, p)
}

// commitOrder records the runs committed as cancelled, in order.
type commitOrder struct {
	store.Wrapper
	mu        sync.Mutex
	cancelled []string
}

func (c *commitOrder) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run.Status == durable.RunCancelled {
		c.mu.Lock()
		c.cancelled = append(c.cancelled, p.Run.RunID)
		c.mu.Unlock()
	}
	return c.Wrapper.RunCommit(ctx, p)
}

// Cancel commits a tree's runs deepest first, so a crash midway never
// leaves a live run under a cancelled one: a grandchild, then its parent,
// then the root.
func TestCancelCommitsDescendantsFirst(t *testing.T) {
	t.Parallel()
	spawn := func(id, child string) *runtime.Workflow {
		return &runtime.Workflow{ID: id, Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": child, "async": true, "wait": true}, ResultKey: "child"}, "")
			}),
		}}
	}
	leaf := &runtime.Workflow{ID: "leaf", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "")
		}),
	}}
	st := &commitOrder{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(spawn("root", "mid"), spawn("mid", "leaf"), leaf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "root"})
	rt.Tick(ctx, root, runtime.TickOptions{})
	mids, _ := st.RunListChildren(ctx, root, "")
	leaves, _ := st.RunListChildren(ctx, mids[0].RunID, "")
	if len(leaves) != 1 || leaves[0].Status != durable.RunWaiting {
		t.Fatalf("tree not built: %v", leaves)
	}
	if _, err := rt.Cancel(ctx, root, ""); err != nil {
		t.Fatal(err)
	}
	want := []string{leaves[0].RunID, mids[0].RunID, root}
	if !slices.Equal(st.cancelled, want) {
		t.Fatalf("cancelled in order %v, want leaf, mid, root %v", st.cancelled, want)
	}
}

func TestRetryPolicyRetriesThenFails(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "r", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}}, "")
		}),
	}}
	st := memory.New()
	reg, _ := runtime.NewRegistry(wf)
	var slept []time.Duration
	rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg, Policy: runtime.LLMRetry,
		Sleep: func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil },
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Failed("provider timeout"), nil
		}}}})
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "r"})
	s, _ := rt.Tick(ctx, id, runtime.TickOptions{})
	if s.Status != durable.RunFailed || s.Error != "Effect failed after 3 attempts: provider timeout" {
		t.Fatalf("%s %q", s.Status, s.Error)
	}
	if len(slept) != 2 || slept[0] != time.Second || slept[1] != 2*time.Second {
		t.Fatalf("backoff %v", slept)
	}
	recs, _ := rt.GetLedger(ctx, id)
	if len(recs) != 7 || recs[5].Attempt != 3 || recs[5].Status != durable.StepFailed {
		t.Fatalf("ledger has %d records", len(recs))
	}
}

func TestStartWithExplicitRunID(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2), askWorkflow())
	ctx := context.Background()
	p := runtime.StartParams{WorkflowID: "chain", RunID: "run-fixed", SessionID: "s", Vars: map[string]any{"a": 1}}
	if id, err := f.rt.Start(ctx, p); err != nil || id != "run-fixed" {
		t.Fatalf("%s %v", id, err)
	}
	if id, err := f.rt.Start(ctx, p); err != nil || id != "run-fixed" {
		t.Fatalf("same identity: %s %v", id, err)
	}
	var conflict *runtime.IdentityConflictError
	p2 := p
	p2.Vars = map[string]any{"a": 2}
	if _, err := f.rt.Start(ctx, p2); !errors.As(err, &conflict) || conflict.ReasonCode() != "identity_conflict" {
		t.Fatalf("different vars: %v", err)
	}
	p3 := p
	p3.WorkflowID = "ask"
	if _, err := f.rt.Start(ctx, p3); !errors.As(err, &conflict) || conflict.Field != "workflow_id" {
		t.Fatalf("different workflow: %v", err)
	}
}

func TestStepGateStopsAtBoundary(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(5))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{StepGate: func(ctx context.Context, run *durable.RunState, nodeID string) error {
		if nodeID == "n3" {
			return runtime.ErrStepGateClosed
		}
		return nil
	}})
	if err != nil || st.Status != durable.RunRunning || st.CurrentNode != "n3" {
		t.Fatalf("%v %s %v", st.CurrentNode, st.Status, err)
	}
	stored, _ := f.rt.GetState(ctx, id)
	if stored.CurrentNode != "n3" || stored.Vars["k2"] == nil {
		t.Fatalf("progress before the gate not checkpointed: %s", stored.CurrentNode)
	}
	if st, _ = f.rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunCompleted {
		t.Fatalf("%s", st.Status)
	}
}

func TestMaxStepsCheckpoints(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(10))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 4})
	if st.Status != durable.RunRunning || st.CurrentNode != "n4" {
		t.Fatalf("%s at %s", st.Status, st.CurrentNode)
	}
	if stored, _ := f.rt.GetState(ctx, id); stored.CurrentNode != "n4" {
		t.Fatalf("not checkpointed: %s", stored.CurrentNode)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{"current_iteration": int64(45)}); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{"bogus": 1}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("unknown limit: %v", err)
	}
	warns, _ := f.rt.CheckLimits(ctx, id)
	if len(warns) != 1 || warns[0].Status != "warning" || warns[0].Pct != 90 {
		t.Fatalf("warnings %+v", warns)
	}
	status, _ := f.rt.GetLimitStatus(ctx, id)
	if it := status["iterations"].(map[string]any); it["current"] != int64(45) || it["warning"] != true {
		t.Fatalf("status %v", status)
	}
}

// After an external effect the tick may end on its step budget; the move
// to the next node must still be checkpointed, or the effect runs twice.
func TestExternalEffectThenBudgetCheckpointsMove(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	wf := &runtime.Workflow{ID: "ext", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "ext", ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	f := setup(t, wf)
	f.rt.SetHandler("ext", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"n": calls.Add(1)}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ext"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := f.rt.GetState(ctx, id); stored.CurrentNode != "done" {
		t.Fatalf("stored at %q, want done", stored.CurrentNode)
	}
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if st.Status != durable.RunCompleted || calls.Load() != 1 {
		t.Fatalf("status %s, effect ran %d times", st.Status, calls.Load())
	}
}

// An async child that needs more steps than one tick is driven to its end
// within the parent's call, and the parent resumes.
func TestAsyncChildBeyondStepBudget(t *testing.T) {
	t.Parallel()
	long := &runtime.Workflow{ID: "long", Entry: "loop", Nodes: map[string]runtime.NodeFunc{
		"loop": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			n := counter(run, "n")
			if n >= 250 {
				return runtime.Complete(map[string]any{"n": n})
			}
			run.Vars["n"] = n + 1
			return runtime.Next("loop")
		}),
	}}
	p := &runtime.Workflow{ID: "p", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "long", "async": true, "wait": true}, ResultKey: "sub"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	f := setup(t, p, long)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("parent %v %v", st.Status, err)
	}
}

// cancelAtStarted cancels the tick's context when it commits an effect's
// STARTED record and refuses that commit, as a store whose writer turn
// the caller gave up waiting for does.
type cancelAtStarted struct {
	store.Wrapper
	cancel context.CancelFunc
	fired  atomic.Bool
}

func (c *cancelAtStarted) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if ctx.Err() == nil && slices.ContainsFunc(p.Records, func(r *durable.StepRecord) bool { return r.Status == durable.StepStarted }) &&
		c.fired.CompareAndSwap(false, true) {
		c.cancel()
		return fmt.Errorf("waiting for the writer: %w", context.Canceled)
	}
	return c.Wrapper.RunCommit(ctx, p)
}

// An attempt whose STARTED record could not be committed never began:
// the commit that keeps what the interrupted tick did on its way out does
// not record it either, so the ledger holds one STARTED record per call
// of the handler.
func TestAttemptRefusedAtStartedLeavesNoRecord(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "w", Entry: "prep", Nodes: map[string]runtime.NodeFunc{
		"prep": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			run.Vars["prepared"] = true // a pure step before the effect, kept on the way out
			return runtime.Next("call")
		}),
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "call", ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	ctx, cancel := context.WithCancel(context.Background())
	st := &cancelAtStarted{Wrapper: store.Wrapper{Store: memory.New()}, cancel: cancel}
	reg, _ := runtime.NewRegistry(wf)
	rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg})
	var calls atomic.Int32
	rt.SetHandler("call", runtime.Handler{Func: func(_ context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Completed(map[string]any{"ok": true}), nil
	}})
	id, _ := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "w"})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("tick whose STARTED commit was refused = %v, want context.Canceled", err)
	}
	recs, _ := rt.GetLedger(context.Background(), id)
	if len(recs) != 0 || calls.Load() != 0 {
		t.Fatalf("after the refused attempt: %d records (%v), %d calls; want none", len(recs), recs, calls.Load())
	}
	done, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil || done.Status != durable.RunCompleted || done.Vars["prepared"] != true {
		t.Fatalf("next tick: %v, %v", done, err)
	}
	recs, _ = rt.GetLedger(context.Background(), id)
	started := 0
	for _, r := range recs {
		if r.Status == durable.StepStarted {
			started++
		}
	}
	if started != 1 || calls.Load() != 1 {
		t.Errorf("%d STARTED records for %d calls; want one each", started, calls.Load())
	}
}

// A child that comes into being under an already cancelled parent (one
// another runner started before it learnt that a cancel took its parent)
// cancels itself when ticked instead of working, with its parent's
// reason.
func TestChildOfACancelledParentEndsWhenTicked(t *testing.T) {
	t.Parallel()
	ask := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "")
		}),
	}}
	f := setup(t, ask)
	ctx := context.Background()
	parent, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if _, err := f.rt.Cancel(ctx, parent, "user stop"); err != nil {
		t.Fatal(err)
	}
	late, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", ParentRunID: parent})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, late, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCancelled || st.Error != "user stop" {
		t.Fatalf("tick of a child under a cancelled parent = %s %q, %v; want cancelled with the parent's reason", statusOrNil(st), errorOrNil(st), err)
	}
	recs, _ := f.rt.GetLedger(ctx, late)
	if len(recs) != 1 || recs[0].Effect == nil || recs[0].Effect.Payload["name"] != "abstract.status" {
		t.Errorf("ledger of the late child: %v; want only its cancelled status event", recs)
	}
}

func statusOrNil(st *durable.RunState) durable.RunStatus {
	if st == nil {
		return ""
	}
	return st.Status
}

func errorOrNil(st *durable.RunState) string {
	if st == nil {
		return ""
	}
	return st.Error
}

// ASK_USER copies its choices list as given (spec §3.1): numbers and
// objects reach the wait unchanged, and strings stay as they are.
func TestAskUserKeepsChoicesAsGiven(t *testing.T) {
	t.Parallel()
	choices := []any{"  yes ", json.Number("2"), map[string]any{"id": json.Number("3")}}
	wf := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "?", "choices": choices}}, "")
		}),
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	if got := st.Waiting.ChoiceValues(); !reflect.DeepEqual(got, choices) {
		t.Errorf("choices = %#v, want %#v", got, choices)
	}
}
