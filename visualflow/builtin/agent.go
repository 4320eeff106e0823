package builtin

import "github.com/abstractframework/abstractgateway/internal/pyval"

// makeContextNode: {"context": {...context_extra, task, messages}}.
func makeContextNode(_ *Env, inputs map[string]any) (any, error) {
	out := map[string]any{}
	if extra, ok := inputs["context_extra"].(map[string]any); ok {
		for k, v := range extra {
			out[k] = v
		}
	}
	out["task"] = strOr(inputs["task"])
	out["messages"] = listOf(inputs["messages"])
	return map[string]any{"context": out}, nil
}

// nonBlank returns the trimmed string when v is a non-blank string.
func nonBlank(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || pyval.Strip(s) == "" {
		return "", false
	}
	return pyval.Strip(s), true
}

// metaCount converts numbers and numeric strings to ints (bools ignored)
// as Python's int(x) and int(float(s)) do, of any size: past int64 (1e20,
// a big int) the value is a json.Number of its digits.
func metaCount(v any) (any, bool) {
	switch x := v.(type) {
	case bool, nil:
		return nil, false
	case string:
		if pyval.Strip(x) == "" {
			return nil, false
		}
		n, err := pyval.IntViaFloat(pyval.Strip(x))
		return n, err == nil
	}
	if !pyval.IsNumber(v) {
		return nil, false
	}
	n, err := pyval.ToBigInt(v)
	if err != nil {
		return nil, false
	}
	return pyval.BigIntValue(n), true
}

// makeMetaNode builds the host-facing meta envelope {"meta": {...}}.
func makeMetaNode(_ *Env, inputs map[string]any) (any, error) {
	out := map[string]any{}
	if extra, ok := inputs["extra"].(map[string]any); ok {
		for k, v := range extra {
			out[k] = v
		}
	}
	out["schema"] = "abstractcode.agent.v1.meta"
	if s, ok := nonBlank(inputs["schema"]); ok {
		out["schema"] = s
	}
	var version any = int64(1)
	if n, ok := metaCount(inputs["version"]); ok {
		version = n
	}
	out["version"] = version
	if s, ok := nonBlank(inputs["output_mode"]); ok {
		out["output_mode"] = s
	}
	for _, k := range []string{"provider", "model"} {
		if v := inputs[k]; v != nil {
			if s := pyval.Strip(pyval.Str(v)); s != "" {
				out[k] = s
			}
		}
	}
	for _, k := range []string{"sub_run_id", "finish_reason"} {
		if s, ok := nonBlank(inputs[k]); ok {
			out[k] = s
		}
	}
	for _, k := range []string{"iterations", "tool_calls", "tool_results"} {
		if n, ok := metaCount(inputs[k]); ok {
			out[k] = n
		}
	}
	for _, k := range []string{"gen_time", "ttft_ms"} {
		v := inputs[k]
		if _, isBool := v.(bool); v != nil && !isBool {
			out[k] = v
		}
	}
	if u, ok := inputs["usage"].(map[string]any); ok {
		out["usage"] = u
	}
	switch tr := inputs["trace"].(type) {
	case map[string]any:
		out["trace"] = tr
	case string:
		if s, ok := nonBlank(tr); ok {
			out["trace"] = map[string]any{"trace_id": s}
		}
	}
	if id, ok := nonBlank(inputs["trace_id"]); ok {
		tr, _ := out["trace"].(map[string]any)
		if tr == nil {
			tr = map[string]any{}
		}
		tr["trace_id"] = id
		out["trace"] = tr
	}
	switch w := inputs["warnings"].(type) {
	case []any:
		list := []any{}
		for _, x := range w {
			if s := pyval.Str(x); pyval.Strip(s) != "" {
				list = append(list, s)
			}
		}
		out["warnings"] = list
	case string:
		if s, ok := nonBlank(w); ok {
			out["warnings"] = []any{s}
		}
	}
	if d := inputs["debug"]; d != nil {
		out["debug"] = d
	}
	return map[string]any{"meta": out}, nil
}

// makeScratchpadNode builds {"scratchpad": {...}} from agent outputs.
func makeScratchpadNode(_ *Env, inputs map[string]any) (any, error) {
	out := map[string]any{}
	for _, k := range []string{"sub_run_id", "workflow_id"} {
		if s, ok := nonBlank(inputs[k]); ok {
			out[k] = s
		}
	}
	out["task"] = strOr(inputs["task"])
	for _, k := range []string{"messages", "steps", "tool_calls", "tool_results"} {
		out[k] = listOf(inputs[k])
	}
	if extra, ok := inputs["context_extra"].(map[string]any); ok {
		out["context_extra"] = extra
	}
	traces, ok := inputs["node_traces"].(map[string]any)
	if !ok {
		traces = map[string]any{}
	}
	out["node_traces"] = traces
	return map[string]any{"scratchpad": out}, nil
}

// toolParametersNode: one output per declared input pin (null when
// absent) plus tool_call {name, arguments (non-null params)}.
func toolParametersNode(env *Env, inputs map[string]any) (any, error) {
	cfg := configObject(env, "toolParametersConfig")
	raw := cfg["tool"]
	if !pyval.Truthy(raw) {
		raw = cfg["name"]
	}
	name, _ := raw.(string)
	name = pyval.Strip(name)
	out := map[string]any{}
	args := map[string]any{}
	// Only the declared input pins are parameters (none without pin
	// metadata): other inputs, such as bus keys of an exec-pinned node,
	// are not tool arguments.
	for _, pin := range pinOrder(env, inputs) {
		if pin = pyval.Strip(pin); pin == "" {
			continue
		}
		v := inputs[pin]
		out[pin] = v
		if v != nil {
			args[pin] = v
		}
	}
	out["tool_call"] = map[string]any{"name": name, "arguments": args}
	return out, nil
}

// toolsAllowlistNode: {"tools": trimmed, non-empty, de-duplicated strings
// of literalValue}.
func toolsAllowlistNode(env *Env, inputs map[string]any) (any, error) {
	lit, _ := literalInput(env, inputs)
	list, _ := lit.([]any)
	tools := []any{}
	seen := map[string]bool{}
	for _, x := range list {
		s, ok := nonBlank(x)
		if !ok || seen[s] {
			continue
		}
		seen[s] = true
		tools = append(tools, s)
	}
	return map[string]any{"tools": tools}, nil
}
