package visualflow

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// runVarWriter executes set_var, set_vars and set_var_property (§6.6).
// The bus is untouched; a terminal writer completes the run with it under
// "result", as the reference's variable adapters do.
func (s *step) runVarWriter(n *node) (runtime.StepPlan, error) {
	resolved, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (%s): resolving inputs: %w", n.ID, n.Type, err)
	}
	var rec map[string]any
	switch n.Type {
	case "set_var":
		name := varName(resolved["name"])
		path, msg := checkVarName(name, "Set Variable requires a non-empty variable name.")
		if msg != "" {
			return s.failWith(n, msg), nil
		}
		if len(path) == 0 {
			return s.failWith(n, fmt.Sprintf("Failed to set variable '%s': %s", name, errNoSegment)), nil
		}
		value, ok := resolved["value"]
		if !ok {
			value = zeroFor(n)
		}
		_ = pyval.SetIn(s.vars, path, pyval.DeepCopy(value))
		rec = map[string]any{"value": value}
	case "set_vars":
		updates, _ := resolved["updates"].(map[string]any)
		if str, ok := resolved["updates"].(string); ok {
			if v, err := pyval.LoadsJSON(str); err == nil {
				updates, _ = v.(map[string]any)
			}
		}
		// Every name is checked before any is written, so that a bad
		// one leaves the vars untouched.
		named := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(updates)) {
			name := pyval.Strip(k)
			path, msg := checkVarName(name, "Set Variables requires non-empty variable names in updates.")
			if msg != "" {
				return s.failWith(n, msg), nil
			}
			if len(path) == 0 {
				return s.failWith(n, "Failed to set variables: "+errNoSegment), nil
			}
			named[name] = updates[k]
		}
		for _, name := range slices.Sorted(maps.Keys(named)) {
			_ = pyval.SetIn(s.vars, pyval.VarPath(name), pyval.DeepCopy(named[name]))
		}
		rec = map[string]any{"updates": named}
	default: // set_var_property
		name := varName(resolved["name"])
		path, msg := checkVarName(name, "Set Variable Property requires a non-empty variable name.")
		if msg != "" {
			return s.failWith(n, msg), nil
		}
		key := varName(resolved["key"])
		if key == "" {
			return s.failWith(n, "Set Variable Property requires a non-empty key."), nil
		}
		if len(path) == 0 {
			return s.failWith(n, fmt.Sprintf("Failed to set variable property '%s.%s': %s", name, key, errNoSegment)), nil
		}
		obj := map[string]any{}
		if cur, ok := pyval.GetIn(s.vars, path); ok {
			if m, ok := cur.(map[string]any); ok {
				obj, _ = pyval.DeepCopy(m).(map[string]any)
			}
		}
		// A key made only of dots sets nothing: the object is written
		// back unchanged, as in the reference.
		if keyPath := pyval.VarPath(key); len(keyPath) > 0 {
			_ = pyval.SetIn(obj, keyPath, pyval.DeepCopy(resolved["value"]))
		}
		// The var gets its own copy: a later write into it in place must
		// not change this node's recorded output (a restart reads that
		// output as it was written).
		_ = pyval.SetIn(s.vars, path, pyval.DeepCopy(obj))
		rec = map[string]any{"value": obj}
	}
	s.setOutput(n.ID, rec)
	// The reference's terminal output echoes the record except set_var's
	// value: {success, result} / {success, updates, result} /
	// {success, value, result}.
	out := map[string]any{"success": true, "result": s.vars["_last_output"]}
	if n.Type != "set_var" {
		maps.Copy(out, rec)
	}
	return s.next(n, out), nil
}

// errNoSegment is the reference's error for a variable name made only of
// dots, which passes the non-empty check but names nothing.
const errNoSegment = "Variable name must be non-empty"

// next continues to the linear successor or completes the run with out,
// the node's terminal output. Each writer shapes out as the reference
// does rather than through completeResult: their terminal outputs are not
// their persisted records.
func (s *step) next(n *node, out map[string]any) runtime.StepPlan {
	if n.linear != "" {
		return runtime.Next(n.linear)
	}
	return runtime.Complete(out)
}

