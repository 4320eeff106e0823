package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// VARS_QUERY output text for nested containers, empty containers, string
// escapes and non-ASCII keys, in dot, bracket and JSON-pointer paths, with
// and without keys_only (spec §3.9; Python core/runtime.py
// _handle_vars_query: json.dumps(out, ensure_ascii=False, indent=2,
// sort_keys=True, default=str)). Expected texts produced with CPython
// 3.11 from json.loads of the same document: U+2028, <, >, &, / raw;
// U+0000 and tab escaped; empty containers as {} / [] on one line; keys
// sorted by code point ("Z" < "x" < "é").
func TestVarsQueryNestedValuesWrittenAsPythonJSONDumps(t *testing.T) {
	f := memSetup(t, false)
	v, err := pyjson.Decode([]byte(`{"a": {"x": [], "y": {}, "z": [1, 2.50, "é\u2028<>&\u0000\t/", true, null, {"b": [{}]}], "é": 1, "Z": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"path": "scratchpad.a"},
			"{\n  \"path\": \"scratchpad.a\",\n  \"type\": \"dict\",\n  \"value\": {\n    \"Z\": 2,\n    \"x\": [],\n    \"y\": {},\n    \"z\": [\n      1,\n      2.5,\n      \"é\u2028<>&\\u0000\\t/\",\n      true,\n      null,\n      {\n        \"b\": [\n          {}\n        ]\n      }\n    ],\n    \"é\": 1\n  }\n}"},
		{map[string]any{"path": "scratchpad.a", "keys_only": true},
			"{\n  \"keys\": [\n    \"Z\",\n    \"x\",\n    \"y\",\n    \"z\",\n    \"é\"\n  ],\n  \"path\": \"scratchpad.a\",\n  \"type\": \"dict\"\n}"},
		{map[string]any{"path": "/scratchpad/a/z/5/b/0"},
			"{\n  \"path\": \"/scratchpad/a/z/5/b/0\",\n  \"type\": \"dict\",\n  \"value\": {}\n}"},
		{map[string]any{"var_path": "scratchpad.a.z", "keys_only": true},
			"{\n  \"length\": 6,\n  \"path\": \"scratchpad.a.z\",\n  \"type\": \"list\"\n}"},
		{map[string]any{"path": "  scratchpad.a.z[2]  "},
			"{\n  \"path\": \"scratchpad.a.z[2]\",\n  \"type\": \"str\",\n  \"value\": \"é\u2028<>&\\u0000\\t/\"\n}"},
	}
	var steps []map[string]any
	for _, c := range cases {
		steps = append(steps, step(durable.EffectVarsQuery, c.payload))
	}
	run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"scratchpad": v}}, steps...)
	mustComplete(t, run)
	for i, c := range cases {
		r := res(t, run, i)
		if r["success"] != true || r["name"] != "inspect_vars" || r["call_id"] != "vars" {
			t.Errorf("%v: result %v", c.payload, r)
			continue
		}
		if got := r["output"]; got != c.want {
			t.Errorf("%v: output\n%q\nwant (Python json.dumps)\n%q", c.payload, got, c.want)
		}
	}
}
