package visualflow

import "testing"

// A code node with no data pins and no pin defaults gets the base input
// as is (§4.2 step 4): a scalar bus "hello" reaches transform(x) as
// "hello", as in Python's code runtime handler, not an empty dict.
func TestCodeNodeScalarBusIsTheInput(t *testing.T) {
	flow := rsFlow("code_scalar", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("a", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"code": "def transform(_input):\n    return \"hello\"\n"}),
		rsNode("b", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"code": "def transform(x):\n    return x + \"!\"\n"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>a.exec-in", "a.exec-out>b.exec-in", "b.exec-out>end.exec-in", "b.output>end.out")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Output["out"] != "hello!" {
		t.Fatalf("out = %v, want \"hello!\" (transform receives the scalar bus)\n%s", st.Output["out"], jsonText(t, st.Output))
	}
}

// The legacy function node calls transform with its input as is (§6.9),
// a scalar included, not wrapped as {"input": x}.
func TestLegacyFunctionScalarInput(t *testing.T) {
	flow := rsFlow("fn_scalar", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("a", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"code": "def transform(_input):\n    return 20\n"}),
		rsNode("f", "function", []string{"exec-in:exec"}, []string{"exec-out:exec"},
			map[string]any{"code": "def transform(x):\n    return x + 1\n"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>a.exec-in", "a.exec-out>f.exec-in", "f.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if got := st.Vars["_last_output"]; got != int64(21) && got != float64(21) && got != 21 {
		t.Fatalf("_last_output = %#v, want 21\noutput %s", got, jsonText(t, st.Output))
	}
}

// permissions are normalised as Python's normalize_code_permissions does
// (lower-cased, "-" read as "_"): "full-access" is full_access, run when
// the host opted in.
func TestCodePermissionsHyphen(t *testing.T) {
	flow := rsFlow("code_perm", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("c", "code", []string{"exec-in:exec", "permissions:string"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"code": "def transform(_input):\n    return 7\n", "pinDefaults": map[string]any{"permissions": "full-access"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>c.exec-in", "c.exec-out>end.exec-in", "c.output>end.out")
	_, st := startRunWith(t, flow, CompileOptions{CodeFullAccess: true}, map[string]any{})
	if st.Output["success"] != true {
		t.Fatalf("permissions \"full-access\" with host opt-in failed: %s", jsonText(t, st.Output))
	}
}

// A falsy permissions value reads as sandbox (Python: str(permissions or
// "sandbox")), not as the unknown value "False".
func TestCodePermissionsFalsyIsSandbox(t *testing.T) {
	flow := rsFlow("code_perm_falsy", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("c", "code", []string{"exec-in:exec", "permissions:boolean"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"code": "def transform(_input):\n    return 7\n", "pinDefaults": map[string]any{"permissions": false}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>c.exec-in", "c.exec-out>end.exec-in", "c.output>end.out")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Output["success"] != true {
		t.Fatalf("permissions false failed: %s", jsonText(t, st.Output))
	}
}

// A code node with neither codeBody nor code runs Python's default
// `def transform(_input): return _input`, the identity.
func TestCodeNodeWithoutCodeIsIdentity(t *testing.T) {
	flow := rsFlow("code_none", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("c", "code", []string{"exec-in:exec", "x:any"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"pinDefaults": map[string]any{"x": 3}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>c.exec-in", "c.exec-out>end.exec-in", "c.output>end.out")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Output["success"] != true {
		t.Fatalf("code node without code failed: %s", jsonText(t, st.Output))
	}
	if out, _ := st.Output["out"].(map[string]any); out == nil || (out["x"] != 3 && out["x"] != int64(3) && out["x"] != float64(3)) {
		t.Fatalf("out = %s, want the input {x: 3}", jsonText(t, st.Output["out"]))
	}
}
