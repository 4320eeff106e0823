package visualflow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// §5.6 child vars: scratchpad.max_iterations is int(_limits.max_iterations
// or 25): a negative parent limit is truthy and kept as is (only 0 and
// null fall back to 25). Keeping 25 for any non-positive limit would
// give the child a budget the parent never set.
func TestAgentChildScratchpadKeepsNegativeParentLimit(t *testing.T) {
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow("", "response")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
		nil, map[string]any{"_limits": map[string]any{"max_iterations": int64(-3)}})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	sp, _ := child["scratchpad"].(map[string]any)
	if got := jsonText(t, sp["max_iterations"]); got != "-3" {
		t.Fatalf("child scratchpad.max_iterations = %s, want -3 (int(-3 or 25))", got)
	}
}

// int(_limits.max_iterations or 25) raises for a parent limit that is not
// a number (Python's int("many")), so the agent node fails rather than
// starting the child with the default budget.
func TestAgentNonNumericParentMaxIterationsFailsNode(t *testing.T) {
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow("", "response")}, []*runtime.Workflow{captureReact("react-x", &child, nil)},
		nil, map[string]any{"_limits": map[string]any{"max_iterations": "many"}})
	if st.Status != durable.RunFailed {
		t.Fatalf("status = %s, want failed (int(\"many\") raises)", st.Status)
	}
	if !strings.Contains(st.Error, "max_iterations") {
		t.Fatalf("error = %q, want it to name max_iterations", st.Error)
	}
	if child != nil {
		t.Fatalf("the ReAct child started: %s", jsonText(t, child))
	}
}

// agentScratchpadStepIDs runs an agent whose ReAct child leaves traces
// and returns the step_id of each scratchpad step in order.
func agentScratchpadStepIDs(t *testing.T, traces map[string]any) []string {
	t.Helper()
	var child map[string]any
	_, st := runFlows(t, []string{agentWiredFlow("", "response")}, []*runtime.Workflow{captureReact("react-x", &child, traces)}, nil, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	b := agentBucketOf(st, "agent")
	sp, _ := b["scratchpad"].(map[string]any)
	steps, _ := sp["steps"].([]any)
	var ids []string
	for _, s := range steps {
		m, _ := s.(map[string]any)
		ids = append(ids, fmt.Sprint(m["step_id"]))
	}
	return ids
}

// scratchpad.steps are sorted by ts with Python's stable sort: steps with
// equal ts keep their trace order. An unstable sort reorders them once a
// trace has more steps than an insertion sort handles.
func TestAgentStepsWithEqualTsKeepTraceOrder(t *testing.T) {
	var steps []any
	var want []string
	for i := range 40 {
		ts := "2026-01-01T00:00:01Z"
		if i%2 == 1 {
			ts = "2026-01-01T00:00:00Z"
		}
		steps = append(steps, map[string]any{"step_id": fmt.Sprintf("s%02d", i), "ts": ts})
	}
	for i := 1; i < 40; i += 2 {
		want = append(want, fmt.Sprintf("s%02d", i))
	}
	for i := 0; i < 40; i += 2 {
		want = append(want, fmt.Sprintf("s%02d", i))
	}
	got := agentScratchpadStepIDs(t, map[string]any{"reason": map[string]any{"steps": steps}})
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("scratchpad.steps = %v\nwant %v (stable sort by ts)", got, want)
	}
}

// Steps of different node traces with the same ts are flattened in node
// id order, so the scratchpad (and the tool activity read from it) is the
// same on every run rather than following map iteration order.
func TestAgentStepsOfTracesWithEqualTsFollowNodeIDOrder(t *testing.T) {
	traces := map[string]any{}
	var want []string
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		traces[id] = map[string]any{"steps": []any{map[string]any{"step_id": id, "ts": "2026-01-01T00:00:00Z"}}}
		want = append(want, id)
	}
	for range 5 {
		got := agentScratchpadStepIDs(t, traces)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("scratchpad.steps = %v, want node id order %v", got, want)
		}
	}
}
