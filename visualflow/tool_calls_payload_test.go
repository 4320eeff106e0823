package visualflow

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §6.9 (tool_calls row; Python visual/executor.py
// _create_tool_calls_handler): tool_calls object → [obj]; list → its object
// entries; JSON string → parsed then the same; anything else → [].
func TestToolCallsNormalisation(t *testing.T) {
	call := map[string]any{"name": "calc", "arguments": map[string]any{}}
	cases := []struct {
		name string
		in   any
		want int
	}{
		{"object", call, 1},
		{"list filters non-objects", []any{call, "x", int64(3), nil, call}, 2},
		{"JSON string list", `[{"name":"a"},{"name":"b"}, 5]`, 2},
		{"JSON string object", `{"name":"a"}`, 1},
		{"invalid JSON", `not json`, 0},
		{"blank string", "   ", 0},
		{"number", int64(4), 0},
		{"null", nil, 0},
	}
	for _, tc := range cases {
		p := toolCallsPayload(map[string]any{"tool_calls": tc.in}, map[string]any{}, false)
		got, ok := p["tool_calls"].([]any)
		if !ok || len(got) != tc.want {
			t.Errorf("%s: tool_calls = %#v, want %d calls", tc.name, p["tool_calls"], tc.want)
		}
		if _, has := p["allowed_tools"]; has {
			t.Errorf("%s: allowed_tools sent without pin or list config: %#v", tc.name, p)
		}
	}
}

// Spec §6.9: allowed_tools present in the resolved inputs → list of trimmed
// non-empty strings (non-list → [] = allow none); else the config value,
// sent only when it is a list.
func TestToolCallsAllowlistRules(t *testing.T) {
	cases := []struct {
		name    string
		in, cfg map[string]any
		want    any // nil = key absent
	}{
		{"pin list trimmed", map[string]any{"allowed_tools": []any{" a ", "", "  ", int64(1), "b"}}, nil, []any{"a", "b"}},
		{"pin non-list → allow none", map[string]any{"allowed_tools": "a"}, map[string]any{"allowed_tools": []any{"z"}}, []any{}},
		{"pin null (present) beats config", map[string]any{"allowed_tools": nil}, map[string]any{"allowed_tools": []any{"z"}}, []any{}},
		{"pin alias allowedTools", map[string]any{"allowedTools": []any{"c"}}, nil, []any{"c"}},
		{"config list", map[string]any{}, map[string]any{"allowedTools": []any{" z "}}, []any{"z"}},
		{"config empty list → allow none", map[string]any{}, map[string]any{"allowed_tools": []any{}}, []any{}},
		{"config non-list → omitted", map[string]any{}, map[string]any{"allowed_tools": "z"}, nil},
	}
	for _, tc := range cases {
		for _, single := range []bool{false, true} {
			cfg := tc.cfg
			if cfg == nil {
				cfg = map[string]any{}
			}
			p := toolCallsPayload(tc.in, cfg, single)
			got, has := p["allowed_tools"]
			if tc.want == nil {
				if has {
					t.Errorf("%s (single=%v): allowed_tools = %#v, want absent", tc.name, single, got)
				}
				continue
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s (single=%v): allowed_tools = %#v, want %#v", tc.name, single, got, tc.want)
			}
		}
	}
}

// Spec §6.9 (call_tool row; Python _create_call_tool_handler): object or
// JSON-string object → [call]; a JSON list, or anything else → []; alias
// toolCall when tool_call is null.
func TestCallToolNormalisation(t *testing.T) {
	call := map[string]any{"name": "calc"}
	cases := []struct {
		name string
		in   map[string]any
		want int
	}{
		{"object", map[string]any{"tool_call": call}, 1},
		{"JSON object string", map[string]any{"tool_call": `{"name":"calc"}`}, 1},
		{"JSON list string", map[string]any{"tool_call": `[{"name":"calc"}]`}, 0},
		{"list", map[string]any{"tool_call": []any{call}}, 0},
		{"alias after null", map[string]any{"tool_call": nil, "toolCall": call}, 1},
		{"missing", map[string]any{}, 0},
	}
	for _, tc := range cases {
		p := toolCallsPayload(tc.in, map[string]any{}, true)
		got, ok := p["tool_calls"].([]any)
		if !ok || len(got) != tc.want {
			t.Errorf("%s: tool_calls = %#v, want %d calls", tc.name, p["tool_calls"], tc.want)
		}
	}
}

// Spec §5.3 (tool_calls row): success is false for a non-executed mode,
// else true iff every result has success === true (true for an empty list);
// results is raw.results (else []).
func TestToolCallsSuccessAggregate(t *testing.T) {
	cases := []struct {
		name string
		raw  map[string]any
		want bool
	}{
		{"empty results", map[string]any{"mode": "executed", "results": []any{}}, true},
		{"no mode, all ok", map[string]any{"results": []any{map[string]any{"success": true}}}, true},
		{"one failed", map[string]any{"mode": "executed", "results": []any{map[string]any{"success": true}, map[string]any{"success": false}}}, false},
		{"truthy but not true", map[string]any{"mode": "executed", "results": []any{map[string]any{"success": "true"}}}, false},
		{"approval mode", map[string]any{"mode": "approval_required", "results": []any{}}, false},
	}
	for _, tc := range cases {
		flow := syncFlow("tool_calls", []string{"tool_calls:array"}, []string{"results:array", "success:boolean"},
			map[string]any{"pinDefaults": map[string]any{"tool_calls": []any{map[string]any{"name": "t", "arguments": map[string]any{}}}}}, "success")
		_, st := startRunHandled(t, flow, CompileOptions{}, syncResult(tc.raw), nil)
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", tc.name, st.Status, st.Error)
		}
		if got := st.Output["got"]; got != tc.want {
			t.Errorf("%s: success pin = %#v, want %v", tc.name, got, tc.want)
		}
	}
}

// Spec §6.9 (tool_calls row): "`tool_calls`: object → `[obj]`; list → its
// object entries; JSON string → parsed then same". Python reference
// (src/abstractruntime/visualflow_compiler/visual/executor.py,
// _create_tool_calls_handler._normalize_tool_calls) handles a JSON string by
// returning _normalize_tool_calls(parsed), i.e. recursively: a string that
// decodes to another JSON string (double-encoded text, as a stringify_json
// node wired to a text pin produces) is decoded again.
func TestToolCallsDoubleEncodedJSONString(t *testing.T) {
	outer := `"` + `[{\"name\":\"calc\",\"arguments\":{\"x\":1}}]` + `"` // json.dumps(inner)
	p := toolCallsPayload(map[string]any{"tool_calls": outer}, map[string]any{}, false)
	want := []any{map[string]any{"name": "calc", "arguments": map[string]any{"x": int64(1)}}}
	got, _ := p["tool_calls"].([]any)
	if len(got) != 1 {
		t.Fatalf("double-encoded tool_calls string: payload tool_calls = %#v, want one call (Python decodes recursively)", p["tool_calls"])
	}
	m, _ := got[0].(map[string]any)
	if m["name"] != "calc" {
		t.Errorf("double-encoded tool_calls string: call = %#v, want %#v", got[0], want[0])
	}
}
