package visualflow

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// handler returns the runtime node function of an exec node. Every
// handler is wrapped by the control-return rule (§4.6.1).
func (p *program) handler(n *node) runtime.NodeFunc {
	var body func(s *step, n *node) (runtime.StepPlan, error)
	switch n.handler {
	case handlerScheduler:
		body = (*step).runScheduler
	case handlerJoin:
		body = (*step).runJoin
	case handlerAgent:
		body = (*step).runAgent
	case handlerOnEvent:
		body = (*step).runOnEvent
	case handlerOnSchedule:
		body = (*step).runOnSchedule
	case handlerEmitEvent:
		body = (*step).runEmitEvent
	case handlerSubflow:
		body = (*step).runSubflow
	case handlerEffect:
		body = (*step).runEffect
	case handlerVarWriter:
		body = (*step).runVarWriter
	case handlerAddMessage:
		body = (*step).runAddMessage
	case handlerMemact:
		body = (*step).runMemact
	default:
		body = func(s *step, n *node) (runtime.StepPlan, error) { return s.runFunction(n), nil }
	}
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		s := p.newStep(ctx, run, rc)
		s.flushOutputKey()
		plan, err := body(s, n)
		if err != nil {
			return plan, err
		}
		if ctx.Err() != nil {
			// The tick's caller went away while the node ran (a shutdown):
			// whatever the node made of its cancelled work (a code node's
			// "context cancelled" failure) is not its outcome; the run
			// stays at its checkpoint and runs the node again.
			return runtime.StepPlan{}, fmt.Errorf("node %s interrupted: %w", n.ID, context.Cause(ctx))
		}
		return s.controlReturn(n, plan), nil
	}
}

// fileNodes receive the workspace keys in their base input (§6.10).
var fileNodes = map[string]bool{"read_file": true, "write_file": true, "read_pdf": true, "write_pdf": true,
	"read_artifact": true, "import_workspace_file": true, "export_artifact": true, "list_folder_files": true}

var workspaceKeys = []string{"workspace_root", "workspace_access_mode", "workspace_allowed_paths", "workspace_ignored_paths"}

// withWorkspace fills the run's workspace keys m lacks into m, and
// returns it.
func (s *step) withWorkspace(m map[string]any) map[string]any {
	for _, k := range workspaceKeys {
		if _, has := m[k]; !has {
			if v, ok := s.vars[k]; ok {
				m[k] = v
			}
		}
	}
	return m
}

// runFunction is the function-node step (§4.2).
func (s *step) runFunction(n *node) runtime.StepPlan {
	base := s.baseInput(n)
	baseObject, isObject := base.(map[string]any)
	if fileNodes[n.Type] && isObject {
		base = s.withWorkspace(copyObject(baseObject))
	}
	resolved, err := s.resolveInputs(n, base)
	if err != nil {
		return s.functionFailure(n, err, nil)
	}
	if fileNodes[n.Type] && !isObject {
		// The bus is not an object (a code node returned a string): the
		// scope goes with the pins, or the node would run unscoped.
		if resolved == nil {
			resolved = map[string]any{}
		}
		s.withWorkspace(resolved)
	}
	var in any = resolved
	if len(resolved) == 0 {
		in = base
	}
	result, rec, err := s.callFunction(n, in)
	if err != nil {
		return s.functionFailure(n, err, rec)
	}
	return s.functionSuccess(n, result, rec)
}

// callFunction executes the function of a function node. rec, when not
// nil, is the output record to persist instead of the result.
func (s *step) callFunction(n *node, in any) (result any, rec map[string]any, err error) {
	m, _ := in.(map[string]any)
	switch n.Type {
	case "on_flow_start":
		return flowStart(n, in), nil, nil
	case "on_flow_end":
		if m == nil {
			return flowEndNonObject(n, in), nil, nil
		}
		return flowEnd(n, m), nil, nil
	case "on_user_request":
		if m == nil {
			return map[string]any{"message": pyval.Str(in), "context": map[string]any{}}, nil, nil
		}
		// Copies, as on_flow_start's: the input is the vars, and a later
		// node appending to vars.context must not change this output.
		// Defaults only for absent keys (dict.get): a caller's null stays.
		return map[string]any{
			"message": pyval.DeepCopy(getOr(m, "message", "")),
			"context": pyval.DeepCopy(getOr(m, "context", map[string]any{})),
		}, nil, nil
	case "on_agent_message":
		return agentMessage(n, m, in), nil, nil
	case "if":
		cond := m["condition"]
		if m == nil {
			cond = pyval.Truthy(in) // a non-object input is the condition: bool(input)
		}
		b := "false"
		if pyval.Truthy(cond) {
			b = "true"
		}
		return map[string]any{"branch": b, "condition": cond}, nil, nil
	case "switch":
		if m == nil {
			return switchNode(n, map[string]any{"value": in}), nil, nil
		}
		return switchNode(n, m), nil, nil
	case "code":
		return s.runCode(n, in)
	case "function":
		return s.runLegacyFunction(n, in)
	}
	if fileNodes[n.Type] {
		r, err := s.runFileNode(n, m)
		return r, nil, err
	}
	if m == nil && in != nil {
		// Nodes whose reference handler takes a non-object input whole.
		switch n.Type {
		case "concat":
			// str(input or ""): a falsy input (0, false, []) joins to "".
			if !pyval.Truthy(in) {
				return "", nil, nil
			}
			return pyval.Str(in), nil, nil
		case "make_array", "array_concat":
			if list, ok := in.([]any); ok {
				return pyval.DeepCopy(list), nil, nil
			}
			return []any{in}, nil, nil
		}
	}
	if n.pureFn != nil {
		args := copyObject(m)
		if m == nil && slices.Contains(builtinRegistry, n.Type) {
			// The reference's builtin wrapper passes a non-object input
			// as the pins value, a and text: uppercase("hi") is "HI".
			args["value"], args["a"], args["text"] = in, in, in
		}
		r, err := s.callPure(n, args)
		return r, nil, err
	}
	return in, nil, nil // unknown type: identity (§2)
}

