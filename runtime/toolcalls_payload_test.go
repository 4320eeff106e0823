package runtime

// TOOL_CALLS (toolcalls.go): call ids, their warnings and the allowed
// tools a handler receives.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// runToolCalls runs one TOOL_CALLS effect with payload at node "call"
// (looping back to it loops times) and returns the run and the payloads
// the handler received.
func runToolCalls(t *testing.T, payload map[string]any, loops int) (*durable.RunState, []map[string]any) {
	t.Helper()
	var seen []map[string]any
	handler := func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		seen = append(seen, req.Effect.Payload)
		return Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			tmp := namespace(run.Vars, "_temp")
			n, _ := tmp["n"].(int64)
			tmp["n"] = n + 1
			next := "done"
			if int(n+1) < loops {
				next = "call"
			}
			return Request(&durable.Effect{Type: durable.EffectToolCalls, Payload: payload, ResultKey: "r"}, next)
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{durable.EffectToolCalls: {Func: handler}}}, wf)
	id := startRun(t, rt, StartParams{})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	return run, seen
}

// toolCallID: "call_id, or id when call_id is absent or null": a call
// whose call_id is null is not missing its id, and keeps id as call_id.
func TestToolCallWithNullCallIDUsesItsID(t *testing.T) {
	run, seen := runToolCalls(t, map[string]any{"tool_calls": []any{
		map[string]any{"call_id": nil, "id": "abc", "name": "x"},
	}}, 1)
	if w := run.Vars["_flow_warnings"]; w != nil {
		t.Errorf("_flow_warnings %v, want none (the call has id abc)", w)
	}
	call := seen[0]["tool_calls"].([]any)[0].(map[string]any)
	if call["call_id"] != "abc" {
		t.Errorf("call_id handed to the handler %v, want abc (its id)", call["call_id"])
	}
}

// warnToolCallIDs: "the ids given to more than one call": an id given
// three times is listed once.
func TestToolCallIDGivenThreeTimesIsListedOnce(t *testing.T) {
	run, _ := runToolCalls(t, map[string]any{"tool_calls": []any{
		map[string]any{"call_id": "a", "name": "x"},
		map[string]any{"call_id": "a", "name": "x"},
		map[string]any{"call_id": "a", "name": "x"},
	}}, 1)
	w, _ := run.Vars["_flow_warnings"].([]any)
	want := "#WARN: TOOL_CALLS duplicate call_id at node 'call' (a)"
	if len(w) != 1 || w[0] != want {
		t.Errorf("_flow_warnings %v, want [%q]", w, want)
	}
}

// warnToolCallIDs/addFlowWarning: vars._flow_warnings is "a list of
// unique strings": a loop repeating the same calls warns once.
func TestToolCallWarningsAreNotRepeatedByALoop(t *testing.T) {
	run, seen := runToolCalls(t, map[string]any{"tool_calls": []any{
		map[string]any{"name": "x"},
	}}, 3)
	if len(seen) != 3 {
		t.Fatalf("handler called %d times, want 3", len(seen))
	}
	w, _ := run.Vars["_flow_warnings"].([]any)
	want := "#WARN: TOOL_CALLS missing call_id at node 'call' (count=1)"
	if len(w) != 1 || w[0] != want {
		t.Errorf("_flow_warnings %v, want [%q] once", w, want)
	}
}

// withRuntimeCallIDs: the handler gets "a deduplicated, sorted
// allowed_tools" (trimmed, blanks dropped), the authored effect left as is.
func TestToolCallsHandlerGetsCanonicalAllowedTools(t *testing.T) {
	authored := []any{" search", "read", "search", "", "read "}
	_, seen := runToolCalls(t, map[string]any{
		"tool_calls":    []any{map[string]any{"call_id": "c1", "name": "read"}},
		"allowed_tools": authored,
	}, 1)
	got, _ := seen[0]["allowed_tools"].([]any)
	if len(got) != 2 || got[0] != "read" || got[1] != "search" {
		t.Errorf("allowed_tools handed to the handler %v, want [read search]", got)
	}
	if authored[0] != " search" || len(authored) != 5 {
		t.Errorf("authored allowed_tools changed: %v", authored)
	}
}
