package visualflow

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// seqFrameFlow is a sequence S whose then:0 is unconnected, then:1 runs A
// and then:2 runs B (both set_var flags).
func seqFrameFlow(first map[string]any) map[string]any {
	return rsFlow("seqframe", "S", []map[string]any{
		rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec", "then:2:exec"}, nil),
		first,
		rsNode("B", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
			map[string]any{"pinDefaults": map[string]any{"name": "b_ran", "value": true}}),
	}, "S.then:1>A.exec-in", "S.then:2>B.exec-in")
}

func setFlagNode(id, name string) map[string]any {
	return rsNode(id, "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
		map[string]any{"pinDefaults": map[string]any{"name": name, "value": true}})
}

// A sequence frame saved mid-run resumes with the next branch whichever
// runtime wrote it. The reference's frame["then"] lists every declared
// then:* handle (sorted, connected or not) and idx counts positions in
// it; Go before this fix stored the connected handles only, with idx
// counting those. The scheduler reads the frame's own list, so both
// continue with then:2 after then:1 (control has just returned to S).
func TestSequenceFrame_ResumesSavedFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame map[string]any
	}{
		{"python frame, all declared handles", map[string]any{"kind": "sequence", "idx": int64(2), "then": []any{"then:0", "then:1", "then:2"}}},
		{"older go frame, connected handles", map[string]any{"kind": "sequence", "idx": int64(1), "then": []any{"then:1", "then:2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{"_temp": map[string]any{"_control": map[string]any{
				"stack": []any{"S"}, "return_to": "S", "frames": map[string]any{"S": tc.frame},
			}}}
			_, st := startRunWith(t, seqFrameFlow(setFlagNode("A", "a_ran")), CompileOptions{}, vars)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s, want completed", st.Status)
			}
			if st.Vars["b_ran"] != true || st.Vars["a_ran"] != nil {
				t.Errorf("after resuming at then:2: a_ran=%v b_ran=%v, want only B to run; output=%s",
					st.Vars["a_ran"], st.Vars["b_ran"], jsonText(t, st.Output))
			}
		})
	}
}

// A frame Go writes is the reference's: then = every declared handle
// (unconnected then:0 included), idx = position after the dispatched one,
// so a Python runtime resumes it correctly.
func TestSequenceFrame_WritesDeclaredHandles(t *testing.T) {
	ask := rsNode("A", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
		map[string]any{"pinDefaults": map[string]any{"prompt": "p"}})
	_, st := startRunWith(t, seqFrameFlow(ask), CompileOptions{}, nil)
	if st.Status != durable.RunWaiting {
		t.Fatalf("status %s, want waiting in branch then:1", st.Status)
	}
	frame := st.Vars["_temp"].(map[string]any)["_control"].(map[string]any)["frames"].(map[string]any)["S"]
	want := map[string]any{"kind": "sequence", "idx": int64(2), "then": []any{"then:0", "then:1", "then:2"}}
	if got := jsonText(t, frame); got != jsonText(t, want) {
		t.Errorf("sequence frame = %s, want %s", got, jsonText(t, want))
	}
}

