package builtin

import (
	"fmt"
	"sort"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// get returns inputs[key], or def when the key is absent (Python
// dict.get(key, def)).
func get(inputs map[string]any, key string, def any) any {
	if v, ok := inputs[key]; ok {
		return v
	}
	return def
}

// floatInput is float(inputs.get(key, def)) with an error naming the pin.
func floatInput(node string, inputs map[string]any, key string, def float64) (float64, error) {
	f, err := pyval.ToFloat(get(inputs, key, def))
	if err != nil {
		return 0, fmt.Errorf("%s: input '%s': %w", node, key, err)
	}
	return f, nil
}

// strOr returns "" for nil and str(v) otherwise.
func strOr(v any) string {
	if v == nil {
		return ""
	}
	return pyval.Str(v)
}

// listOf implements the list rule used by several builders: list → copy,
// null → [], anything else → [x].
func listOf(v any) []any {
	switch x := v.(type) {
	case []any:
		return append([]any{}, x...)
	case nil:
		return []any{}
	}
	return []any{v}
}

// literalInput returns the hidden _literalValue input, falling back to
// data.literalValue when the caller did not inject it.
func literalInput(env *Env, inputs map[string]any) (any, bool) {
	if v, ok := inputs["_literalValue"]; ok {
		return v, true
	}
	if v, ok := env.data()["literalValue"]; ok {
		return pyval.Normalize(v), true
	}
	return nil, false
}

// pinOrder returns the declared non-exec input pin ids in order: the hidden
// _pin_order input when present, else the pins in data.inputs. It returns
// nil when neither is available.
func pinOrder(env *Env, inputs map[string]any) []string {
	if raw, ok := inputs["_pin_order"].([]any); ok {
		var out []string
		for _, x := range raw {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	pins, _ := env.data()["inputs"].([]any)
	var out []string
	for _, p := range pins {
		pin, ok := p.(map[string]any)
		if !ok || pin["type"] == "execution" {
			continue
		}
		if id, ok := pin["id"].(string); ok && id != "" {
			out = append(out, id)
		}
	}
	return out
}

// publicKeys returns the keys of inputs that do not start with '_', sorted.
func publicKeys(inputs map[string]any) []string {
	var out []string
	for k := range inputs {
		if len(k) > 0 && k[0] == '_' {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// configObject returns data[key] when it is an object.
func configObject(env *Env, key string) map[string]any {
	m, _ := env.data()[key].(map[string]any)
	return m
}

// iterate emulates Python iteration over a JSON value: lists yield their
// items, strings their code points, dicts their (sorted) keys; other
// values are not iterable.
func iterate(node, pin string, v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case map[string]any:
		keys := pyval.SortedKeys(x)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: input '%s': '%s' object is not iterable", node, pin, pyval.TypeName(v))
}
