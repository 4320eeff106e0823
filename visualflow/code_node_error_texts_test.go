package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// codeFlowWith is start → code node c (data given, input pins in) → end
// (pin "out" wired from c.output).
func codeFlowWith(data map[string]any, in []string) map[string]any {
	return rsFlow("code_with", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("c", "code", append([]string{"exec-in:exec"}, in...), []string{"exec-out:exec", "output:any"}, data),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "out:any"}, nil, nil),
	}, "start.exec-out>c.exec-in", "c.exec-out>end.exec-in", "c.output>end.out")
}

// codeNodeRecord is the persisted output record of node c.
func codeNodeRecord(st *durable.RunState) map[string]any {
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs["c"].(map[string]any)
	return rec
}

// The reference's sandbox handler (code_executor.py
// _create_restricted_handler / _create_basic_handler, and validate_code
// before them) wraps every failure in a CodeExecutionError whose text the
// node's error carries:
//   - a syntax error: "Syntax error: <e>" (validate_code's ast.parse);
//   - an error while executing the module: "Execution error: <e>";
//   - no such function: "Function '<name>' not defined in code";
//   - a name that is not callable: "'<name>' is not a callable function";
//   - an error raised by the function: "Runtime error: <e>".
//
// The messages of the sandbox itself (<e>) differ by design (Starlark),
// but these wrapper texts do not depend on the interpreter.
func TestCodeNodeErrorsCarryPhaseWrapper(t *testing.T) {
	cases := []struct {
		name, code string
		exact      bool
		want       string
	}{
		{"runtime error", "def transform(_input):\n    fail(\"boom\")\n", false, "Runtime error: "},
		{"module error", "x = {}[\"k\"]\ndef transform(_input):\n    return 1\n", false, "Execution error: "},
		{"syntax error", "def transform(_input)\n    return 1\n", false, "Syntax error: "},
		{"missing function", "def other(_input):\n    return 1\n", true, "Function 'transform' not defined in code"},
		{"not callable", "transform = 5\n", true, "'transform' is not a callable function"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, st := startRunWith(t, codeFlowWith(map[string]any{"code": c.code}, nil), CompileOptions{}, map[string]any{})
			got, _ := st.Vars["_flow_error"].(string)
			ok := got == c.want
			if !c.exact {
				ok = strings.HasPrefix(got, c.want)
			}
			if !ok {
				t.Fatalf("_flow_error = %q, want %s %q", got, map[bool]string{true: "exactly", false: "a text starting with"}[c.exact], c.want)
			}
			if rec := codeNodeRecord(st); rec == nil || rec["error"] != got {
				t.Fatalf("record error = %v, want %q", rec["error"], got)
			}
		})
	}
}
