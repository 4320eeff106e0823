package builtin

import (
	"encoding/json"
	"testing"
)

// make_meta's version and counts are Python's int(x) (int(float(s)) for
// a string), which has no bound: a float or numeric string past int64
// (1e20) and an int beyond it (a json.Number) keep their value there,
// where they fell back to version 1 or were dropped.
func TestReviewMakeMetaCountsPastInt64(t *testing.T) {
	big := json.Number("123456789012345678901234")
	e20 := json.Number("100000000000000000000")
	meta := func(m obj) obj { return obj{"meta": m} }
	base := obj{"schema": "abstractcode.agent.v1.meta"}
	with := func(kv ...any) obj {
		m := obj{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return meta(m)
	}
	runNodeCases(t, []nodeCase{
		{name: "float 1e20", typ: "make_meta", in: obj{"version": 1e20, "iterations": 1e20},
			want: with("version", e20, "iterations", e20)},
		{name: "string 1e20", typ: "make_meta", in: obj{"version": "1e20", "tool_calls": " 1e20 "},
			want: with("version", e20, "tool_calls", e20)},
		{name: "big int", typ: "make_meta", in: obj{"version": big, "tool_results": big},
			want: with("version", big, "tool_results", big)},
		{name: "ordinary", typ: "make_meta", in: obj{"version": 2.9, "iterations": "3.7"},
			want: with("version", int64(2), "iterations", int64(3))},
		{name: "inf falls back", typ: "make_meta", in: obj{"version": "inf", "iterations": "nan"},
			want: with("version", int64(1))},
	})
}
