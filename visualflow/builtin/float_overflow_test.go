package builtin

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Python's float() of an int too large for a double raises OverflowError
// ("int too large to convert to float"). The reference math nodes
// (math_add, math_abs, math_round, … in visual/builtins.py) call
// float(inputs.get(...)) unguarded, so a 400-digit integer input fails the
// node; math_random_float catches the exception and falls back to its
// defaults 0.0 / 1.0.
func TestFloatOfHugeIntOverflows(t *testing.T) {
	t.Parallel()
	huge := json.Number("1" + strings.Repeat("0", 400))
	negHuge := json.Number("-1" + strings.Repeat("0", 400))
	const msg = "int too large to convert to float"
	runNodeCases(t, []nodeCase{
		{name: "add", typ: "add", in: obj{"a": huge, "b": int64(1)}, wantErr: msg},
		{name: "multiply", typ: "multiply", in: obj{"a": int64(0), "b": huge}, wantErr: msg},
		{name: "abs", typ: "abs", in: obj{"value": negHuge}, wantErr: msg},
		{name: "round", typ: "round", in: obj{"value": huge}, wantErr: msg},
		{name: "divide", typ: "divide", in: obj{"a": huge, "b": int64(2)}, wantErr: msg},
		// A numeric string that large is float("1000…") == inf in Python.
		{name: "string is inf", typ: "add", in: obj{"a": string(huge), "b": int64(1)}, want: math.Inf(1)},
	})
	fn, _ := Lookup("random_float")
	got, err := fn(&Env{}, map[string]any{"min": huge, "max": huge})
	if err != nil {
		t.Fatalf("random_float: %v", err)
	}
	if f, ok := got.(float64); !ok || f < 0 || f >= 1 {
		t.Errorf("random_float(min=max=10**400) = %v, want a draw in [0, 1) (both bounds fall back to 0.0 and 1.0)", pyval.Repr(got))
	}
}

// agent_trace_report: the reference renders duration_ms with
// f"{float(d):.3f}" once isinstance(d, (int, float)) and d >= 0, so a
// huge positive int fails the report while a huge negative one is
// skipped by the exact comparison.
func TestAgentTraceReportHugeDuration(t *testing.T) {
	t.Parallel()
	pad := func(d any) obj {
		return obj{"node_traces": obj{"n": obj{"steps": arr{
			obj{"ts": "1", "status": "completed", "duration_ms": d, "effect": obj{"type": "x"}},
		}}}}
	}
	runNodeCases(t, []nodeCase{
		{name: "positive", typ: "agent_trace_report", in: obj{"scratchpad": pad(json.Number("1" + strings.Repeat("0", 400)))},
			wantErr: "int too large to convert to float"},
		{name: "negative", typ: "agent_trace_report", in: obj{"scratchpad": pad(json.Number("-1" + strings.Repeat("0", 400)))},
			want: "# Agent Trace Report\n\n## Timeline\n\n### 1. `n` — `x` (completed)\n"},
		{name: "1e20 int", typ: "agent_trace_report", in: obj{"scratchpad": pad(json.Number("100000000000000000000"))},
			want: "# Agent Trace Report\n\n## Timeline\n\n### 1. `n` — `x` (completed)\n- **duration_ms**: 100000000000000000000.000\n"},
	})
}

// get_element converts a numeric index with int(), exact and unbounded:
// a 400-digit index is out of range (Python returns the default), not an
// unconvertible index read as 0.
func TestGetElementHugeIntIndexIsOutOfRange(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "10**400", typ: "get_element",
			in:   obj{"array": arr{"a", "b"}, "index": json.Number("1" + strings.Repeat("0", 400)), "default": "d"},
			want: obj{"result": "d", "found": false}},
		{name: "-10**400", typ: "get_element",
			in:   obj{"array": arr{"a", "b"}, "index": json.Number("-1" + strings.Repeat("0", 400)), "default": "d"},
			want: obj{"result": "d", "found": false}},
	})
}

// Python: round(1.7976931348623157e308, -308) raises OverflowError
// ("rounded value too large to represent"), a node error (Q3: the run
// completes with success:false). pyval.Round returns +Inf instead, which
// the node hands on as its result.
func TestRoundNodeOverflowIsAnError(t *testing.T) {
	got, err := roundNode(nil, map[string]any{"value": 1.7976931348623157e308, "decimals": int64(-308)})
	if err == nil {
		t.Errorf("round node returned %#v and no error; Python raises OverflowError", got)
	}
}