// Declared then:* handles are ordered by number, a non-numeric suffix
// after all numbered ones (the reference's sort key 10**9), and such a
// handle may be wired.
func TestSequence_DeclaredHandleOrder(t *testing.T) {
	flow := rsFlow("seqorder", "S", []map[string]any{
		rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:x:exec", "then:10:exec", "then:2:exec"}, nil),
		setFlagNode("A", "a"), setFlagNode("B", "b"),
	}, "S.then:x>A.exec-in", "S.then:2>B.exec-in")
	g, err := compileGraph(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.program(CompileOptions{}); err != nil {
		t.Fatal(err)
	}
	got := thenHandles(g.nodes["S"])
	if want := []any{"then:2", "then:10", "then:x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("then handles %v, want %v", got, want)
	}
}

// The loop, for and while schedulers resolve their inputs on the bus, or
// on {} before any node wrote it - never on the caller's vars (the
// reference: run.vars.get("_last_output", {}) in compiler.py
// _resolve_items/_resolve_range/_resolve_condition). So unwired pins
// without defaults give no iteration even when the caller passed vars
// named items, start/end or condition.
func TestSchedulers_WithoutBusIgnoreCallerVars(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		ins  []string
		vars map[string]any
	}{
		{"loop", []string{"exec-in:exec", "items:array"}, map[string]any{"items": []any{int64(1), int64(2), int64(3)}}},
		{"for", []string{"exec-in:exec", "start:number", "end:number"}, map[string]any{"start": int64(0), "end": int64(3)}},
		{"while", []string{"exec-in:exec", "condition:boolean"}, map[string]any{"condition": true}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			flow := rsFlow("nobus", "S", []map[string]any{
				rsNode("S", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
					map[string]any{"pinDefaults": map[string]any{"name": "x", "value": int64(1)}}),
				rsNode("L", tc.typ, tc.ins, []string{"loop:exec", "done:exec"}, nil),
				setFlagNode("B", "body_ran"),
			}, "S.exec-out>L.exec-in", "L.loop>B.exec-in")
			_, st := startRunWith(t, flow, CompileOptions{}, tc.vars)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s, want completed", st.Status)
			}
			if _, ran := st.Vars["body_ran"]; ran {
				t.Errorf("%s ran its body on the caller's vars; output=%s", tc.typ, jsonText(t, st.Output))
			}
		})
	}
}

