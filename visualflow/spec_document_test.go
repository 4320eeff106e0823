package visualflow

import (
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §2: "a node's role is decided by its saved pins, not its type":
// literal types are literal whatever their pins, join_exec is exec, pin
// metadata decides exec (an execution pin) or pure, and without metadata
// only the listed types and the builtin registry are pure (make_array and
// array_concat are not in it).
func TestSpec2_NodeClassificationRules(t *testing.T) {
	execPin := []pin{{ID: "exec-in", Type: "execution"}}
	dataPin := []pin{{ID: "a", Type: "any"}}
	cases := []struct {
		name string
		rn   rawNode
		want nodeKind
	}{
		{"literal with exec pins", rawNode{Type: "literal_number", Inputs: execPin}, kindLiteral},
		{"json_schema without pins", rawNode{Type: "json_schema"}, kindLiteral},
		{"join_exec with data pins only", rawNode{Type: "join_exec", Outputs: dataPin}, kindExec},
		{"add with an exec pin", rawNode{Type: "add", Inputs: execPin}, kindExec},
		{"set_var with data pins only", rawNode{Type: "set_var", Inputs: dataPin}, kindPure},
		{"make_array without pins", rawNode{Type: "make_array"}, kindExec},
		{"array_concat without pins", rawNode{Type: "array_concat"}, kindExec},
		{"set_var without pins", rawNode{Type: "set_var"}, kindExec},
		{"llm_call without pins", rawNode{Type: "llm_call"}, kindExec},
	}
	pure := []string{"get_var", "get_context", "bool_var", "var_decl", "break_object", "tool_parameters",
		"add", "subtract", "multiply", "divide", "modulo", "power", "abs", "round", "random_int", "random_float", "concat",
		"split", "join", "format", "string_template", "uppercase", "lowercase", "trim", "substring",
		"length", "is_empty_string", "contains", "replace", "compare", "not", "and", "or", "coalesce",
		"get", "set", "merge", "make_object", "edit_json_schema", "make_context", "add_message",
		"make_meta", "make_scratchpad", "get_element", "get_random_element", "array_map", "array_filter",
		"array_length", "has_tools", "array_append", "array_dedup", "path_mux", "parse_json",
		"stringify_json", "format_tool_results", "agent_trace_report", "system_datetime", "tools_allowlist"}
	for _, typ := range pure {
		cases = append(cases, struct {
			name string
			rn   rawNode
			want nodeKind
		}{typ + " without pins", rawNode{Type: typ}, kindPure})
	}
	for _, c := range cases {
		if got := classify(&c.rn); got != c.want {
			t.Errorf("%s: kind %v, want %v", c.name, got, c.want)
		}
	}
}

// Spec §1.2: the node type may be an object {"value": t}, an enum spelling
// "NodeType.X" is lowered, an empty type falls back to data.nodeType, and
// pins saved at the node's top level (outside data) are ignored.
func TestSpec12_NodeTypeSpellingsAndTopLevelPinsIgnored(t *testing.T) {
	flow := mustFlow(t, `{"id": "f", "nodes": [
	  {"id": "p", "type": "add", "outputs": [{"id": "exec-out", "type": "execution"}], "data": {}},
	  {"id": "start", "type": {"value": "on_flow_start"}, "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "sv", "type": "NodeType.SET_VAR", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}], "pinDefaults": {"name": "x", "value": 7}}},
	  {"id": "end", "type": "", "data": {"nodeType": "on_flow_end", "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "r", "type": "any"}], "pinDefaults": {"r": "done"}}}
	], "edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "sv", "targetHandle": "exec-in"},
	  {"source": "sv", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"}
	]}`)
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Entry != "start" {
		t.Fatalf("entry = %q, want start (the add node's top-level exec pin must not make it exec)", wf.Entry)
	}
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["r"] != "done" || jsonText(t, st.Vars["x"]) != "7" {
		t.Fatalf("status %s (%s), output %s, vars.x %v", st.Status, st.Error, jsonText(t, st.Output), st.Vars["x"])
	}
}

// Spec §1.1/§1.2/§1.5: non-object nodes and nodes with an empty id are
// skipped, a missing or non-object data is {}, and edges with an empty
// source, target, sourceHandle or targetHandle are dropped at load (so
// they neither fail the compile nor wire anything).
func TestSpec15_MalformedNodesAndEdgesAreDropped(t *testing.T) {
	flow := mustFlow(t, `{"id": "f", "entryNode": "start", "nodes": [
	  "junk", 5, {"id": "  ", "type": "on_flow_end"},
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "lit", "type": "literal_string", "data": "not an object"},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "r", "type": "any"}], "pinDefaults": {"r": "kept"}}}
	], "edges": [
	  "junk",
	  {"source": "start", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
	  {"source": "lit", "sourceHandle": "", "target": "end", "targetHandle": "r"},
	  {"source": "ghost", "sourceHandle": "value", "target": "end"},
	  {"sourceHandle": "value", "target": "end", "targetHandle": "r"}
	]}`)
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["r"] != "kept" {
		t.Fatalf("status %s (%s), output %s; want completed with the default r", st.Status, st.Error, jsonText(t, st.Output))
	}
}

// Spec §6.1 on_schedule: intervals take the units ms and d too
// ("500ms", "2d"), not only s, m and h.
func TestSpec61_OnScheduleMillisecondAndDayUnits(t *testing.T) {
	for _, c := range []struct {
		schedule string
		want     time.Duration
	}{{"500ms", 500 * time.Millisecond}, {"2d", 48 * time.Hour}} {
		t.Run(c.schedule, func(t *testing.T) {
			flow := rsFlow("sch", "sched", []map[string]any{
				rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"},
					[]string{"exec-out:exec", "timestamp:string"}, map[string]any{"eventConfig": map[string]any{"schedule": c.schedule}}),
				setVarNode("sv", "ticked", map[string]any{"value": true}),
			}, "sched.exec-out>sv.exec-in")
			_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunWaiting || st.Waiting == nil {
				t.Fatalf("status %s (%s), want waiting on the schedule", st.Status, st.Error)
			}
			if want := fixedClock.Add(c.want); !st.Waiting.Until.Equal(want) {
				t.Fatalf("waits until %s, want %s", st.Waiting.Until.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
			}
		})
	}
}

// Spec §6.6 set_var_property: an empty name or key is the error
// "Set Variable Property requires a non-empty variable name." / "… non-empty
// key." (in _flow_error, the run completing with success:false).
func TestSpec66_SetVarPropertyEmptyNameAndKeyErrors(t *testing.T) {
	for _, c := range []struct {
		name, key, want string
	}{
		{"", "k", "Set Variable Property requires a non-empty variable name."},
		{"obj", " ", "Set Variable Property requires a non-empty key."},
	} {
		flow := rsFlow("f", "start", []map[string]any{
			startNode(),
			rsNode("svp", "set_var_property", []string{"exec-in:exec", "name:string", "key:string", "value:any"}, []string{"exec-out:exec", "value:object"},
				map[string]any{"pinDefaults": map[string]any{"name": c.name, "key": c.key, "value": int64(1)}}),
		}, "start.exec-out>svp.exec-in")
		st := runFlow(t, flow, map[string]any{})
		if st.Status != durable.RunCompleted || st.Output["success"] != false || st.Vars["_flow_error"] != c.want {
			t.Errorf("name %q key %q: status %s, output %s, _flow_error %#v; want success:false and %q",
				c.name, c.key, st.Status, jsonText(t, st.Output), st.Vars["_flow_error"], c.want)
		}
	}
}

// Spec §6.2 switch: cases with an empty id or a null value are skipped, so
// a null-valued case never matches the text "None" (str(None)).
func TestSpec62_SwitchSkipsCasesWithEmptyIDOrNullValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{{"None", "def"}, {"x", "ok"}} {
		sw := rsNode("sw", "switch", []string{"exec-in:exec", "value:any"}, []string{"default:exec", "case:n:exec", "case:ok:exec"},
			map[string]any{"switchConfig": map[string]any{"cases": []any{
				map[string]any{"id": "", "value": "x"}, map[string]any{"id": "n", "value": nil}, map[string]any{"id": "ok", "value": "x"},
			}}, "pinDefaults": map[string]any{"value": c.v}})
		f := rsFlow("f", "start", []map[string]any{rvStart(), sw,
			rvEnd("en", []string{"r"}, map[string]any{"r": "n"}), rvEnd("eok", []string{"r"}, map[string]any{"r": "ok"}),
			rvEnd("edef", []string{"r"}, map[string]any{"r": "def"})},
			"start.exec-out>sw.exec-in", "sw.case:n>en.exec-in", "sw.case:ok>eok.exec-in", "sw.default>edef.exec-in")
		st := rvRun(t, f, nil)
		if st.Output["r"] != c.want {
			t.Errorf("value %#v: output %s, want r = %s", c.v, jsonText(t, st.Output), c.want)
		}
	}
}

// Spec §6.12 join_exec: with no _temp.prev_node_id the route is 0 and the
// warning "#FALLBACK join_exec '<id>': prev_node_id missing; defaulting
// which=0." is recorded.
func TestSpec612_JoinExecWithoutPrevNodeWarns(t *testing.T) {
	join := joinPrefix + "T"
	f := rsFlow("f", join, []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": true}),
		rvEnd("T", nil, nil)},
		"start.exec-out>if.exec-in", "if.true>T.exec-in", "if.false>T.exec-in")
	_, st := startRunWith(t, f, CompileOptions{}, map[string]any{})
	want := "#FALLBACK join_exec '" + join + "': prev_node_id missing; defaulting which=0."
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if !slices.Contains(warnings, any(want)) {
		t.Fatalf("_flow_warnings = %v, want %q", warnings, want)
	}
}
