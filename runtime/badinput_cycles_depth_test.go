package runtime_test

import (
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// runInChildProcess runs the calling test in a child process of the test binary
// (so a fatal stack overflow fails this test instead of killing the whole
// package's run) and reports true in the child, where the test body runs.
func runInChildProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv("BADINPUT_TEST_CHILD") == t.Name() {
		debug.SetMaxStack(32 << 20) // a runaway recursion dies quickly
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BADINPUT_TEST_CHILD="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := string(out)
		if i := strings.Index(msg, "fatal error"); i >= 0 {
			msg = msg[i:min(len(msg), i+1500)]
		} else if len(msg) > 1500 {
			msg = msg[:1500]
		}
		t.Errorf("the test's process failed (%v):\n%s", err, msg)
	}
	return false
}

// An effect handler's result is one of the places bad values enter a run.
// execute (execute.go) deep-copies the result with pyjson.Clone for the
// COMPLETED record and again for the node trace before anything checks
// it: a result that contains itself makes Clone recurse without end, and
// the goroutine's stack overflow kills the whole process (not recoverable,
// not even by callHandler's recover, which does not cover it). A NaN or a
// channel in the same place fails the run with an error naming the path.
// The test runs in a child process (runInChildProcess).
func TestBadInputCyclicHandlerResultFailsRunNotProcess(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	requireCyclicOutcomeFailsRun(t, durable.EffectLLMCall, func() runtime.Outcome {
		res := map[string]any{"content": "ok"}
		res["self"] = res // a handler bug: the result holds itself
		return runtime.Completed(res)
	})
}

// requireCyclicOutcomeFailsRun runs a workflow whose one effect, of type
// typ, gets outcome from its handler, and requires the run failed with
// an error naming the cycle.
func requireCyclicOutcomeFailsRun(t *testing.T, typ durable.EffectType, outcome func() runtime.Outcome) {
	t.Helper()
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "cyc", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: typ, Payload: map[string]any{"prompt": "x"}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		typ: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return outcome(), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "cyc"})
	if err != nil {
		t.Fatal(err)
	}
	_, terr := rt.Tick(ctx, id, runtime.TickOptions{})
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "cycle") {
		t.Fatalf("run %s, error %q (tick error %v); want it failed with an error naming the cyclic path", run.Status, run.Error, terr)
	}
}

// EmitEvent (builtin_events.go) hands the host's payload, unchecked, to
// deliver, whose resumeListener deep-copies the envelope
// (pyjson.CloneObject) before Resume checks it. A payload that contains
// itself recurses without end and the stack overflow kills the process,
// where Resume itself refuses the same payload with an error naming its
// path. The stack limit is lowered so the crash comes quickly.
func TestBadInputCyclicEventPayloadIsRefusedNotFatal(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	ctx := context.Background()
	f, id, st := waitEventFixture(t, map[string]any{"name": "ping", "scope": "session"})
	if st.Status != durable.RunWaiting {
		t.Fatalf("listener %s, want waiting", st.Status)
	}
	payload := map[string]any{"n": 1}
	payload["self"] = payload
	_, err := f.rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", Scope: "session", SessionID: id, Payload: payload})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("EmitEvent of a cyclic payload: error %v, want a refusal naming the cycle", err)
	}
	after, _ := f.rt.GetState(ctx, id)
	if after.Status != durable.RunWaiting || after.Version != st.Version {
		t.Errorf("listener %s at version %d after a refused event, want still waiting at %d", after.Status, after.Version, st.Version)
	}
}

// The same as TestBadInputCyclicHandlerResultFailsRunNotProcess for a
// handler's waiting outcome: execute copies the wait with Wait.Map()
// (durable/maps.go, pyjson.Clone of the details) for the WAITING record
// and the node trace, unchecked, and a details object that contains
// itself overflows the stack.
func TestBadInputCyclicWaitDetailsFailRunNotProcess(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	requireCyclicOutcomeFailsRun(t, durable.EffectToolCalls, func() runtime.Outcome {
		details := map[string]any{"mode": "delegated"}
		details["self"] = details
		return runtime.Waiting(&durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", ResumeToNode: "b", Details: details})
	})
}

func nestedValue(n int) any {
	var v any = "leaf"
	for i := 0; i < n; i++ {
		v = map[string]any{"d": v}
	}
	return v
}

// waitingOnDottedAsk starts and ticks a workflow (id wfID) whose ASK_USER
// writes its answer at the dotted result key "_temp.answers.ask", as
// VisualFlow's do: the answer lands at depth 4 of the run's vars.
func waitingOnDottedAsk(t *testing.T, wfID string) (*fixture, string, *durable.RunState) {
	t.Helper()
	ctx := context.Background()
	wf := &runtime.Workflow{ID: wfID, Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "?"}, ResultKey: "_temp.answers.ask"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	f := setup(t, wf)
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: wfID})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	return f, id, st
}

// Resume (resume.go) checks the payload at depth 3, where the resume
// record holds it, but applyResume also writes it at the wait's result
// key, and a dotted key ("_temp.answers.ask", as VisualFlow's are) puts
// it deeper in vars. A payload that passes the check but is too deep
// there is not refused: the resume is accepted and the following commit
// finds vars not JSON (failUnserialisable), so the caller's bad input
// fails the run it answered, which was waiting and fine, instead of
// giving the caller an error and leaving the run as it was.
func TestBadInputTooDeepResumePayloadIsRefusedNotFatalToRun(t *testing.T) {
	ctx := context.Background()
	f, id, st := waitingOnDottedAsk(t, "askdeep")
	before := st.Version
	// payload at depth 3 in the record: its leaf at 3+1+(MaxDepth-4), the
	// limit; at vars._temp.answers.ask it is at 4, its leaf one past it.
	got, rerr := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
		Payload: map[string]any{"d": nestedValue(pyjson.MaxDepth - 4)}})
	after, _ := f.rt.GetState(ctx, id)
	if rerr == nil || after.Status != durable.RunWaiting || after.Version != before {
		status := durable.RunStatus("")
		if got != nil {
			status = got.Status
		}
		t.Errorf("Resume with a payload too deep for its result key: error %v, returned run %s; stored run %s at version %d (error %.120q); "+
			"want the resume refused naming the path and the run still waiting at version %d",
			rerr, status, after.Status, after.Version, after.Error, before)
	}
}

