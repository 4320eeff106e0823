package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// wait_until computes until = now + duration through time.Duration, which
// holds at most ~292 years. A longer delay (here 3,000,000 hours, ~342
// years; Python's datetime + timedelta gives 2368-03-...) overflows the
// int64 nanosecond count: the deadline lands in the past and the run
// resumes at once instead of waiting.
func TestWaitUntilBeyond292YearsStillWaits(t *testing.T) {
	flow := rsFlow("wait_until_long", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("wait", "wait_until", []string{"exec-in:exec", "duration:number"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"duration": 3000000}, "effectConfig": map[string]any{"durationType": "hours"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>wait.exec-in", "wait.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting {
		t.Fatalf("a 342-year delay: status %s, want waiting (until ~2368); output %s", st.Status, jsonText(t, st.Output))
	}
	if until := st.Waiting.Until.String(); !strings.HasPrefix(until, "2368-") {
		t.Fatalf("until = %q, want 2368-…", until)
	}
}

// on_schedule: the same overflow for an interval schedule. "110000d"
// (~301 years; Python: 2327-03-05) fires at once; with recurrent (the
// default) the listener would re-arm into the past and fire on every tick.
func TestOnScheduleIntervalBeyond292YearsStillWaits(t *testing.T) {
	flow := rsFlow("schedule_long", "sched", []map[string]any{
		rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"}, []string{"exec-out:exec", "timestamp:string"},
			map[string]any{"pinDefaults": map[string]any{"schedule": "110000d", "recurrent": false}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "done:boolean"}, nil, map[string]any{"pinDefaults": map[string]any{"done": true}}),
	}, "sched.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting {
		t.Fatalf("a 110000-day schedule: status %s, want waiting (until 2327-03-05); output %s", st.Status, jsonText(t, st.Output))
	}
	if until := st.Waiting.Until.String(); !strings.HasPrefix(until, "2327-03-05") {
		t.Fatalf("until = %q, want 2327-03-05…", until)
	}
}

// A function node whose base input is the whole vars object (no bus yet:
// the flow is entered at on_schedule or on_event, which do not write
// _last_output, §4.4) and whose result forwards its inputs (on_flow_end
// without data pins, §4.10) records that result, which holds vars._temp,
// under vars._temp.node_outputs: vars now contain themselves, and the run
// fails when it is saved ("is not JSON-serialisable: cycle") instead of
// completing. A scheduled flow on_schedule -> on_flow_end is enough.
func TestFlowEndAfterScheduleDoesNotStoreACycle(t *testing.T) {
	flow := rsFlow("schedule_then_end", "sched", []map[string]any{
		rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"}, []string{"exec-out:exec", "timestamp:string"},
			map[string]any{"pinDefaults": map[string]any{"schedule": "2020-01-01T00:00:00Z"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "sched.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"topic": "x"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("on_schedule (past timestamp) -> on_flow_end: status %s (%s), want completed", st.Status, st.Error)
	}
	if st.Output["topic"] != "x" || st.Output["success"] != true {
		t.Fatalf("output %s, want the vars forwarded with success=true", jsonText(t, st.Output))
	}
}
