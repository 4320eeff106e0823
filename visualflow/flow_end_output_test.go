package visualflow

import "testing"

// Reference: executor._create_flow_end_handler returns {pid: input.get(pid)}
// (or dict(input) without pins) with no "success" key; the compiler's
// _create_visual_function_handler stores that raw result as
// vars._last_output and vars._temp.node_outputs[<end>] (and at outputKey),
// and only the run output gets success (_to_complete_output: setdefault).
func TestFlowEndNodeOutputHasNoSuccess(t *testing.T) {
	flow := rsFlow("vf_end_rec", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "msg:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "msg:string"}, nil,
			map[string]any{"outputKey": "final"}),
	}, "start.exec-out>end.exec-in", "start.msg>end.msg")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"msg": "m"})
	if st.Output["success"] != true || st.Output["msg"] != "m" {
		t.Fatalf("run output %s; want {msg: m, success: true}", jsonText(t, st.Output))
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs["end"].(map[string]any)
	if _, has := rec["success"]; has {
		t.Errorf("_temp.node_outputs.end = %s; reference stores {msg} without success", jsonText(t, rec))
	}
	bus, _ := st.Vars["_last_output"].(map[string]any)
	if _, has := bus["success"]; has {
		t.Errorf("_last_output = %s; reference stores {msg} without success", jsonText(t, bus))
	}
	final, _ := st.Vars["final"].(map[string]any)
	if _, has := final["success"]; has {
		t.Errorf("vars.final (outputKey) = %s; reference writes {msg} without success", jsonText(t, final))
	}
}

// A declared success pin is the run output's success, even when nothing
// fed it (null): setdefault only adds success when the key is absent.
func TestFlowEndDeclaredSuccessPinWinsEvenNull(t *testing.T) {
	flow := rsFlow("vf_end_success_pin", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "msg:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "msg:string", "success:boolean"}, nil, nil),
	}, "start.exec-out>end.exec-in", "start.msg>end.msg")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"msg": "m"})
	v, has := st.Output["success"]
	if !has || v != nil || st.Output["msg"] != "m" {
		t.Errorf("run output %s; want {msg: m, success: null}", jsonText(t, st.Output))
	}
}
