package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

type fixture struct {
	rt  *runtime.Runtime
	st  *memory.Store
	now time.Time
}

func setup(t *testing.T, wfs ...*runtime.Workflow) *fixture {
	t.Helper()
	f := &fixture{st: memory.New(), now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	f.rt, err = runtime.New(runtime.Config{Store: f.st, Registry: reg, Clock: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func chain(n int) *runtime.Workflow {
	wf := &runtime.Workflow{ID: "chain", Entry: "n0", Nodes: map[string]runtime.NodeFunc{}}
	for i := 0; i < n; i++ {
		i := i
		wf.Nodes[fmt.Sprintf("n%d", i)] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars[fmt.Sprintf("k%d", i)] = strings.Repeat("x", 32)
			if i == n-1 {
				return runtime.Complete(map[string]any{"ok": true, "nodes": int64(n)}), nil
			}
			return runtime.Next(fmt.Sprintf("n%d", i+1)), nil
		}
	}
	return wf
}

func askWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Continue?"}, ResultKey: "answer"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			ans, _ := run.Vars["answer"].(map[string]any)
			return runtime.Complete(map[string]any{"answer": ans["text"]}), nil
		},
	}}
}

func statuses(t *testing.T, f *fixture, runID string) string {
	t.Helper()
	recs, err := f.rt.GetLedger(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, r := range recs {
		kind := "plan"
		if r.Effect != nil {
			kind = string(r.Effect.Type)
		}
		parts = append(parts, fmt.Sprintf("%s:%s:%s", r.NodeID, kind, r.Status))
	}
	return strings.Join(parts, " ")
}

func TestTick_Chain(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(10))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["ok"] != true {
		t.Fatalf("status %s output %v", st.Status, st.Output)
	}
	if got, want := statuses(t, f, id), "n9:plan:completed n9:emit_event:completed"; got != want {
		t.Fatalf("ledger %q, want %q", got, want)
	}
	stored, _ := f.rt.GetState(ctx, id)
	if stored.Version != 2 {
		t.Fatalf("commits = %d, want 2 (start + completion)", stored.Version)
	}
	if stored.Vars["k9"] != strings.Repeat("x", 32) {
		t.Fatalf("vars not persisted: %v", stored.Vars)
	}
	tmp := stored.Vars["_temp"].(map[string]any)
	if tmp["prev_node_id"] != "n8" || tmp["prev_next_node"] != "n9" {
		t.Fatalf("_temp = %v", tmp)
	}
}

func TestResume_AskUser(t *testing.T) {
	t.Parallel()
	f := setup(t, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", SessionID: "s1"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunWaiting || st.Waiting.WaitKey != "user:"+id+":ask" || st.Waiting.ResumeToNode != "done" {
		t.Fatalf("state %+v wait %+v", st.Status, st.Waiting)
	}
	_, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "user:x:ask", Payload: map[string]any{"text": "no"}})
	var stale *runtime.StaleResumeError
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "wait_key mismatch") {
		t.Fatalf("wrong key: err = %v", err)
	}
	st, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["answer"] != "yes" {
		t.Fatalf("status %s output %v", st.Status, st.Output)
	}
	want := "ask:ask_user:started ask:ask_user:waiting ask:resume:completed done:plan:completed done:emit_event:completed"
	if got := statuses(t, f, id); got != want {
		t.Fatalf("ledger\n got %q\nwant %q", got, want)
	}
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, Payload: map[string]any{"text": "again"}}); !errors.As(err, &stale) {
		t.Fatalf("second resume: err = %v, want StaleResumeError", err)
	}
}

func waitUntilWorkflow(id string, until func(rc *runtime.RunContext) string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": until(rc)}, ResultKey: "woke"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

func TestWaitUntil_DueAndPast(t *testing.T) {
	t.Parallel()
	past := waitUntilWorkflow("past", func(*runtime.RunContext) string { return "2000-01-01T00:00:00+00:00" })
	due := waitUntilWorkflow("due", func(rc *runtime.RunContext) string {
		return durable.FormatTime(rc.Now().Add(250 * time.Millisecond))
	})
	f := setup(t, past, due)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "past"})
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if st.Status != durable.RunCompleted || st.Vars["woke"].(map[string]any)["ready"] != true {
		t.Fatalf("past: %s %v", st.Status, st.Vars["woke"])
	}
	id2, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "due"})
	st, _ = f.rt.Tick(ctx, id2, runtime.TickOptions{})
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("due: %s", st.Status)
	}
	if st, _ = f.rt.Tick(ctx, id2, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("released early: %s", st.Status)
	}
	f.now = f.now.Add(time.Second)
	st, err := f.rt.Tick(ctx, id2, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("after deadline: %v %v", st.Status, err)
	}
	if _, wrote := st.Vars["woke"]; wrote {
		t.Fatalf("due release must not write result_key")
	}
}

