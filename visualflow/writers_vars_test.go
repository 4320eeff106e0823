package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Variable names and keys are read with Python's str.strip()
// (variable_adapter.py create_set_var_node_handler; the same for
// set_var_property, set_vars' keys, get_var, bool_var and var_decl), which
// also removes the information separators U+001C..U+001F: set_var
// "count\x1f" writes vars.count.
func TestSetVarNameStripsPythonWhitespace(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		setVarNode("w", "count\x1f", map[string]any{"value": int64(1)}),
	}, "start.exec-out>w.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if _, bad := st.Vars["count\x1f"]; bad || st.Vars["count"] != int64(1) {
		t.Errorf(`vars["count"] = %#v, vars["count\x1f"] present = %v; want count=1 (Python strips \x1f)`,
			st.Vars["count"], bad)
	}
}

// The stripped name is the one checked for the reserved '_' prefix, so
// "\x1f_temp" cannot reach the runtime's _temp.
func TestSetVarStrippedNameIsReserved(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, writerFlow(`{"name": "\u001f_temp", "value": 1}`)), CompileOptions{}, map[string]any{})
	want := "Invalid variable name '_temp': names starting with '_' are reserved."
	if st.Output["success"] != false || st.Vars["_flow_error"] != want {
		t.Errorf("output = %s, _flow_error = %#v; want success:false and %q", jsonText(t, st.Output), st.Vars["_flow_error"], want)
	}
}

// get_var strips its name the same way: "count\x1c" reads vars.count.
func TestGetVarNameStripsPythonWhitespace(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		getVarNode("g", "count\x1c"),
		setVarNode("w", "out", nil),
	}, "start.exec-out>w.exec-in", "g.value>w.value")
	st := runFlow(t, flow, map[string]any{"count": int64(3)})
	if st.Vars["out"] != int64(3) {
		t.Errorf("vars.out = %#v, want 3 (get_var strips the name as Python's str.strip)", st.Vars["out"])
	}
}

// add_message records task as str(task or "") (context_adapter.py
// create_add_message_node_handler), as get_context does: a falsy
// non-string task such as 0 gives "", not "0".
func TestAddMessageFalsyTaskIsEmpty(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("am", "add_message", []string{"exec-in:exec", "role:string", "content:string"},
			[]string{"exec-out:exec", "message:object", "context:object", "task:string", "messages:array"},
			map[string]any{"pinDefaults": map[string]any{"role": "user", "content": "hi"}}),
		setVarNode("w", "t", nil),
	}, "start.exec-out>am.exec-in", "am.exec-out>w.exec-in", "am.task>w.value")
	st := runFlow(t, flow, map[string]any{"context": map[string]any{"task": int64(0), "messages": []any{}}})
	if st.Vars["t"] != "" {
		t.Errorf("add_message task = %#v, want \"\" (str(0 or \"\"))", st.Vars["t"])
	}
}

// A node reading its input through inputKey gets a copy of
// vars[inputKey]: its recorded output must not share objects with the
// vars, or a later dotted set_var (which writes into them in place) would
// rewrite that record in a straight run but not across a restart. Both
// runs must read fnc.stats as written, {hp: 1}.
func TestDottedSetVarDoesNotRewriteEarlierRecord(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("fnc", "function", []string{"exec-in:exec"}, []string{"exec-out:exec", "stats:object"},
			map[string]any{"inputKey": "state"}),
		setVarNode("sv", "state.stats.hp", map[string]any{"value": int64(5)}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "got:object"}, nil, nil),
	}, "start.exec-out>fnc.exec-in", "fnc.exec-out>sv.exec-in", "sv.exec-out>end.exec-in", "fnc.stats>end.got")
	newVars := func() map[string]any {
		return map[string]any{"state": map[string]any{"stats": map[string]any{"hp": int64(1)}}}
	}
	st := runFlow(t, flow, newVars())
	if got := jsonText(t, st.Output["got"]); got != jsonText(t, map[string]any{"hp": int64(1)}) {
		t.Errorf("straight run: got = %s, want {\"hp\": 1} (fnc's record as written)", got)
	}
	compareStraightAndRestarted(t, goldenCase{Flow: flow, Vars: newVars()})
}

// §6.6: set_var with no value defaults it by the declared value pin type;
// number → 0.
func TestSetVarAbsentNumberValueIsZero(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("w", "set_var", []string{"exec-in:exec", "name:string", "value:number"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "n"}}),
	}, "start.exec-out>w.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Vars["n"]); got != "0" {
		t.Fatalf("vars.n = %s, want 0 (number pin zero value)", got)
	}
}

// §6.6: add_message with no role appends a message with role "user".
func TestAddMessageRoleDefaultsToUser(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("am", "add_message", []string{"exec-in:exec", "role:string", "content:string"}, []string{"exec-out:exec", "message:object"},
			map[string]any{"pinDefaults": map[string]any{"content": "hi"}}),
	}, "start.exec-out>am.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("vars.context = %s, want one message", jsonText(t, st.Vars["context"]))
	}
	if m, _ := msgs[0].(map[string]any); m["role"] != "user" || m["content"] != "hi" {
		t.Fatalf("message = %s, want role user, content hi", jsonText(t, msgs[0]))
	}
}