// §4.6.7: re-entering a while through an explicit exec edge restarts its
// frame, so its index starts again at 0 on every re-entry.
func TestWhileReenteredByExecEdgeRestartsIndex(t *testing.T) {
	flow := `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "gn", "type": "get_var", "data": {"pinDefaults": {"name": "n"}, "inputs": [{"id": "name", "type": "string"}], "outputs": [{"id": "value", "type": "any"}]}},
	  {"id": "lt", "type": "compare", "data": {"pinDefaults": {"b": 3, "op": "<"},
	    "inputs": [{"id": "a", "type": "number"}, {"id": "b", "type": "number"}, {"id": "op", "type": "string"}], "outputs": [{"id": "result", "type": "boolean"}]}},
	  {"id": "plus", "type": "add", "data": {"pinDefaults": {"b": 1},
	    "inputs": [{"id": "a", "type": "number"}, {"id": "b", "type": "number"}], "outputs": [{"id": "result", "type": "number"}]}},
	  {"id": "W", "type": "while", "data": {
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	    "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}},
	  {"id": "inc", "type": "set_var", "data": {"pinDefaults": {"name": "n"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "rec", "type": "set_var", "data": {"pinDefaults": {"name": "idx"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}]}}
	],
	"edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "W", "targetHandle": "exec-in"},
	  {"source": "gn", "sourceHandle": "value", "target": "lt", "targetHandle": "a"},
	  {"source": "lt", "sourceHandle": "result", "target": "W", "targetHandle": "condition"},
	  {"source": "gn", "sourceHandle": "value", "target": "plus", "targetHandle": "a"},
	  {"source": "plus", "sourceHandle": "result", "target": "inc", "targetHandle": "value"},
	  {"source": "W", "sourceHandle": "index", "target": "rec", "targetHandle": "value"},
	  {"source": "W", "sourceHandle": "loop", "target": "inc", "targetHandle": "exec-in"},
	  {"source": "inc", "sourceHandle": "exec-out", "target": "rec", "targetHandle": "exec-in"},
	  {"source": "rec", "sourceHandle": "exec-out", "target": "W", "targetHandle": "exec-in"},
	  {"source": "W", "sourceHandle": "done", "target": "end", "targetHandle": "exec-in"}
	]}`
	st := runFlowOnce(t, flow, map[string]any{"n": int64(0)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Vars["n"]); got != "3.0" {
		t.Fatalf("vars.n = %s, want 3.0 (three passes)", got)
	}
	if got := jsonText(t, st.Vars["idx"]); got != "0" {
		t.Fatalf("while index on the last explicit re-entry = %s, want 0 (the frame restarts)", got)
	}
}

// §4.6.2: entering a scheduler on its return deletes return_to. A stale
// return_to left by an implicit branch end would make a later explicit
// re-entry (the chat-loop pattern) look like a return, so the while would
// continue its frame instead of restarting it at index 0.
func TestWhileExplicitReentryAfterImplicitReturnRestartsIndex(t *testing.T) {
	// while n < 3: n += 1; idx = W.index; if n < 2 the branch ends
	// (implicit return to W), else an exec edge goes back to W.
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		getVarNode("gn", "n"),
		compareNode("lt3", "<", 3),
		compareNode("lt2", "<", 2),
		rsNode("plus", "add", []string{"a:number", "b:number"}, []string{"result:number"},
			map[string]any{"pinDefaults": map[string]any{"b": int64(1)}}),
		whileNode("W", map[string]any{}),
		setVarNode("inc", "n", nil),
		setVarNode("rec", "idx", nil),
		rsNode("chk", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"}, nil),
	},
		"start.exec-out>W.exec-in",
		"gn.value>lt3.a", "lt3.result>W.condition",
		"gn.value>plus.a", "plus.result>inc.value",
		"W.index>rec.value",
		"gn.value>lt2.a", "lt2.result>chk.condition",
		"W.loop>inc.exec-in", "inc.exec-out>rec.exec-in", "rec.exec-out>chk.exec-in",
		"chk.false>W.exec-in",
	)
	st := runFlow(t, flow, map[string]any{"n": int64(0)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Vars["n"]); got != "3.0" {
		t.Fatalf("vars.n = %s, want 3.0", got)
	}
	if got := jsonText(t, st.Vars["idx"]); got != "0" {
		t.Fatalf("while index after the last explicit re-entry = %s, want 0 (an implicit return earlier must not make later explicit re-entries count as returns)", got)
	}
}

// §4.6.2: an explicit re-entry restarts the frame without pushing the
// scheduler on the stack again, so a while re-entered by exec edges inside
// a Sequence branch, once its condition is false and with no done edge,
// hands control back to the Sequence, which runs its next branch.
func TestWhileReenteredByExecEdgeInsideSequenceReturnsToSequence(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		getVarNode("gn", "n"),
		compareNode("lt3", "<", 3),
		rsNode("plus", "add", []string{"a:number", "b:number"}, []string{"result:number"},
			map[string]any{"pinDefaults": map[string]any{"b": int64(1)}}),
		whileNode("W", map[string]any{}),
		setVarNode("inc", "n", nil),
		setVarNode("second", "second", map[string]any{"value": true}),
	},
		"start.exec-out>seq.exec-in",
		"seq.then:0>W.exec-in", "seq.then:1>second.exec-in",
		"gn.value>lt3.a", "lt3.result>W.condition",
		"gn.value>plus.a", "plus.result>inc.value",
		"W.loop>inc.exec-in", "inc.exec-out>W.exec-in",
	)
	st := runFlow(t, flow, map[string]any{"n": int64(0)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Vars["second"] != true || st.Output["success"] != true {
		t.Fatalf("vars.second = %#v, output = %s; want the Sequence's then:1 run and success", st.Vars["second"], jsonText(t, st.Output))
	}
	if got := jsonText(t, st.Vars["n"]); got != "3.0" {
		t.Fatalf("vars.n = %s, want 3.0", got)
	}
}

// §4.6.2: a finishing scheduler deletes its frame and leaves the stack, so
// that once every control block is done the run vars hold no frame and an
// empty stack.
func TestFinishedSchedulersLeaveNoFramesOrStack(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		rsNode("L", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"},
			map[string]any{"pinDefaults": map[string]any{"items": []any{int64(1), int64(2)}}}),
		setVarNode("body", "last", nil),
		setVarNode("second", "second", map[string]any{"value": true}),
	},
		"start.exec-out>seq.exec-in",
		"seq.then:0>L.exec-in", "seq.then:1>second.exec-in",
		"L.loop>body.exec-in", "L.item>body.value",
	)
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted || st.Vars["second"] != true {
		t.Fatalf("status %s (%s), vars.second = %#v", st.Status, st.Error, st.Vars["second"])
	}
	c := tempControl(st)
	if frames, _ := c["frames"].(map[string]any); len(frames) != 0 {
		t.Errorf("_temp._control.frames = %s, want {} (finished schedulers delete their frames)", jsonText(t, c["frames"]))
	}
	if stack, _ := c["stack"].([]any); len(stack) != 0 {
		t.Errorf("_temp._control.stack = %s, want []", jsonText(t, c["stack"]))
	}
}
