package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Kernel edge cases (result_key writes and the like): each test fails on
// a plausible kernel bug that no other test catches.

// The result_key write rule (spec §1.3): on the effect path the result is
// written only if the outcome is completed and the result is non-null. A
// handler completing with a null result leaves result_key as it was.
func TestNullResultWritesNothingAtResultKey(t *testing.T) {
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan {
			namespace(run.Vars, "_temp")["res"] = "before"
			return Request(&durable.Effect{Type: "x", Payload: map[string]any{}, ResultKey: "_temp.res"}, "b")
		}),
		"b": errNode(func(run *durable.RunState) StepPlan {
			v, ok := namespace(run.Vars, "_temp")["res"]
			return Complete(map[string]any{"res": v, "present": ok})
		}),
	}}
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{
		"x": {Func: func(context.Context, *EffectRequest) (Outcome, error) { return Completed(nil), nil }},
	}}, wf)
	_, st := startTickW(t, rt)
	if st.Status != durable.RunCompleted || st.Output["res"] != "before" || st.Output["present"] != true {
		t.Fatalf("after an effect completed with a null result: status %s, output %v; want completed with _temp.res still \"before\"",
			st.Status, st.Output)
	}
}

// A commit refused because another writer (another runner on the same
// store) paused the run meanwhile stops the tick without error: the pause
// wins and the tick's uncommitted step is dropped (onConflict: "A cancel
// or pause by a host wins ... Anything else is an error for the caller").
func TestConflictWithAnotherWritersPauseStopsQuietly(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	var other *Runtime
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			// Meanwhile another runner pauses the run.
			if _, err := other.Pause(ctx, run.RunID, "elsewhere"); err != nil {
				return StepPlan{}, err
			}
			run.Vars["a_done"] = true
			return Next("b"), nil
		},
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, mem, Config{}, wf)
	other = errRuntime(t, mem, Config{}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatalf("tick of a run another runner paused meanwhile: %v; want it to stop without error", err)
	}
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !IsPaused(st) || st.Status != durable.RunWaiting || st.CurrentNode != "a" || st.Vars["a_done"] != nil {
		t.Fatalf("after the conflict: paused %v, status %s at %q, a_done %v; want paused at a, the tick's steps dropped",
			IsPaused(st), st.Status, st.CurrentNode, st.Vars["a_done"])
	}
}

// The resume record's payload.payload is the payload as stored at the
// result key (spec §2.6 step 7: "its payload.payload is the stored
// payload"), not the caller's raw payload: for a subworkflow wait wrapped
// as a tool result, the {mode, results} object the run sees.
func TestResumeRecordHoldsTheStoredPayload(t *testing.T) {
	ctx := context.Background()
	wf := effectThenComplete(&durable.Effect{Type: "sub", Payload: map[string]any{}})
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{
		"sub": {Func: func(context.Context, *EffectRequest) (Outcome, error) {
			return Waiting(&durable.WaitState{Reason: durable.WaitSubworkflow, WaitKey: "subworkflow:child-1",
				ResumeToNode: "b", ResultKey: "_temp.tool",
				Details: map[string]any{"wrap_as_tool_result": true, "call_id": "call-7", "tool_name": "delegate"}}), nil
		}},
	}}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, id, TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v, %v; want waiting", st, err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: id, WaitKey: "subworkflow:child-1", MaxSteps: -1,
		Payload: map[string]any{"sub_run_id": "child-1", "output": map[string]any{"answer": "done"}}}); err != nil {
		t.Fatal(err)
	}
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := namespace(st.Vars, "_temp")["tool"].(map[string]any)
	if stored == nil || stored["mode"] != "executed" {
		t.Fatalf("stored payload at _temp.tool = %v, want the {mode, results} wrap", namespace(st.Vars, "_temp")["tool"])
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var rec *durable.StepRecord
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			rec = r
		}
	}
	if rec == nil {
		t.Fatal("no resume record")
	}
	got, _ := rec.Effect.Payload["payload"].(map[string]any)
	if got == nil || got["mode"] != "executed" || got["results"] == nil || got["sub_run_id"] != nil {
		t.Fatalf("resume record payload.payload = %v; want the stored {mode, results} payload", rec.Effect.Payload["payload"])
	}
}

// WAIT_UNTIL boundaries (spec §2.3 step 3 and §2.10): a deadline equal to
// now has passed (`now_iso >= until`): the effect completes at once with
// {"until", "ready": true}, and a tick at exactly the deadline of a
// waiting run releases it.
func TestWaitUntilDeadlineEqualToNow(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	wf := func(id string, until time.Time) *Workflow {
		return &Workflow{ID: id, Entry: "wait", Nodes: map[string]NodeFunc{
			"wait": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectWaitUntil,
					Payload: map[string]any{"until": durable.FormatTime(until)}, ResultKey: "woke"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
		}}
	}
	rt := errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }},
		wf("now", now), wf("later", now.Add(time.Second)))
	id, err := rt.Start(ctx, StartParams{WorkflowID: "now"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	woke, _ := st.Vars["woke"].(map[string]any)
	if st.Status != durable.RunCompleted || woke["ready"] != true {
		t.Fatalf("WAIT_UNTIL with until == now: %s, woke %v; want completed at once with ready true", st.Status, st.Vars["woke"])
	}
	id2, err := rt.Start(ctx, StartParams{WorkflowID: "later"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err = rt.Tick(ctx, id2, TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("WAIT_UNTIL one second ahead: %v, %v; want waiting", st, err)
	}
	now = now.Add(time.Second) // exactly the deadline
	if st, err = rt.Tick(ctx, id2, TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick at exactly the deadline: %s, %v; want the wait released and the run completed", st.Status, err)
	}
}

// A resume whose answer was committed (the checkpoint before the next
// node's effect) succeeded, even when a later commit of the steps that
// follow is dropped because another writer ended the run meanwhile: only
// a resume whose FIRST commit (the one carrying its records) was discarded
// is stale (resume.go resumeClaiming, lost). It fails if lost() drops
// `|| s.commits != base` (the accepted answer is reported stale).
func TestResumeAcceptedBeforeALaterDroppedCommitIsNotStale(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	wf := &Workflow{ID: "w", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "q"}, ResultKey: "a"}, "call")
		}),
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		// Another writer (a Python host's cancel) ends the run meanwhile.
		cur, err := st.RunGet(hctx, req.Run.RunID)
		if err != nil {
			return Outcome{}, err
		}
		cur.Status = durable.RunCancelled
		cur.Waiting = nil
		if err := st.RunCommit(hctx, &store.CommitParams{Run: cur}); err != nil {
			return Outcome{}, err
		}
		return Completed(map[string]any{"ok": true}), nil
	}
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, id, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v, %v", run, err)
	}
	run, err := rt.Resume(ctx, ResumeParams{RunID: id, WaitKey: "user:" + id + ":ask", Payload: map[string]any{"answer": "yes"}})
	if err != nil {
		t.Fatalf("resume whose answer was committed reported %v", err)
	}
	if run.Status != durable.RunCancelled {
		t.Fatalf("status %s, want the other writer's cancelled", run.Status)
	}
	got, _ := st.RunGet(ctx, id)
	if got.Vars["a"] == nil {
		t.Fatalf("the answer was not committed: vars %v", got.Vars)
	}
}
