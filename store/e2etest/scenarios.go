package e2etest

import (
	"context"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

func node(fn func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run, rc), nil
	}
}

func effect(t durable.EffectType, payload map[string]any, key, next string) runtime.StepPlan {
	return runtime.Request(&durable.Effect{Type: t, Payload: payload, ResultKey: key}, next)
}

func workflows() []*runtime.Workflow {
	return []*runtime.Workflow{
		{ID: "chain", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				run.Vars["a"] = "x"
				return runtime.Next("b")
			}),
			"b": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"a": run.Vars["a"]})
			}),
		}},
		{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectAskUser, map[string]any{"prompt": "Continue?", "choices": []any{"yes", "no"}}, "answer", "say")
			}),
			"say": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectAnswerUser, map[string]any{"message": "ok"}, "said", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"answer": run.Vars["answer"]})
			}),
		}},
		{ID: "sleep", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				until := durable.FormatTime(rc.Now().Add(time.Minute))
				return effect(durable.EffectWaitUntil, map[string]any{"until": until}, "woke", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}},
		{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectWaitEvent, map[string]any{"name": "go"}, "evt", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				evt, _ := run.Vars["evt"].(map[string]any)
				return runtime.Complete(map[string]any{"payload": evt["payload"]})
			}),
		}},
		{ID: "emit", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
			"emit": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectEmitEvent, map[string]any{"name": "go", "payload": map[string]any{"n": 7}}, "sent", "")
			}),
		}},
		{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "ask", "async": true, "wait": true}, "child", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"child": run.Vars["child"]})
			}),
		}},
		{ID: "tool", Entry: "call", Nodes: map[string]runtime.NodeFunc{
			"call": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect("slow", map[string]any{"q": "x"}, "res", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"res": run.Vars["res"]})
			}),
		}},
		{ID: "timedlisten", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectWaitEvent, map[string]any{"name": "go", "timeout_s": 60}, "evt", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"evt": run.Vars["evt"]})
			}),
		}},
		{ID: "failing", Entry: "call", Nodes: map[string]runtime.NodeFunc{
			"call": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect("fail", nil, "", "never")
			}),
		}},
	}
}

type scenario struct {
	name string
	run  func(e *env)
}

