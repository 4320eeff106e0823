package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Scalar buses reaching llm_call, memory_note and memory_query, and the
// text a switch reports as matched. The expected values are what the
// Python reference (AbstractRuntime visualflow_compiler,
// visual/executor.py) produces for the same flow.

// scalarBusEffectPayload runs start → code (returning the Python literal
// ret, which becomes the bus) → the effect node given (id "n"), with a
// handler for effect type et that records the payload it receives, and
// returns that payload.
func scalarBusEffectPayload(t *testing.T, ret, node string, et durable.EffectType, result any) map[string]any {
	t.Helper()
	h := &scripted{results: []any{result}}
	_, st := runFlows(t, []string{scalarBusFlow(ret, node, ``, ``)}, nil,
		map[durable.EffectType]runtime.Handler{et: h.handler()}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if len(h.payloads) != 1 {
		t.Fatalf("%s payloads = %d, want 1", et, len(h.payloads))
	}
	return h.payloads[0]
}

// scalarBusCases are code-node results and their Python str(): strings
// whole, booleans as True/False, ints and floats as Python prints them.
var scalarBusCases = []struct{ ret, want string }{
	{"'Summarise the report'", "Summarise the report"},
	{"True", "True"},
	{"False", "False"},
	{"42", "42"},
	{"2.0", "2.0"},
	{"1e16", "1e+16"},
}

// llm_call reached with a scalar on the bus and nothing resolved: the
// reference's builder receives the bus itself (the effect wrapper in
// compiler.py hands run.vars["_last_output"] to the data-aware handler,
// which passes it on when nothing resolved; spec §4.2 step 4) and takes
// a non-object input as the prompt: `prompt = str(input_data)`, every
// other field from effectConfig (visual/executor.py
// _create_llm_call_handler). Ours built the payload from an empty map
// and sent an empty prompt.
func TestLLMCallScalarBusIsPrompt(t *testing.T) {
	for _, tc := range scalarBusCases {
		t.Run(tc.ret, func(t *testing.T) {
			p := scalarBusEffectPayload(t, tc.ret, `{"id": "n", "type": "llm_call", "data": {
			  "effectConfig": {"provider": "p", "model": "m", "temperature": 0.2},
			  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "prompt", "type": "string"}, {"id": "system", "type": "string"}],
			  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "response", "type": "string"}]}}`,
				durable.EffectLLMCall, map[string]any{"content": "ok"})
			if p["prompt"] != tc.want {
				t.Fatalf("llm_call after a node returning %s: prompt = %#v, want %q (str of the bus)", tc.ret, p["prompt"], tc.want)
			}
			params, _ := p["params"].(map[string]any)
			if p["provider"] != "p" || p["model"] != "m" || jsonText(t, params["temperature"]) != "0.2" {
				t.Fatalf("llm_call on a scalar bus: payload = %s, want provider/model/temperature from effectConfig", jsonText(t, p))
			}
		})
	}
}

// memory_note reached with a scalar on the bus and nothing resolved: the
// reference's builder makes `note = str(input_data)` with empty tags and
// keep_in_context still read from effectConfig (visual/executor.py
// _create_memory_note_handler; spec §6.8 "non-object input → str"). Ours
// stored an empty note.
func TestMemoryNoteScalarBusIsNote(t *testing.T) {
	for _, tc := range scalarBusCases {
		t.Run(tc.ret, func(t *testing.T) {
			p := scalarBusEffectPayload(t, tc.ret, `{"id": "n", "type": "memory_note", "data": {
			  "effectConfig": {"keep_in_context": true},
			  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "content", "type": "string"}, {"id": "tags", "type": "object"}],
			  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "note_id", "type": "string"}]}}`,
				durable.EffectMemoryNote, map[string]any{"results": []any{}})
			if p["note"] != tc.want {
				t.Fatalf("memory_note after a node returning %s: note = %#v, want %q (str of the bus)", tc.ret, p["note"], tc.want)
			}
			if tags, ok := p["tags"].(map[string]any); !ok || len(tags) != 0 || p["keep_in_context"] != true {
				t.Fatalf("memory_note on a scalar bus: payload = %s, want tags {} and keep_in_context from effectConfig", jsonText(t, p))
			}
		})
	}
}

// memory_query reached with a scalar on the bus and nothing resolved: the
// reference's builder makes `query = str(input_data)`, limit_spans 10
// and return "both" (visual/executor.py _create_memory_query_handler).
// Ours queried with "".
func TestMemoryQueryScalarBusIsQuery(t *testing.T) {
	for _, tc := range scalarBusCases {
		t.Run(tc.ret, func(t *testing.T) {
			p := scalarBusEffectPayload(t, tc.ret, `{"id": "n", "type": "memory_query", "data": {
			  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "query", "type": "string"}, {"id": "limit", "type": "number"}],
			  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "results", "type": "array"}, {"id": "rendered", "type": "string"}]}}`,
				durable.EffectMemoryQuery, map[string]any{"results": []any{}})
			if p["query"] != tc.want {
				t.Fatalf("memory_query after a node returning %s: query = %#v, want %q (str of the bus)", tc.ret, p["query"], tc.want)
			}
			if jsonText(t, p["limit_spans"]) != "10" || p["return"] != "both" {
				t.Fatalf("memory_query on a scalar bus: payload = %s, want limit_spans 10 and return \"both\"", jsonText(t, p))
			}
		})
	}
}

// A null bus stays with the node's defaults (docs/visualflow.md: "a null
// bus is left to the node's defaults"), where the reference would send
// the text "None".
func TestScalarBusNullLeftToDefaults(t *testing.T) {
	p := scalarBusEffectPayload(t, "None", `{"id": "n", "type": "memory_query", "data": {
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "query", "type": "string"}],
	  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "results", "type": "array"}]}}`,
		durable.EffectMemoryQuery, map[string]any{"results": []any{}})
	if p["query"] != "" {
		t.Fatalf("memory_query on a null bus: query = %#v, want the default \"\"", p["query"])
	}
}

// switch reports the matched case as text: the reference returns
// `{"branch": "case:<id>", "value": value, "matched": str(case_value)}`
// and, with no match, `{"branch": "default", "value": value}` with no
// matched key (visual/executor.py _create_switch_handler; spec §6.2).
// Ours held the raw case value (the number 1, the boolean true).
func TestSwitchMatchedIsCaseText(t *testing.T) {
	flow := func(caseValue string) string {
		return `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "v", "type": "any"}]}},
	    {"id": "sw", "type": "switch", "data": {"switchConfig": {"cases": [{"id": "a", "value": ` + caseValue + `}]},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "value", "type": "any"}],
	      "outputs": [{"id": "default", "type": "execution"}, {"id": "case:a", "type": "execution"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "sw", "targetHandle": "exec-in"},
	    {"source": "start", "sourceHandle": "v", "target": "sw", "targetHandle": "value"}
	  ]}`
	}
	cases := []struct {
		name, caseValue string
		input           any
		want            map[string]any
	}{
		{"int case", `1`, "1", map[string]any{"branch": "case:a", "value": "1", "matched": "1"}},
		{"float case", `2.5`, 2.5, map[string]any{"branch": "case:a", "value": 2.5, "matched": "2.5"}},
		{"bool case", `true`, "True", map[string]any{"branch": "case:a", "value": "True", "matched": "True"}},
		{"string case", `"x"`, "x", map[string]any{"branch": "case:a", "value": "x", "matched": "x"}},
		{"default", `1`, "2", map[string]any{"branch": "default", "value": "2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := runFlowOnce(t, flow(tc.caseValue), map[string]any{"v": tc.input})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			got := map[string]any{}
			for _, k := range []string{"branch", "value", "matched"} {
				if v, ok := st.Output[k]; ok {
					got[k] = v
				}
			}
			if jsonText(t, got) != jsonText(t, tc.want) {
				t.Fatalf("switch with case value %s on %#v: record = %s, want %s", tc.caseValue, tc.input, jsonText(t, st.Output), jsonText(t, tc.want))
			}
		})
	}
}
