package runtime

// Tests from a mutation-testing review: each kills a
// mutant of builtin_wait.go, resume.go or followretry.go that the rest of
// the package's tests let survive.

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func waitRequestFor(t *testing.T, typ durable.EffectType, payload map[string]any) *EffectRequest {
	t.Helper()
	rt := errRuntime(t, memory.New(), Config{})
	return &EffectRequest{
		Run:    &durable.RunState{RunID: "r1", WorkflowID: "wf", CurrentNode: "n1", Vars: map[string]any{}},
		Effect: &durable.Effect{Type: typ, Payload: payload},
		NodeID: "n1", DefaultNext: "n2", Runtime: rt,
	}
}

// ASK_USER with allow_free_text: false must offer choices only (Python:
// allow_free_text = bool(payload.get("allow_free_text", True))). Mutant
// killed: builtin_wait.go handleAskUser `allow = truthy(v)` ignoring a
// false value (allow stayed true).
func TestAskUserAllowFreeTextFalse(t *testing.T) {
	out, err := handleAskUser(context.Background(), waitRequestFor(t, durable.EffectAskUser,
		map[string]any{"prompt": "pick", "choices": []any{"a", "b"}, "allow_free_text": false}))
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if out.Wait.AllowFreeText {
		t.Fatal("allow_free_text=false was ignored: the wait allows free text")
	}
}

// WAIT_EVENT reads allow_free_text first and allowFreeText only when the
// first is absent or null (the loop breaks on the first non-null key, as
// Python's `payload.get("allow_free_text")` then the camelCase fallback).
// Mutant killed: the `break` dropped, so the later key overrode the first.
func TestWaitEventFirstFreeTextKeyWins(t *testing.T) {
	out, err := handleWaitEvent(context.Background(), waitRequestFor(t, durable.EffectWaitEvent,
		map[string]any{"name": "go", "allow_free_text": true, "allowFreeText": false}))
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if !out.Wait.AllowFreeText {
		t.Fatal("allowFreeText overrode the allow_free_text given first")
	}
}

// An approval_required tool wait answered with a ready tool result
// ({"mode", "results"}) keeps that result even when the payload also says
// approved: only a bare approval is turned into per-call results (Python
// runtime resume: the approval branch applies when the payload is not
// already a tool-results object). Mutant killed: resume.go resumeValue,
// `&& !(hasMode && hasResults)` dropped from the approval branch.
func TestApprovalWaitKeepsAReadyToolResult(t *testing.T) {
	w := &durable.WaitState{Reason: durable.WaitUser, Details: map[string]any{
		"mode":       "approval_required",
		"tool_calls": []any{map[string]any{"call_id": "c1", "name": "t"}},
	}}
	given := []any{map[string]any{"call_id": "c1", "name": "t", "success": true, "output": "ok", "error": nil}}
	payload := map[string]any{"approved": true, "mode": "executed", "results": given}
	got, _ := resumeValue(w, payload).(map[string]any)
	if got == nil || !reflect.DeepEqual(got["results"], given) {
		t.Fatalf("stored %#v, want the host's results kept", got)
	}
}

// mergeBlockedResults merges only when original_call_count is a positive
// integer (Python: isinstance(n, int) and n > 0). A count of 0 leaves the
// host's results as they are. Mutant killed: `total <= 0` -> `total < 0`
// (the results were replaced by an empty list).
func TestMergeBlockedZeroCountKeepsResults(t *testing.T) {
	details := map[string]any{
		"blocked_by_index":    map[string]any{"0": map[string]any{"call_id": "b", "success": false}},
		"original_call_count": 0,
	}
	results := []any{map[string]any{"call_id": "x", "success": true}}
	got, _ := mergeBlockedResults(details, map[string]any{"results": results}).(map[string]any)
	if got == nil || !reflect.DeepEqual(got["results"], results) {
		t.Fatalf("merged %#v, want the results untouched", got)
	}
}

// lastTracedToolCalls looks at the LAST step traced at the current node
// (a node revisited in a loop may have traced other effects first): it
// decides whether a resume searches the ledger for the TOOL_CALLS wait to
// record its synthetic completion. Mutant killed: steps[len-1] -> steps[0].
func TestLastTracedToolCallsUsesLastStep(t *testing.T) {
	run := &durable.RunState{CurrentNode: "n1", Vars: map[string]any{"_runtime": map[string]any{
		"node_traces": map[string]any{"n1": map[string]any{"steps": []any{
			map[string]any{"effect": map[string]any{"type": "answer_user"}},
			map[string]any{"effect": map[string]any{"type": string(durable.EffectToolCalls)}},
		}}},
	}}}
	if !lastTracedToolCalls(run) {
		t.Fatal("the last traced step is a tool_calls effect, but it was not seen")
	}
}

// A resume of a TOOL_CALLS wait records a synthetic completion under the
// waiting record's idempotency key, so a replay reuses the host's results.
// A waiting record without a key (one a host or another writer stored)
// names no effect: nothing could ever find a completion under "", so none
// is written (resume.go syntheticToolCompletion). Mutant killed:
// `waiting == nil || waiting.IdempotencyKey == ""` -> `waiting == nil`
// (a completed tool record with an empty key was appended).
func TestKeylessToolWaitGetsNoSyntheticCompletion(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := errRuntime(t, st, Config{})
	run := &durable.RunState{RunID: "r-kl", WorkflowID: "wf-absent", Status: durable.RunWaiting, CurrentNode: "tools",
		Vars: map[string]any{},
		Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "tool:k", ResultKey: "res", ResumeToNode: "next",
			AllowFreeText: true, Details: map[string]any{"mode": "approval_required"}}}
	rec := &durable.StepRecord{RunID: "r-kl", StepID: "s1", NodeID: "tools", Status: durable.StepWaiting,
		Effect: &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{"tool_calls": []any{}}},
		Result: map[string]any{"wait": map[string]any{"wait_key": "tool:k"}}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: "r-kl", WaitKey: "tool:k", MaxSteps: -1,
		Payload: map[string]any{"mode": "executed", "results": []any{}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "r-kl"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == durable.EffectToolCalls {
			t.Fatalf("a synthetic tool completion was recorded for a keyless waiting record: %+v", r)
		}
	}
}

// A resume whose answer was committed (the checkpoint before the next
// node's effect) succeeded, even when a later commit of the steps that
// follow is dropped because another writer ended the run meanwhile: only
// a resume whose FIRST commit (the one carrying its records) was discarded
// is stale (resume.go resumeClaiming, lost). Mutant killed: lost() without
// `|| s.commits != base` (the accepted answer was reported stale).
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

// WAIT_EVENT's session id is payload.session_id only when truthy (Python:
// `payload.get("session_id") or run.session_id or run.run_id`): a blank
// one falls back to the run's session. Mutant killed: builtin_wait.go
// handleWaitEvent `truthy(v)` -> `v != nil` (the wait failed for a
// missing scope id).
func TestWaitEventBlankSessionIDFallsBack(t *testing.T) {
	req := waitRequestFor(t, durable.EffectWaitEvent, map[string]any{"name": "go", "session_id": ""})
	req.Run.SessionID = "s1"
	out, err := handleWaitEvent(context.Background(), req)
	if err != nil || out.Status != OutcomeWaiting {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if out.Wait.WaitKey != "evt:session:s1:go" {
		t.Fatalf("wait key %q, want evt:session:s1:go", out.Wait.WaitKey)
	}
}