// varName reads a name or key input as the reference does: a string, or
// str() of a truthy non-string (a 0/False/null name is empty), stripped
// as Python's str.strip() (which also removes U+001C..U+001F).
func varName(v any) string {
	return pyval.Strip(pyval.StrOrEmpty(v))
}

// checkVarName returns the segments the variable name writes
// (pyval.VarPath; none for a name made only of dots), or the error message
// of an invalid name. The reserved '_' prefix is checked on the name and
// on the variable it writes: "._temp" would write _temp once its empty
// segment is dropped, which the reference lets through but the spec
// reserves (§4.1).
func checkVarName(name, emptyMsg string) (path []string, msg string) {
	if name == "" {
		return nil, emptyMsg
	}
	path = pyval.VarPath(name)
	if strings.HasPrefix(name, "_") || len(path) > 0 && strings.HasPrefix(path[0], "_") {
		return nil, fmt.Sprintf("Invalid variable name '%s': names starting with '_' are reserved.", name)
	}
	return path, ""
}

// zeroFor is the default of an absent set_var value by pin type.
func zeroFor(n *node) any {
	for _, p := range n.Inputs {
		if p.ID != "value" {
			continue
		}
		switch p.Type {
		case "boolean":
			return false
		case "number":
			return int64(0)
		case "string":
			return ""
		}
	}
	return nil
}

// runAddMessage appends a message to vars.context.messages (§6.6). A
// terminal add_message completes with {success, message} only, not its
// record (which holds a copy of the whole conversation).
func (s *step) runAddMessage(n *node) (runtime.StepPlan, error) {
	resolved, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (add_message): resolving inputs: %w", n.ID, err)
	}
	role := "user"
	if v := resolved["role"]; v != nil {
		role = pyval.Str(v)
	}
	content := ""
	if v := resolved["content"]; v != nil {
		content = pyval.Str(v)
	}
	msg := map[string]any{
		"role": role, "content": content, "timestamp": durable.FormatTime(s.now()),
		"metadata": map[string]any{"message_id": "msg_" + randomHex(16)},
	}
	ctx := objectAt(s.vars, "context")
	msgs, _ := ctx["messages"].([]any)
	ctx["messages"] = append(msgs, msg)
	// str(task or ""): a falsy non-string task (0, False, []) is "".
	task := pyval.StrOrEmpty(ctx["task"])
	// The record's message is a copy: the one in vars.context.messages
	// can be changed in place by later nodes.
	rec := map[string]any{"message": pyval.DeepCopy(msg), "context": pyval.DeepCopy(ctx), "task": task, "messages": pyval.DeepCopy(ctx["messages"])}
	s.setOutput(n.ID, rec)
	return s.next(n, map[string]any{"success": true, "message": msg}), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// runMemact is the MemAct composer (§6.8). The composition algorithm
// belongs to the memory module, which this runtime does not have: the
// node reports ok=false with an explanatory error and continues. A
// terminal composer completes with its record as-is (no success key: the
// record reports ok).
func (s *step) runMemact(n *node) (runtime.StepPlan, error) {
	resolved, err := s.resolveInputs(n, s.busInput())
	if err != nil {
		return runtime.StepPlan{}, fmt.Errorf("node %s (memact_compose): resolving inputs: %w", n.ID, err)
	}
	kg := firstNonNull(resolved, "kg_result", "raw", "result")
	msg := "memact_compose is not supported by this runtime (no MemAct memory module)"
	if _, ok := kg.(map[string]any); !ok {
		msg = "memact_compose requires a dict kg_result (connect memory_kg_query.raw or output)"
	}
	rec := map[string]any{"ok": false, "error": msg, "delta": map[string]any{}, "trace": map[string]any{},
		"active_memory": map[string]any{}, "memact_system_prompt": "", "memact_blocks": []any{}}
	s.setBus(rec)
	s.setOutput(n.ID, rec)
	return s.next(n, copyObject(rec)), nil
}
