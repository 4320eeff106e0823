package visualflow

import (
	"os"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/visualflow/code"
)

// defaultCode is the source of a code node with neither codeBody nor
// code (Python's data.get("code", ...) default): the identity.
const defaultCode = "def transform(_input):\n    return _input\n"

// runCode executes a code node in the Starlark sandbox (§6.9). An object
// input is passed without its permissions key; any other input (a scalar
// bus when no pin resolved) is passed as is, as Python does.
func (s *step) runCode(n *node, in any) (any, map[string]any, error) {
	m, isObject := in.(map[string]any)
	var permissions any
	if v, ok := m["permissions"]; ok && v != nil {
		permissions = v
	} else if v, ok := n.pinDefaults["permissions"]; ok && v != nil {
		permissions = v
	}
	// Python: str(permissions or "sandbox"), then normalize_code_permissions
	// (lower-cased, "-" read as "_") and ensure_code_permissions_allowed,
	// with their CodeExecutionError texts.
	perm := "sandbox"
	if pyval.Truthy(permissions) {
		perm = pyval.Str(permissions)
	}
	switch strings.ReplaceAll(strings.ToLower(pyval.Strip(perm)), "-", "_") {
	case "sandbox", "safe", "protected", "restricted", "sandboxed", "":
		perm = "sandbox"
	case "full_access", "full", "unrestricted":
		perm = "full_access"
		if !s.p.opts.CodeFullAccess && !pyval.CoerceBool(os.Getenv("ABSTRACTRUNTIME_CODE_FULL_ACCESS")) {
			return s.codeFailure("full_access code execution is disabled by host policy. "+
				"Set ABSTRACTRUNTIME_CODE_FULL_ACCESS=1 only for trusted local deployments.", perm, 0)
		}
	default:
		// The reference fails before it records a mode: the execution
		// names none (""). The text is the repr of the raw value.
		return s.codeFailure("Unsupported code execution permissions: "+pyval.Repr(permissions), "", 0)
	}
	args := in
	if isObject {
		obj := copyObject(m)
		delete(obj, "permissions")
		args = obj
	}
	fn := code.FunctionName(trimmed(n.Data["functionName"]))
	src := defaultCode
	if body, ok := n.Data["codeBody"].(string); ok {
		var params []string
		for _, p := range n.pinOrder {
			if id := p.(string); id != "permissions" {
				params = append(params, id)
			}
		}
		src = code.BuildBody(fn, body, params)
	} else if v, has := n.Data["code"]; has {
		src, _ = v.(string)
	}
	result, st, err := code.Run(s.ctx, src, fn, args, code.Limits{})
	if err != nil {
		return s.codeFailure(err.Error(), perm, st.Duration)
	}
	rec := map[string]any{}
	if m, ok := result.(map[string]any); ok {
		for k, v := range m {
			rec[k] = v
		}
	}
	rec["success"], rec["output"], rec["result"] = true, result, result
	rec["execution"] = execution(st.Duration, perm)
	return result, rec, nil
}

// execution is a code node's execution metrics; perm is the mode it ran
// under, "" for none (a rejected permissions value).
func execution(d time.Duration, perm string) map[string]any {
	ms := float64(d.Microseconds()) / 1000
	ex := map[string]any{"duration_ms": ms, "cpu_time_ms": ms}
	if perm != "" {
		ex["permissions"] = perm
	}
	return ex
}

func (s *step) codeFailure(msg, perm string, d time.Duration) (any, map[string]any, error) {
	rec := map[string]any{"success": false, "output": nil, "result": nil, "error": msg, "execution": execution(d, perm)}
	return nil, rec, nodeErrorf("%s", msg)
}

// runLegacyFunction executes the legacy function node (§6.9): data.code
// as a module, data.expression as an expression, else the identity.
func (s *step) runLegacyFunction(n *node, in any) (any, map[string]any, error) {
	// Python: `if "code" in data` — a present code key takes the code path
	// even when empty (it then defines no function, and the node fails).
	if v, has := n.Data["code"]; has {
		src, _ := v.(string)
		// transform gets the input as is (Python's create_code_handler),
		// an object or a scalar bus alike.
		fn := code.FunctionName(trimmed(n.Data["functionName"]))
		r, _, err := code.Run(s.ctx, src, fn, in, code.Limits{})
		if err != nil {
			return nil, nil, nodeErrorf("%s", err.Error())
		}
		return r, nil, nil
	}
	if expr, ok := n.Data["expression"].(string); ok && pyval.Strip(expr) != "" {
		names := map[string]any{"x": in, "input": in}
		if m, ok := in.(map[string]any); ok {
			for k, v := range m {
				if isIdent(k) {
					names[k] = v
				}
			}
		}
		r, _, err := code.Eval(s.ctx, expr, names, code.Limits{})
		if err != nil {
			return map[string]any{"error": err.Error()}, nil, nil
		}
		return r, nil, nil
	}
	return in, nil, nil
}

func isIdent(s string) bool { return code.Ident(s) == s }
