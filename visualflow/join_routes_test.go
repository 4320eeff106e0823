package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// viaFlow builds a scheduler sched whose two exec handles h1, h2 (edges in
// that order) both enter target X, whose input pin is overridden per route
// with a literal of the handle's name.
func viaFlow(sched map[string]any, h1, h2 string, target map[string]any, pin string) map[string]any {
	id := sched["id"].(string)
	data := target["data"].(map[string]any)
	data["inputRouteOverrides"] = map[string]any{pin: map[string]any{
		id + "::" + h1: map[string]any{"sourceNodeId": "lit1", "sourceHandle": "value"},
		id + "::" + h2: map[string]any{"sourceNodeId": "lit2", "sourceHandle": "value"},
	}}
	return rsFlow("f", "start", []map[string]any{startNode(), sched, target, literalStringNode("lit1", h1), literalStringNode("lit2", h2)},
		"start.exec-out>"+id+".exec-in", id+"."+h1+">X.exec-in", id+"."+h2+">X.exec-in")
}

func viaEnd() map[string]any {
	return rsNode("X", "on_flow_end", []string{"exec-in:exec", "via:string"}, nil, nil)
}

// §4.6.5/§4.6.2: a loop leaving by `done` records prev_exec_handle "done",
// so a target entered by both its loop and done handles takes the done
// route's overridden input.
func TestLoopDoneRecordsDoneHandleForTheJoin(t *testing.T) {
	loop := rsNode("L", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any"},
		map[string]any{"pinDefaults": map[string]any{"items": []any{}}})
	st := runFlow(t, viaFlow(loop, "loop", "done", viaEnd(), "via"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "done" {
		t.Fatalf("output = %s, want via = done (the join must see handle 'done')", jsonText(t, st.Output))
	}
}

// §4.6.3: a sequence records prev_exec_handle = then:N for the branch it
// dispatches, so a target entered from two of its handles takes the
// overridden input of the handle dispatched (then:0 first).
func TestSequenceRecordsThenHandleForTheJoin(t *testing.T) {
	seq := rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil)
	st := runFlow(t, viaFlow(seq, "then:1", "then:0", viaEnd(), "via"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "then:0" {
		t.Fatalf("output = %s, want via = then:0 (the first branch dispatched)", jsonText(t, st.Output))
	}
}

// §4.6.4: after its branches a parallel records prev_exec_handle
// "completed" before going to its completed target, so a target entered
// by a branch handle and by `completed` takes the completed route's
// overridden input on its second (last) entry.
func TestParallelRecordsCompletedHandleForTheJoin(t *testing.T) {
	par := rsNode("P", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "completed:exec"}, nil)
	st := runFlow(t, viaFlow(par, "then:0", "completed", setVarNode("X", "via", nil), "value"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Vars["via"] != "completed" {
		t.Fatalf("vars.via = %#v, want completed (X's last entry is by the completed handle)", st.Vars["via"])
	}
}

// §6.12: join_exec persists {which, from, from_handle} as its output and
// sets prev_exec_handle = "exec-out".
func TestJoinRecordsItsRouteAndExecOutHandle(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"},
			map[string]any{"pinDefaults": map[string]any{"condition": false}}),
		setVarNode("X", "v", map[string]any{"value": int64(1)}),
	}, "start.exec-out>if.exec-in", "if.true>X.exec-in", "if.false>X.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs[joinPrefix+"X"].(map[string]any)
	if len(rec) != 3 || jsonText(t, rec["which"]) != "1" || rec["from"] != "if" || rec["from_handle"] != "false" {
		t.Errorf("join record = %s, want {which: 1, from: if, from_handle: false}", jsonText(t, rec))
	}
	if tmp["prev_exec_handle"] != "exec-out" {
		t.Errorf("_temp.prev_exec_handle = %#v, want exec-out (set by the join; set_var does not change it)", tmp["prev_exec_handle"])
	}
}

// §3.1/§6.12: a target entered from two exec handles of one node (both
// branches of an `if`) takes the overridden input wired for the handle
// actually taken: the join picks its route by prev_exec_handle, not by
// the source node alone (which would always give the first route).
func TestJoinPicksTheRouteOfTheHandleTaken(t *testing.T) {
	for _, cond := range []string{"True", "False"} {
		st := runFlowOnce(t, `{"id": "f", "entryNode": "start", "nodes": [
		  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
		  {"id": "code", "type": "code", "data": {"codeBody": "return `+cond+`",
		    "inputs": [{"id": "exec-in", "type": "execution"}],
		    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
		  {"id": "if", "type": "if", "data": {
		    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
		    "outputs": [{"id": "true", "type": "execution"}, {"id": "false", "type": "execution"}]}},
		  {"id": "yes", "type": "literal_string", "data": {"literalValue": "took true", "outputs": [{"id": "value", "type": "string"}]}},
		  {"id": "no", "type": "literal_string", "data": {"literalValue": "took false", "outputs": [{"id": "value", "type": "string"}]}},
		  {"id": "end", "type": "on_flow_end", "data": {
		    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "branch", "type": "string"}],
		    "inputRouteOverrides": {"branch": {
		      "if::true": {"sourceNodeId": "yes", "sourceHandle": "value"},
		      "if::false": {"sourceNodeId": "no", "sourceHandle": "value"}}}}}
		],
		"edges": [
		  {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
		  {"source": "code", "sourceHandle": "exec-out", "target": "if", "targetHandle": "exec-in"},
		  {"source": "code", "sourceHandle": "output", "target": "if", "targetHandle": "condition"},
		  {"source": "if", "sourceHandle": "true", "target": "end", "targetHandle": "exec-in"},
		  {"source": "if", "sourceHandle": "false", "target": "end", "targetHandle": "exec-in"}
		]}`, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("condition %s: status %s (%s)", cond, st.Status, st.Error)
		}
		if want := "took " + strings.ToLower(cond); st.Output["branch"] != want {
			t.Fatalf("condition %s: output = %s, want branch = %q", cond, jsonText(t, st.Output), want)
		}
	}
}
