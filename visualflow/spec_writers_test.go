package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// nodeOutput is the persisted output of node id (_temp.node_outputs).
func nodeOutput(st *durable.RunState, id string) any {
	outs, _ := specTemp(st)["node_outputs"].(map[string]any)
	return outs[id]
}

// Spec §6.6 set_var: an absent value defaults by the declared value pin
// type: boolean → false, string → "", any other type → null.
func TestSpec66_SetVarAbsentValueByPinType(t *testing.T) {
	for typ, want := range map[string]string{"boolean": "false", "string": `""`, "object": "null", "any": "null"} {
		flow := rsFlow("f", "start", []map[string]any{
			startNode(),
			rsNode("w", "set_var", []string{"exec-in:exec", "name:string", "value:" + typ}, []string{"exec-out:exec"},
				map[string]any{"pinDefaults": map[string]any{"name": "v"}}),
		}, "start.exec-out>w.exec-in")
		st := runFlow(t, flow, map[string]any{"v": "before"})
		if st.Status != durable.RunCompleted || jsonText(t, st.Vars["v"]) != want {
			t.Errorf("value pin %s: status %s, vars.v = %s, want %s", typ, st.Status, jsonText(t, st.Vars["v"]), want)
		}
	}
}

// Spec §6.6 set_var: a dotted name creates intermediate objects and
// replaces a non-object intermediate; the node persists {value}.
func TestSpec66_SetVarDottedNameReplacesScalarIntermediate(t *testing.T) {
	st := runFlow(t, mustFlow(t, writerFlow(`{"name": "a.b.c", "value": 1}`)), map[string]any{"a": int64(5)})
	if got := jsonText(t, st.Vars["a"]); got != jsonText(t, map[string]any{"b": map[string]any{"c": int64(1)}}) {
		t.Fatalf("vars.a = %s, want {b: {c: 1}}", got)
	}
	if got := jsonText(t, nodeOutput(st, "w")); got != jsonText(t, map[string]any{"value": int64(1)}) {
		t.Fatalf("persisted output = %s, want {value: 1}", got)
	}
}

// Spec §6.6 set_vars: "All keys validated first (non-empty, no _ prefix;
// errors as set_var), then each dotted name written": one bad key writes
// none of the others.
func TestSpec66_SetVarsValidatesAllKeysBeforeWriting(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("w", "set_vars", []string{"exec-in:exec", "updates:any"}, []string{"exec-out:exec", "updates:object"},
			map[string]any{"pinDefaults": map[string]any{"updates": map[string]any{"a": int64(1), "z": int64(2), "_hidden": int64(3)}}}),
	}, "start.exec-out>w.exec-in")
	st := runFlow(t, flow, map[string]any{})
	want := "Invalid variable name '_hidden': names starting with '_' are reserved."
	if st.Output["success"] != false || st.Vars["_flow_error"] != want {
		t.Fatalf("output %s, _flow_error %#v; want success:false and %q", jsonText(t, st.Output), st.Vars["_flow_error"], want)
	}
	if _, ok := st.Vars["a"]; ok {
		t.Error("vars.a written although another key was refused")
	}
	if _, ok := st.Vars["z"]; ok {
		t.Error("vars.z written although another key was refused")
	}
}

// Spec §6.6 set_vars: updates that are neither an object nor a JSON string
// parsing to one are a no-op persisting {updates: {}}.
func TestSpec66_SetVarsNonObjectUpdatesIsNoOp(t *testing.T) {
	for _, updates := range []any{int64(5), "not json", "[1, 2]"} {
		flow := rsFlow("f", "start", []map[string]any{
			startNode(),
			rsNode("w", "set_vars", []string{"exec-in:exec", "updates:any"}, []string{"exec-out:exec", "updates:object"},
				map[string]any{"pinDefaults": map[string]any{"updates": updates}}),
		}, "start.exec-out>w.exec-in")
		st := runFlow(t, flow, map[string]any{"k": "v"})
		if st.Status != durable.RunCompleted || st.Output["success"] == false {
			t.Errorf("updates %#v: status %s, output %s; want a no-op", updates, st.Status, jsonText(t, st.Output))
		}
		if got := jsonText(t, nodeOutput(st, "w")); got != jsonText(t, map[string]any{"updates": map[string]any{}}) {
			t.Errorf("updates %#v: persisted output %s, want {updates: {}}", updates, got)
		}
	}
}

// Spec §6.6 set_var_property: a non-object current value at name is
// replaced by {} before key is set; the output value is the updated
// object.
func TestSpec66_SetVarPropertyOnScalarStartsFromEmptyObject(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("svp", "set_var_property", []string{"exec-in:exec", "name:string", "key:string", "value:any"}, []string{"exec-out:exec", "value:object"},
			map[string]any{"pinDefaults": map[string]any{"name": "cfg", "key": "x.y", "value": true}}),
	}, "start.exec-out>svp.exec-in")
	st := runFlow(t, flow, map[string]any{"cfg": "scalar"})
	want := jsonText(t, map[string]any{"x": map[string]any{"y": true}})
	if got := jsonText(t, st.Vars["cfg"]); got != want {
		t.Fatalf("vars.cfg = %s, want %s", got, want)
	}
	out, _ := nodeOutput(st, "svp").(map[string]any)
	if got := jsonText(t, out["value"]); got != want {
		t.Fatalf("output value = %s, want %s", got, want)
	}
}

// Spec §6.1 wait_until: a non-numeric duration counts as 0, so the node
// does not wait and its outcome is {until, ready: true}.
func TestSpec61_WaitUntilNonNumericDurationDoesNotWait(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{rvStart(),
		rsNode("wait", "wait_until", []string{"exec-in:exec", "duration:any"}, []string{"exec-out:exec", "until:string", "ready:boolean"},
			map[string]any{"pinDefaults": map[string]any{"duration": "soon"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "ready:any", "until:any"}, nil, nil)},
		"start.exec-out>wait.exec-in", "wait.exec-out>end.exec-in", "wait.ready>end.ready", "wait.until>end.until")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["ready"] != true {
		t.Fatalf("status %s (%s), output %s; want completed at once with ready true", st.Status, st.Error, jsonText(t, st.Output))
	}
	if u, _ := st.Output["until"].(string); u == "" {
		t.Fatalf("output until = %#v, want the current time", st.Output["until"])
	}
}
