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

// Permission errors are raised by the reference's code_executor.py, not by
// the sandbox, so their texts do not depend on RestrictedPython vs
// Starlark:
//   - normalize_code_permissions: CodeExecutionError(f"Unsupported code
//     execution permissions: {permissions!r}") — the raw value's repr;
//   - ensure_code_permissions_allowed: "full_access code execution is
//     disabled by host policy. Set ABSTRACTRUNTIME_CODE_FULL_ACCESS=1 only
//     for trusted local deployments."
//
// The function-node wrapper stores str(exc) in _flow_error, the record's
// error and the run output's error.
func TestCodePermissionErrorsUseReferenceTexts(t *testing.T) {
	cases := []struct {
		name string
		perm any
		want string
	}{
		{"unknown string", "Weird", "Unsupported code execution permissions: 'Weird'"},
		{"unknown int", 5, "Unsupported code execution permissions: 5"},
		{"full access without opt-in", "full", "full_access code execution is disabled by host policy. Set ABSTRACTRUNTIME_CODE_FULL_ACCESS=1 only for trusted local deployments."},
	}
	t.Setenv("ABSTRACTRUNTIME_CODE_FULL_ACCESS", "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := map[string]any{"code": "def transform(_input):\n    return 1\n", "pinDefaults": map[string]any{"permissions": c.perm}}
			_, st := startRunWith(t, codeFlowWith(data, []string{"permissions:string"}), CompileOptions{}, map[string]any{})
			if st.Vars["_flow_error"] != c.want {
				t.Errorf("_flow_error = %q, want %q", st.Vars["_flow_error"], c.want)
			}
			if st.Output["error"] != c.want {
				t.Errorf("output error = %q, want %q", st.Output["error"], c.want)
			}
		})
	}
}

// When the permissions value is unknown, the reference's handler has set
// `_last_permissions` to None before normalize_code_permissions raises, so
// _create_data_aware_handler's failure record has an `execution` without
// a `permissions` key: the rejected raw value is no mode the code ran
// under.
func TestCodeUnknownPermissionsRecordNoMode(t *testing.T) {
	data := map[string]any{"code": "def transform(_input):\n    return 1\n", "pinDefaults": map[string]any{"permissions": "Weird"}}
	_, st := startRunWith(t, codeFlowWith(data, []string{"permissions:string"}), CompileOptions{}, map[string]any{})
	rec := codeNodeRecord(st)
	if rec == nil || rec["success"] != false {
		t.Fatalf("record = %s, want a failure record", jsonText(t, rec))
	}
	exec, _ := rec["execution"].(map[string]any)
	if exec == nil {
		t.Fatalf("record has no execution: %s", jsonText(t, rec))
	}
	if p, has := exec["permissions"]; has {
		t.Fatalf("execution.permissions = %v, want no permissions key (the value was rejected)", p)
	}
}

// The legacy `function` node takes the code path whenever data has a
// `code` key (executor.py _create_handler: `if "code" in data:
// create_code_handler(data["code"], ...)`), an empty one included: ""
// defines no function, so the node fails ("Function 'transform' not
// defined in code") and `expression` is not consulted.
func TestLegacyFunctionEmptyCodeTakesCodePath(t *testing.T) {
	flow := rsFlow("fn_empty_code", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("f", "function", []string{"exec-in:exec"}, []string{"exec-out:exec"},
			map[string]any{"code": "", "expression": "1 + 1"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>f.exec-in", "f.exec-out>end.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Output["success"] != false || st.Vars["_flow_error_node"] != "f" {
		t.Fatalf("output = %s, _last_output = %v; want the function node to fail (empty code defines no transform)",
			jsonText(t, st.Output), st.Vars["_last_output"])
	}
}