func TestStart_RefusesNonJSONVars(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	for _, c := range []struct {
		vars map[string]any
		path string
	}{
		{map[string]any{"a": map[string]any{"b": math.NaN()}}, "vars.a.b"},
		{map[string]any{"inf": []any{math.Inf(-1)}}, "vars.inf[0]"},
		{map[string]any{"c": make(chan int)}, "vars.c"},
		{map[string]any{"f": func() {}}, "vars.f"},
	} {
		_, err := f.rt.Start(context.Background(), runtime.StartParams{WorkflowID: "chain", Vars: c.vars})
		if err == nil || !strings.Contains(err.Error(), c.path) {
			t.Errorf("vars %s: err = %v", c.path, err)
		}
	}
}

func TestNodeErrorFailsRun(t *testing.T) {
	t.Parallel()
	bad := &runtime.Workflow{ID: "bad", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.StepPlan{}, errors.New("boom")
		},
	}}
	dangling := &runtime.Workflow{ID: "dangling", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("nowhere"), nil
		},
	}}
	f := setup(t, bad, dangling)
	ctx := context.Background()
	for wf, wantErr := range map[string]string{"bad": `node "b" failed: boom`, "dangling": `unknown node "nowhere"`} {
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != durable.RunFailed || !strings.Contains(st.Error, wantErr) {
			t.Fatalf("%s: status %s error %q", wf, st.Status, st.Error)
		}
		if led := statuses(t, f, id); !strings.HasSuffix(led, ":plan:failed "+st.CurrentNode+":emit_event:completed") {
			t.Fatalf("%s: ledger %q", wf, led)
		}
	}
}

func TestUnknownEffectFailsRun(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "llm", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "hi"}}, "a"), nil
		},
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "llm"})
	st, _ := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if st.Status != durable.RunFailed || st.Error != "Effect failed after 1 attempts: No effect handler registered for llm_call" {
		t.Fatalf("status %s error %q", st.Status, st.Error)
	}
}

// handoffRecorder records the Handoff flag of every commit.
type handoffRecorder struct {
	store.Wrapper
	mu    sync.Mutex
	flags []bool
}

func (h *handoffRecorder) RunCommit(ctx context.Context, p *store.CommitParams) error {
	h.mu.Lock()
	h.flags = append(h.flags, p.Handoff)
	h.mu.Unlock()
	return h.Store.RunCommit(ctx, p)
}

// TestStartHandsOverOnlyRunsInTheStoresTypes: Start gives its run to the
// store (CommitParams.Handoff) only when a read would give back the same
// Go types, so a node sees numbers as json.Number whether the store
// returned the handed-over object or a copy.
func TestStartHandsOverOnlyRunsInTheStoresTypes(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	wf := &runtime.Workflow{ID: "types", Entry: "n", Nodes: map[string]runtime.NodeFunc{
		"n": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			m, _ := run.Vars["m"].(map[string]any)
			seen[run.RunID] = fmt.Sprintf("%T %T %T", run.Vars["n"], run.Vars["f"], m["i"])
			return runtime.Complete(nil), nil
		},
	}}
	rec := &handoffRecorder{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: rec, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cases := []struct {
		vars    map[string]any
		handoff bool
	}{
		{map[string]any{"n": 3, "f": 1.5, "m": map[string]any{"i": int64(2)}}, false},
		{map[string]any{"n": json.Number("3"), "f": json.Number("1.5"), "m": map[string]any{"i": json.Number("2")}}, true},
	}
	for _, c := range cases {
		rec.flags = nil
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "types", Vars: c.vars})
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.flags) != 1 || rec.flags[0] != c.handoff {
			t.Errorf("vars %v: start commits with Handoff %v, want [%v]", c.vars, rec.flags, c.handoff)
		}
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		if want := "json.Number json.Number json.Number"; seen[id] != want {
			t.Errorf("vars %v: the node saw types %q, want %q", c.vars, seen[id], want)
		}
	}
}