var scenarios = []scenario{
	{"Concurrent", concurrent},
	{"ConcurrentRunners", concurrentRunners},
	{"Chain", func(e *env) {
		id := e.start("chain", nil)
		if st := e.tick(id); st.Status != durable.RunCompleted || st.Output["a"] != "x" {
			e.t.Fatalf("%s %v", st.Status, st.Output)
		}
		e.expectLedger(id, "b:complete:completed b:emit_event:completed")
	}},
	{"AskResume", func(e *env) {
		id := e.start("ask", nil)
		st := e.tick(id)
		if st.Status != durable.RunWaiting || st.Waiting.WaitKey != "user:"+id+":ask" || len(st.Waiting.Choices) != 2 {
			e.t.Fatalf("%s %+v", st.Status, st.Waiting)
		}
		st, err := e.rt.Resume(e.ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
		if err != nil || st.Status != durable.RunCompleted {
			e.t.Fatalf("%v %v", st, err)
		}
		e.expectLedger(id, "ask:ask_user:started ask:ask_user:waiting ask:resume:completed "+
			"say:answer_user:started say:answer_user:completed done:complete:completed done:emit_event:completed")
		stored, _ := e.rt.GetState(e.ctx, id)
		if ans, _ := stored.Vars["answer"].(map[string]any); ans["text"] != "yes" {
			e.t.Fatalf("answer not stored: %v", stored.Vars["answer"])
		}
	}},
	{"WaitUntilViaScheduler", func(e *env) {
		id := e.start("sleep", nil)
		if st := e.tick(id); st.Status != durable.RunWaiting {
			e.t.Fatalf("%s", st.Status)
		}
		if n, _ := e.sch.PollOnce(e.ctx); n != 0 {
			e.t.Fatalf("released before its time: %d", n)
		}
		e.clk.Advance(2 * time.Minute)
		if n, _ := e.sch.PollOnce(e.ctx); n != 1 {
			e.t.Fatalf("due runs = %d", n)
		}
		st, _ := e.rt.GetState(e.ctx, id)
		if st.Status != durable.RunCompleted {
			e.t.Fatalf("%s", st.Status)
		}
		e.expectLedger(id, "wait:wait_until:started wait:wait_until:waiting done:complete:completed done:emit_event:completed")
	}},
	{"EmitEvent", func(e *env) {
		l := e.start("listen", nil)
		e.tick(l)
		em := e.start("emit", nil)
		st := e.tick(em)
		if st.Status != durable.RunCompleted {
			e.t.Fatalf("%s %s", st.Status, st.Error)
		}
		ls, _ := e.rt.GetState(e.ctx, l)
		if ls.Status != durable.RunCompleted {
			e.t.Fatalf("listener %s", ls.Status)
		}
		e.expectLedger(em, "emit:emit_event:started emit:emit_event:completed emit:emit_event:completed")
		e.expectLedger(l, "wait:wait_event:started wait:wait_event:waiting wait:resume:completed done:complete:completed done:emit_event:completed")
	}},
	{"ChildRun", func(e *env) {
		p := e.start("parent", nil)
		st := e.tick(p)
		if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitSubworkflow {
			e.t.Fatalf("%s", st.Status)
		}
		child := st.Waiting.Details["sub_run_id"].(string)
		cs, _ := e.rt.GetState(e.ctx, child)
		if cs.Status != durable.RunWaiting || cs.ParentRunID != p {
			e.t.Fatalf("child %s parent %s", cs.Status, cs.ParentRunID)
		}
		if _, err := e.rt.Resume(e.ctx, runtime.ResumeParams{RunID: child, WaitKey: cs.Waiting.WaitKey, Payload: map[string]any{"text": "no"}}); err != nil {
			e.t.Fatal(err)
		}
		st, _ = e.rt.GetState(e.ctx, p)
		if st.Status != durable.RunCompleted {
			e.t.Fatalf("parent %s", st.Status)
		}
		e.expectLedger(p, "spawn:start_subworkflow:started spawn:start_subworkflow:waiting spawn:resume:completed done:complete:completed done:emit_event:completed")
		kids, _ := e.st.RunListChildren(e.ctx, p, "")
		if len(kids) != 1 || kids[0].RunID != child {
			e.t.Fatalf("children %v", kids)
		}
	}},
	{"ChildEndsWhileParentPaused", func(e *env) {
		// Event delivery skips a paused parent; lifting the pause must
		// still hand it the child's end.
		p := e.start("parent", nil)
		st := e.tick(p)
		child := st.Waiting.Details["sub_run_id"].(string)
		if _, err := e.rt.Pause(e.ctx, p, "hold"); err != nil {
			e.t.Fatal(err)
		}
		cs, _ := e.rt.GetState(e.ctx, child)
		if _, err := e.rt.Resume(e.ctx, runtime.ResumeParams{RunID: child, WaitKey: cs.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}}); err != nil {
			e.t.Fatal(err)
		}
		if st, _ = e.rt.GetState(e.ctx, p); st.Status != durable.RunWaiting || !runtime.IsPaused(st) {
			e.t.Fatalf("paused parent resumed: %s", st.Status)
		}
		st, err := e.rt.ResumeRun(e.ctx, p)
		if err != nil {
			e.t.Fatal(err)
		}
		if st.Status != durable.RunCompleted {
			e.t.Fatalf("parent %s after its pause was lifted (child ended meanwhile): %+v", st.Status, st.Waiting)
		}
		e.expectLedger(p, "spawn:start_subworkflow:started spawn:start_subworkflow:waiting spawn:resume:completed done:complete:completed done:emit_event:completed")
	}},
	{"SessionTrimmedAtStart", sessionTrimmedAtStart},
	{"EffectFailure", func(e *env) {
		id := e.start("failing", nil)
		st := e.tick(id)
		if st.Status != durable.RunFailed || !strings.Contains(st.Error, "boom") {
			e.t.Fatalf("%s %q", st.Status, st.Error)
		}
		e.expectLedger(id, "call:fail:started call:fail:failed call:emit_event:completed")
	}},
	{"CancelWaiting", func(e *env) {
		id := e.start("ask", nil)
		e.tick(id)
		st, err := e.rt.Cancel(e.ctx, id, "")
		if err != nil || st.Status != durable.RunCancelled || st.Error != "Cancelled" || st.Waiting != nil {
			e.t.Fatalf("%v %v", st, err)
		}
		e.expectLedger(id, "ask:ask_user:started ask:ask_user:waiting ask:emit_event:completed")
		if _, err := e.rt.Resume(e.ctx, runtime.ResumeParams{RunID: id, Payload: map[string]any{}}); err == nil {
			e.t.Fatal("resume of a cancelled run succeeded")
		}
	}},
}

// sessionTrimmedAtStart: Start stores the session id trimmed, so the run
// and the child it starts (which inherits it) are found by the session
// filter, padded or not, on every backend, the SQL ones (which compare the
// stored id as written) included; history's session export passes the
// trimmed id. The ledger check wants session "sess" on every record.
func sessionTrimmedAtStart(e *env) {
	p, err := e.rt.Start(e.ctx, runtime.StartParams{WorkflowID: "parent", SessionID: " \tsess\u00a0"})
	if err != nil {
		e.t.Fatal(err)
	}
	st := e.tick(p)
	if st.SessionID != "sess" || st.Waiting == nil {
		e.t.Fatalf("run started in session %q: status %s, session %q, want session %q", " \tsess\u00a0", st.Status, st.SessionID, "sess")
	}
	child := st.Waiting.Details["sub_run_id"].(string)
	if cs, _ := e.rt.GetState(e.ctx, child); cs == nil || cs.SessionID != "sess" {
		e.t.Fatalf("child run %+v, want session %q", cs, "sess")
	}
	for _, filter := range []string{"sess", " sess "} {
		rows, err := e.st.RunIndex(e.ctx, &store.RunIndexParams{SessionID: filter})
		if err != nil {
			e.t.Fatal(err)
		}
		got := map[string]bool{}
		for _, r := range rows {
			got[r.RunID] = true
		}
		if len(rows) != 2 || !got[p] || !got[child] {
			e.t.Fatalf("RunIndex(SessionID %q) = %+v, want the run %s and its child %s", filter, rows, p, child)
		}
	}
	e.expectLedger(p, "spawn:start_subworkflow:started spawn:start_subworkflow:waiting")
}
