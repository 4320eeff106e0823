package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// hugeInt is 10**400, past the float64 range: Python's float() of it
// raises OverflowError.
var hugeInt = "1" + strings.Repeat("0", 400)

// For: the reference's _to_number catches the OverflowError of
// float(10**400) and returns None, so the run fails with "For loop
// requires numeric 'start' and 'end'." (ours read the start as +Inf and
// ran a loop of zero iterations).
func TestForHugeIntStartIsNotNumeric(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": `+hugeInt+`, "end": 3},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "start", "type": "number"}, {"id": "end", "type": "number"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "i", "type": "number"}]}}`, "i"), map[string]any{})
	if got := st.Vars["_flow_error"]; got != "For loop requires numeric 'start' and 'end'." {
		t.Fatalf("_flow_error = %#v (status %s, output %s), want the reference's non-numeric range error",
			got, st.Status, jsonText(t, st.Output))
	}
}

// wait_until: the reference catches only (TypeError, ValueError) around
// float(duration), so the OverflowError of a 400-digit duration fails the
// node (an unreadable duration, by contrast, waits 0 seconds).
func TestWaitUntilHugeIntDurationFails(t *testing.T) {
	msg := waitUntilFailure(t, `{"duration":`+hugeInt+`}`, `{}`)
	if !strings.Contains(msg, "int too large to convert to float") {
		t.Fatalf("error = %q, want Python's OverflowError \"int too large to convert to float\"", msg)
	}
}

// Scheduler frames read their counters with int(x), as the reference's
// int(frame.get("idx", 0) or 0): a counter int() rejects ("2.0") restarts
// at 0 rather than being read as 2 through float().
func TestSequenceFrameCounterReadWithInt(t *testing.T) {
	vars := map[string]any{"_temp": map[string]any{"_control": map[string]any{
		"stack": []any{"S"}, "return_to": "S", "frames": map[string]any{
			"S": map[string]any{"kind": "sequence", "idx": "2.0", "then": []any{"then:0", "then:1", "then:2"}},
		},
	}}}
	_, st := startRunWith(t, seqFrameFlow(setFlagNode("A", "a_ran")), CompileOptions{}, vars)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	if st.Vars["a_ran"] != true || st.Vars["b_ran"] != true {
		t.Errorf("idx \"2.0\": a_ran=%v b_ran=%v, want both (int(\"2.0\") fails, so idx is 0)", st.Vars["a_ran"], st.Vars["b_ran"])
	}
}
