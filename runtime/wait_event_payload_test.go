package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestWaitEventHugeTimeoutDoesNotTimeOutAtOnce: a WAIT_EVENT with a
// very long timeout_s (1e10 s, about 317 years: "practically never")
// must wait, its deadline in the future. eventDeadline multiplied the
// seconds into a time.Duration, which overflowed int64 nanoseconds (max
// ~292 years): the deadline landed centuries in the past, and the next
// tick resolved the wait with {"timed_out": true} at once.
func TestWaitEventHugeTimeoutDoesNotTimeOutAtOnce(t *testing.T) {
	f, id, st := waitEventFixture(t, map[string]any{"wait_key": "k", "timeout_s": 1e10})
	if st.Status == durable.RunWaiting && !st.Waiting.Until.After(f.now) {
		t.Fatalf("timeout_s 1e10 gave a deadline in the past: %v (now %v)", st.Waiting.Until, f.now)
	}
	st, _ = f.rt.Tick(context.Background(), id, runtime.TickOptions{})
	if st.Status != durable.RunWaiting {
		t.Fatalf("a wait with a 317-year timeout ended at once: %s %v", st.Status, st.Output)
	}
}

// TestWaitEventUnreadableUntilIsReported: a WAIT_EVENT whose payload
// "until" is not a timestamp string (here an epoch number) was silently
// treated as having no deadline, so the wait never timed out.
// timeout_s of the wrong type is refused ("wait_event invalid payload:
// timeout_s must be a non-negative number") and WAIT_UNTIL refuses a
// non-string until (docs/compatibility.md: "a deadline that cannot be
// read should be reported, not wait"); the same mistake on WAIT_EVENT's
// until should fail the effect rather than wait forever.
func TestWaitEventUnreadableUntilIsReported(t *testing.T) {
	_, _, st := waitEventFixture(t, map[string]any{"wait_key": "k", "until": 1767225600})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "until must be an ISO timestamp") {
		t.Fatalf("wait_event with until=1767225600 (a number): status %s, error %q; want the effect failed naming until", st.Status, st.Error)
	}
}

// waitEventFixture starts a run whose first node waits on an event with
// payload, ticks it once and returns the fixture, the run id and state.
func waitEventFixture(t *testing.T, payload map[string]any) (*fixture, string, *durable.RunState) {
	t.Helper()
	wf := &runtime.Workflow{ID: "w", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: payload, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"evt": run.Vars["evt"]})
		}),
	}}
	f := setup(t, wf)
	id, _ := f.rt.Start(context.Background(), runtime.StartParams{WorkflowID: "w"})
	st, err := f.rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f, id, st
}
