package runtime

// START_SUBWORKFLOW (builtin_subworkflow.go): the parent's wait on a sync
// child that waits, and the ids of the children an effect's attempts
// start.

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A sync child waiting in WAIT_UNTIL has no wait key: the parent's
// details.sub_waiting.wait_key is null (Python: sub_state.waiting.wait_key,
// None), not "". It fails if handleStartSubworkflow copies the child's
// empty key as a string.
func TestSyncChildUntilWaitGivesNullSubWaitingKey(t *testing.T) {
	ctx := context.Background()
	child := &Workflow{ID: "child", Entry: "sleep", Nodes: map[string]NodeFunc{
		"sleep": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(farDeadline)}}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, syncParentOf(), child)
	pid := startRun(t, rt, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if err != nil || ps.Status != durable.RunWaiting || ps.Waiting.Reason != durable.WaitSubworkflow {
		t.Fatalf("parent: %v %v", ps, err)
	}
	sub, _ := ps.Waiting.Details["sub_waiting"].(map[string]any)
	if key, present := sub["wait_key"]; !present || key != nil || sub["reason"] != "until" {
		t.Fatalf("sub_waiting %#v, want reason until and wait_key null", sub)
	}
}

// The first attempt's child id depends on the parent and the effect's
// key only (a run replayed from a checkpoint written before retries had
// their own children still finds its child); each retry's differs. It
// fails if childRunID tags the first attempt too.
func TestFirstAttemptChildIDIgnoresTheAttempt(t *testing.T) {
	first := childRunID("p1", "k1", 1)
	if want := derivedID("p1", "k1"); first != want {
		t.Fatalf("first attempt's child %s, want %s", first, want)
	}
	if second := childRunID("p1", "k1", 2); second == first || second == childRunID("p1", "k1", 3) {
		t.Fatalf("retries' children %s, %s: want each its own, not %s", second, childRunID("p1", "k1", 3), first)
	}
}

// subworkflowToolOutput keeps a report of up to 4000 characters (Python:
// len(report) <= 4000): exactly 4000 is kept, 4001 dropped. It fails if
// the bound is exclusive.
func TestWrappedSubworkflowReportBoundIsInclusive(t *testing.T) {
	for _, c := range []struct {
		n    int
		kept bool
	}{{4000, true}, {4001, false}} {
		report := strings.Repeat("r", c.n)
		out := subworkflowToolOutput("c1", map[string]any{"answer": "ok", "report": report})
		if _, kept := out["report"]; kept != c.kept {
			t.Errorf("report of %d characters kept %v, want %v", c.n, kept, c.kept)
		}
	}
}

// Spec §3.6: an async+wait wrapped as a tool result keeps
// wrap_as_tool_result, tool_name and call_id in its wait's details (the
// child's end is turned into that call's tool result). It fails if
// handleStartSubworkflow leaves call_id out of the details.
func TestWrappedAsyncWaitDetailsKeepTheCall(t *testing.T) {
	ctx := context.Background()
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{
				"workflow_id": "child", "async": true, "wait": true, "wrap_as_tool_result": true,
				"tool_name": "delegate", "call_id": "c9"}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, askChild())
	pid := startRun(t, rt, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if err != nil || ps.Status != durable.RunWaiting || ps.Waiting.Reason != durable.WaitSubworkflow {
		t.Fatalf("parent: %v %v", ps, err)
	}
	d := ps.Waiting.Details
	if d["wrap_as_tool_result"] != true || d["tool_name"] != "delegate" || d["call_id"] != "c9" {
		t.Fatalf("details %v, want wrap_as_tool_result true, tool_name delegate, call_id c9", d)
	}
}

// subworkflowToolOutput trims the child output's answer (Python:
// str(answer).strip()). It fails if the answer is taken as given.
func TestWrappedSubworkflowAnswerIsTrimmed(t *testing.T) {
	out := subworkflowToolOutput("c1", map[string]any{"answer": "  ok \n"})
	if out["answer"] != "ok" || out["rendered"] != "ok" {
		t.Fatalf("tool output %v, want answer and rendered \"ok\"", out)
	}
}
