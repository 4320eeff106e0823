package runtime

// Resumes of tool waits (resume.go): approvals, ready tool results,
// blocked results merged back and the synthetic TOOL_CALLS completion.

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// resumedValue parks a run in the wait a handler returns (reason,
// details) and resumes it with payload; it returns what the resume stored
// at the result key.
func resumedValue(t *testing.T, reason durable.WaitReason, details, payload map[string]any) any {
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
	id := startRun(t, rt, StartParams{})
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
	got := resumedValue(t, durable.WaitSubworkflow, map[string]any{"wrap_as_tool_result": true, "sub_run_id": "child-1"}, payload)
	m, _ := got.(map[string]any)
	res, _ := m["results"].([]any)
	first, _ := res[0].(map[string]any)
	if len(res) != 1 || first["call_id"] != "c1" || first["output"] != "done" {
		t.Errorf("stored %v, want the host's tool result as given", got)
	}
}

// mergeBlockedResults: the results are rebuilt "only when ... the host's
// results are fewer or more" than the calls (spec §2.6 step 4): the fixed
// entries keep their indices, the host's results fill the others in order,
// and those left over are dropped. As many as the calls are stored as the
// host gave them.
func TestToolWaitResumeMergesOnlyWhenTheCountDiffers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results int
		want    []any
	}{
		{"as many as the calls", 2, []any{"h0", "h1"}},
		{"more than the calls", 3, []any{"b0", "h0"}},
	} {
		details := map[string]any{
			"mode":                "delegated",
			"original_call_count": int64(2),
			"blocked_by_index":    map[string]any{"0": map[string]any{"call_id": "b0", "success": false, "error": "blocked"}},
		}
		var results []any
		for i := range tc.results {
			results = append(results, map[string]any{"call_id": fmt.Sprintf("h%d", i), "success": true})
		}
		got := resumedValue(t, durable.WaitEvent, details, map[string]any{"mode": "executed", "results": results})
		m, _ := got.(map[string]any)
		res, _ := m["results"].([]any)
		var ids []any
		for _, r := range res {
			ids = append(ids, r.(map[string]any)["call_id"])
		}
		if !reflect.DeepEqual(ids, tc.want) || m["mode"] != "executed" {
			t.Errorf("%s: stored %v (call ids %v); want call ids %v", tc.name, got, ids, tc.want)
		}
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
	got := resumedValue(t, durable.WaitUser, details(), map[string]any{"approved": false, "reason": "  not now  "})
	m, _ := got.(map[string]any)
	res, _ := m["results"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["error"] != "not now" {
		t.Errorf("denied with a padded reason: stored %v, want one failed call with error %q", got, "not now")
	}
	got = resumedValue(t, durable.WaitUser, details(), map[string]any{"note": "hello"})
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
	}, callThenDoneWorkflow(durable.EffectToolCalls, map[string]any{"tool_calls": []any{map[string]any{"call_id": "c1", "name": "x"}}}))
	id := startRun(t, rt, StartParams{})
	if run, err := rt.Tick(ctx, id, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: id, WaitKey: "tools:1", Payload: map[string]any{"mode": "executed", "results": []any{}}}); err != nil {
		t.Fatal(err)
	}
	var waitingKey string
	for _, r := range listLedger(t, st, id) {
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

// An approval_required tool wait answered with a ready tool result
// ({"mode", "results"}) keeps that result even when the payload also says
// approved: only a bare approval is turned into per-call results (Python
// runtime resume: the approval branch applies when the payload is not
// already a tool-results object). It fails if resume.go resumeValue drops
// `&& !(hasMode && hasResults)` from the approval branch.
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
// host's results as they are. It fails if `total <= 0` becomes
// `total < 0` (the results are replaced by an empty list).
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
// record its synthetic completion. It fails if steps[0] is read instead of
// steps[len-1].
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
// is written (resume.go syntheticToolCompletion). It fails if the check
// `waiting == nil || waiting.IdempotencyKey == ""` becomes `waiting == nil`
// (a completed tool record with an empty key is appended).
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