// agentMessage computes the outputs of on_agent_message as the
// reference's event handler does: sender and message from the input
// object with defaults for absent keys only (a caller's null stays), or
// message = str(input) for a non-object input; channel from
// eventConfig, "" when absent.
func agentMessage(n *node, m map[string]any, in any) map[string]any {
	cfg, _ := n.Data["eventConfig"].(map[string]any)
	out := map[string]any{"sender": "unknown", "channel": pyval.DeepCopy(getOr(cfg, "channel", ""))}
	if m == nil {
		out["message"] = pyval.Str(in)
		return out
	}
	out["sender"] = pyval.DeepCopy(getOr(m, "sender", "unknown"))
	out["message"] = pyval.DeepCopy(getOr(m, "message", ""))
	return out
}

// functionSuccess applies step 5 of §4.2 and the transition (§4.7).
func (s *step) functionSuccess(n *node, result any, rec map[string]any) runtime.StepPlan {
	s.setBus(result)
	if rec != nil {
		s.setOutput(n.ID, rec)
	} else {
		s.setOutput(n.ID, result)
	}
	if n.outputKey != "" {
		_ = pyval.SetDotted(s.vars, n.outputKey, pyval.DeepCopy(result))
	}
	if n.Type == "on_flow_end" {
		// A non-object result (a scalar bus and no pins) ends the run as
		// any terminal node's does: {response, success}.
		return runtime.Complete(completeResult(result))
	}
	if n.linear != "" {
		s.setHandle("exec-out")
		return runtime.Next(n.linear)
	}
	if len(n.branches) > 0 {
		return s.branch(n, result)
	}
	return runtime.Complete(completeResult(result))
}

// branch follows the branch chosen by a branch node's result (§4.7).
func (s *step) branch(n *node, result any) runtime.StepPlan {
	m, _ := result.(map[string]any)
	b, ok := m["branch"].(string)
	if !ok || b == "" { // Python's `not isinstance(branch, str) or not branch`
		return s.failWith(n, "Branching node did not return a string 'branch' value")
	}
	if t, ok := n.branches[b]; ok {
		s.setHandle(b)
		return runtime.Next(t)
	}
	if b == "true" || b == "false" || b == "default" || strings.HasPrefix(b, "case:") {
		return runtime.Complete(completeResult(result))
	}
	return s.failWith(n, "Unknown branch '"+b+"'")
}

// failWith ends the run (or the branch) with a failure output.
func (s *step) failWith(n *node, msg string) runtime.StepPlan {
	s.setFlowError(n.ID, msg)
	return runtime.Complete(map[string]any{"success": false, "error": msg, "node": n.ID})
}

// functionFailure is step 6 of §4.2: the run completes with
// success=false (or the branch ends inside a control block, Q3).
func (s *step) functionFailure(n *node, err error, rec map[string]any) runtime.StepPlan {
	msg := err.Error()
	s.setFlowError(n.ID, msg)
	if rec == nil {
		rec = map[string]any{"error": msg, "success": false, "node": n.ID}
	}
	s.setOutput(n.ID, rec)
	out := copyObject(rec)
	out["success"] = false
	out["error"] = msg
	out["node"] = n.ID
	return runtime.Complete(out)
}

// flushOutputKey writes the mapped value of the previous node, when it
// is an effect or agent node with an outputKey whose outcome is stored in
// _temp.effects (§5.3, §5.6).
func (s *step) flushOutputKey() {
	prev, _ := s.tmp["prev_node_id"].(string)
	n := s.p.node(prev)
	if n == nil || n.outputKey == "" {
		return
	}
	isAgent := n.handler == handlerAgent && n.kind == kindExec
	if !isAgent && !isEffectNode(n) {
		return
	}
	effects, _ := s.tmp["effects"].(map[string]any)
	raw, ok := effects[n.ID]
	if !ok {
		return
	}
	var mapped any
	if !isAgent { // an agent's pins are not mapped from its outcome; its mapped value is the outcome
		mapped = s.mapEffect(n, raw, nil)
	}
	if v := mappedValue(n, mapped, raw); v != nil {
		_ = pyval.SetDotted(s.vars, n.outputKey, pyval.DeepCopy(v))
	}
}
