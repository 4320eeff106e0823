package visualflow

import (
	"slices"
	"testing"
)

// codeBodyFlow is start → code node c (codeBody body, pins x and
// permissions with the given defaults) → end, with c.output wired to
// end.out.
func codeBodyFlow(body string, defaults map[string]any) map[string]any {
	return rsFlow("mut_code", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("c", "code", []string{"exec-in:exec", "x:any", "permissions:string"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"codeBody": body, "pinDefaults": defaults}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>c.exec-in", "c.exec-out>end.exec-in", "c.output>end.out")
}

// A code node's function receives its inputs without the permissions
// pin (spec §6.9): _input holds x only.
func TestCodeInputDropsPermissions(t *testing.T) {
	_, st := startRunWith(t, codeBodyFlow("return sorted(_input.keys())", map[string]any{"x": int64(1), "permissions": "sandbox"}), CompileOptions{}, map[string]any{})
	if got, _ := st.Output["out"].([]any); !slices.Equal(got, []any{"x"}) {
		t.Fatalf("out = %v, want [x]\n%s", st.Output["out"], jsonText(t, st.Output))
	}
}

// A body-only code node gets one local per input pin except permissions
// (spec §6.9): a body reading permissions fails as an undefined name.
func TestCodeBodyHasNoPermissionsLocal(t *testing.T) {
	_, st := startRunWith(t, codeBodyFlow("return permissions", map[string]any{"x": int64(1), "permissions": "sandbox"}), CompileOptions{}, map[string]any{})
	if st.Output["success"] != false {
		t.Fatalf("output %s, want success:false (no permissions local)", jsonText(t, st.Output))
	}
}

// An object result's keys are merged into the code node's persisted
// record (spec §6.9 "{...result if object, success, output, result,
// execution}"), beside output and result.
func TestCodeRecordMergesObjectResult(t *testing.T) {
	_, st := startRunWith(t, codeBodyFlow(`return {"a": 5}`, map[string]any{"x": int64(1)}), CompileOptions{}, map[string]any{})
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs["c"].(map[string]any)
	if rec["a"] != int64(5) || rec["success"] != true {
		t.Fatalf("record = %s, want a = 5 merged beside success", jsonText(t, rec))
	}
}

// A legacy function node whose expression fails does not fail the run:
// its result is {"error": <message>} (spec §6.9).
func TestLegacyExpressionErrorIsResult(t *testing.T) {
	flow := rsFlow("fn_expr", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("f", "function", []string{"exec-in:exec"}, []string{"exec-out:exec"},
			map[string]any{"expression": "1 // 0"}),
	}, "start.exec-out>f.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	last, _ := st.Vars["_last_output"].(map[string]any)
	if msg, _ := last["error"].(string); msg == "" {
		t.Fatalf("_last_output = %s, want {\"error\": <message>}\noutput %s", jsonText(t, st.Vars["_last_output"]), jsonText(t, st.Output))
	}
}
