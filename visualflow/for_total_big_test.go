package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// A for loop whose iteration count exceeds int64 (end 1e19, step 1) has
// total = int(math.ceil(1e19)) = 10000000000000000000 in the reference
// (_compute_total, a Python int). runFor converts the float to int64
// directly, which overflows (implementation-defined in Go: math.MinInt64
// on amd64/arm64), so the iteration record's `total` pin reads
// -9223372036854775808: a negative count of iterations.
func TestForTotalBeyondInt64IsNotNegative(t *testing.T) {
	flow := rsFlow("for_big", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("F", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
			[]string{"loop:exec", "done:exec", "i:number", "index:number", "total:number"},
			map[string]any{"pinDefaults": map[string]any{"start": 0, "end": 1e19, "step": 1}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "i:number", "total:number"}, nil, nil),
	}, "start.exec-out>F.exec-in", "F.loop>end.exec-in", "F.i>end.i", "F.total>end.total")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	got := normJSON(t, st.Output["total"])
	if got != "10000000000000000000" {
		t.Fatalf("for over [0, 1e19): total = %s, want 10000000000000000000 (the reference's int(math.ceil(span/step))); output %s",
			got, jsonText(t, st.Output))
	}
}

// A span so large that (end-start)/step overflows to +Inf gives total 0,
// as the reference's _compute_total does for infinities (OverflowError is
// caught); it must not be written as the text "+Inf", which is not a JSON
// number and would fail the record's persistence or read back wrong.
func TestForTotalInfiniteSpanIsZero(t *testing.T) {
	flow := rsFlow("for_inf", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("F", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
			[]string{"loop:exec", "done:exec", "i:number", "index:number", "total:number"},
			map[string]any{"pinDefaults": map[string]any{"start": -1e308, "end": 1e308, "step": 1e-300}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "i:number", "total:number"}, nil, nil),
	}, "start.exec-out>F.exec-in", "F.loop>end.exec-in", "F.i>end.i", "F.total>end.total")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	if got := normJSON(t, st.Output["total"]); got != "0" {
		t.Fatalf("for over an infinite span: total = %s, want 0; output %s", got, jsonText(t, st.Output))
	}
}