// A child's output that is JSON where the child holds it (output, depth
// 1) is handed to an async+wait parent inside the resume payload
// (payload.output, depth 4), where Resume's depth check refuses it.
// resumeParent's error is only logged and kept for RetryFollowUps, which
// fails the same way every time: the parent waits on its ended child for
// ever, with no error recorded on either run.
func TestBadInputDeepChildOutputDoesNotStrandParent(t *testing.T) {
	ctx := context.Background()
	child := &runtime.Workflow{ID: "deepchild", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			// leaf at 1+1+(MaxDepth-3) in the child's output, at the limit in
			// its completion record (result.output): JSON for both.
			return runtime.Complete(map[string]any{"d": nestedValue(pyjson.MaxDepth - 3)})
		}),
	}}
	parent := &runtime.Workflow{ID: "deepparent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "deepchild", "async": true, "wait": true}, ResultKey: "child"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	f := setup(t, child, parent)
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "deepparent"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		f.now = f.now.Add(time.Hour)
		f.rt.RetryFollowUps(ctx)
	}
	p, _ := f.rt.GetState(ctx, id)
	if p.Status == durable.RunWaiting {
		c, _ := f.rt.GetState(ctx, runtime.WaitedChild(p))
		t.Errorf("parent still %s on child %s, which is %s: the child's end never reaches it", p.Status, c.RunID, c.Status)
	}
}

// session.checkJSON (session.go) checks the output where the run holds
// it (depth 1), but the completion record holds it one level deeper
// (result.output, records.go completionRecord). An output nested to the
// limit passes the kernel's check and is refused by the store at every
// commit: the run is never failed, stays running at its last checkpoint,
// and every Tick errors, for ever (the vars case was fixed the same way,
// TestCoreVarsAtDepthLimitFailRunNotStuck).
func TestBadInputOutputAtDepthLimitFailsRunNotStuck(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "deepout", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			// leaf at 1+1+(MaxDepth-2), the limit, below the run; one past
			// it in the record
			return runtime.Complete(map[string]any{"d": nestedValue(pyjson.MaxDepth - 2)})
		}),
	}}
	f := setup(t, wf)
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "deepout"})
	var err error
	for i := 0; i < 2; i++ {
		_, err = f.rt.Tick(ctx, id, runtime.TickOptions{})
	}
	run, _ := f.rt.GetState(ctx, id)
	if run.Status != durable.RunFailed {
		t.Errorf("run is %s at %q after two ticks (last tick error: %.160v); want failed with the path of the too-deep output",
			run.Status, run.CurrentNode, err)
	}
}

type namedMap map[string]any

// Start promises (start.go) that a cycle is refused with an error naming
// its key path. pyjson's encoder (internal/pyjson/encode.go, foreign)
// copies a map of a named type into a fresh map[string]any at every
// level, so its cycle check (enter, by map pointer) never sees the same
// map twice: a named map that contains itself is walked MaxDepth levels
// down and refused as "nesting too deep" with a 20 KB path
// (vars.a.x.x.x…), not as the cycle at vars.a.x that it is.
func TestBadInputCyclicNamedMapIsReportedAsCycle(t *testing.T) {
	ctx := context.Background()
	f := setup(t, askWorkflow())
	m := namedMap{}
	m["x"] = m
	_, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", Vars: map[string]any{"a": m}})
	if err == nil {
		t.Fatal("a cyclic value was accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "cycle") || len(msg) > 500 {
		t.Errorf("error (%d bytes) ends %q; want it to name the cycle at vars.a.x", len(msg), msg[max(0, len(msg)-60):])
	}
}

func kcNest(n int) any {
	var v any = "leaf"
	for i := 0; i < n; i++ {
		v = map[string]any{"d": v}
	}
	return v
}

// session.checkJSON (session.go) checks vars at nesting depth 0, but the
// stores encode them one level down (the run object holds them:
// durable/line.go encodes vars at depth 1). A node that nests a value
// exactly to the limit passes the kernel's check, which is meant to fail
// the run with an error naming the path (failUnserialisable), and is
// then refused by the store at every commit: the run is never failed,
// stays running at its last checkpoint and every Tick errors, for ever.
// One level deeper the same workflow fails cleanly.
func TestCoreVarsAtDepthLimitFailRunNotStuck(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.New(ctx, sqlite.Config{Path: t.TempDir() + "/db.sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	wf := &runtime.Workflow{ID: "deep", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			// the leaf at depth MaxDepth below vars: the limit there, one
			// past it in the run the stores encode
			run.Vars["deep"] = kcNest(pyjson.MaxDepth - 1)
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: sq, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "deep"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err = rt.Tick(ctx, id, runtime.TickOptions{})
	}
	run, gerr := rt.GetState(ctx, id)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if run.Status != durable.RunFailed {
		t.Errorf("run is %s at %q after two ticks (last tick error: %.160v); want failed with the path of the too-deep value",
			run.Status, run.CurrentNode, err)
	}
}
