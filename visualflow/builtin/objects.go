package builtin

import (
	"fmt"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// getNode: {"value": value at dot/bracket path str(key) in object, or
// default when the key is empty or the result is null}.
func getNode(_ *Env, inputs map[string]any) (any, error) {
	obj := get(inputs, "object", map[string]any{})
	key := pyval.Str(get(inputs, "key", ""))
	if v, ok := pyval.GetPath(obj, key); ok && v != nil {
		return map[string]any{"value": v}, nil
	}
	return map[string]any{"value": inputs["default"]}, nil
}

// objectInput returns inputs[key] as Python's dict(x) makes it (missing →
// {}): an object as it is, or an iterable of key/value pairs — a list
// whose elements are 2-element lists, 2-character strings or 2-key objects
// (an object iterates over its keys, sorted here), and a string of such
// elements, so only "" — later pairs win. Pair keys that are not strings
// are written as json.dumps writes them (1, 1.5, true, null), keys equal
// in Python (1, 1.0, true) sharing the first one's name. Anything dict()
// refuses is an error: null, a number or bool (not iterable), an element
// that is not a pair, a list or object as a key.
func objectInput(node string, inputs map[string]any, key string) (map[string]any, error) {
	raw, ok := inputs[key]
	if !ok {
		return map[string]any{}, nil
	}
	var elems []any
	switch x := raw.(type) {
	case map[string]any:
		return x, nil
	case []any:
		elems = x
	case string:
		elems = pyIter(x)
	default:
		return nil, fmt.Errorf("%s: input '%s' must be an object, got %s", node, key, pyval.TypeName(raw))
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: input '%s' must be an object or a list of key/value pairs: %s", node, key, fmt.Sprintf(format, args...))
	}
	out := make(map[string]any, len(elems))
	var nonStr []any // keys other than strings, by first appearance
	var nonStrName []string
	for i, e := range elems {
		var pair []any
		switch x := e.(type) {
		case []any:
			pair = x
		case string:
			pair = pyIter(x)
		case map[string]any:
			pair = pyIter(x)
		default:
			return nil, fail("cannot convert dictionary update sequence element #%d to a sequence", i)
		}
		if len(pair) != 2 {
			return nil, fail("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))
		}
		name, isStr := pair[0].(string)
		if !isStr {
			switch pair[0].(type) {
			case []any, map[string]any:
				return nil, fail("unhashable type: '%s'", pyval.TypeName(pair[0]))
			}
			found := false
			for j, k := range nonStr {
				if pyval.Equal(k, pair[0]) {
					name, found = nonStrName[j], true
					break
				}
			}
			if !found {
				var err error
				if name, err = pyval.Dumps(pair[0], pyval.Compact); err != nil {
					return nil, fail("%v", err)
				}
				nonStr, nonStrName = append(nonStr, pair[0]), append(nonStrName, name)
			}
		}
		out[name] = pair[1]
	}
	return out, nil
}

// pyIter lists what iterating a string (its characters) or an object (its
// keys, sorted) yields in Python.
func pyIter(v any) []any {
	var out []any
	switch x := v.(type) {
	case string:
		for _, r := range x {
			out = append(out, string(r))
		}
	case map[string]any:
		for _, k := range pyval.SortedKeys(x) {
			out = append(out, k)
		}
	}
	return out
}

// setNode returns a copy of object with the '.'-separated key set to value,
// creating or replacing intermediates with objects. Unlike the reference
// (quirk Q8) nested objects are not shared with the input.
func setNode(_ *Env, inputs map[string]any) (any, error) {
	obj, err := objectInput("set", inputs, "object")
	if err != nil {
		return nil, err
	}
	out, _ := pyval.DeepCopy(obj).(map[string]any)
	key := pyval.Str(get(inputs, "key", ""))
	parts := strings.Split(key, ".")
	cur := out
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = inputs["value"]
	return out, nil
}

// mergeNode: shallow merge of a and b, b wins.
func mergeNode(_ *Env, inputs map[string]any) (any, error) {
	a, err := objectInput("merge", inputs, "a")
	if err != nil {
		return nil, err
	}
	b, err := objectInput("merge", inputs, "b")
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out, nil
}

// makeObjectNode: every input whose key does not start with '_'.
func makeObjectNode(_ *Env, inputs map[string]any) (any, error) {
	out := map[string]any{}
	for _, k := range publicKeys(inputs) {
		out[k] = inputs[k]
	}
	return out, nil
}

// breakObjectNode outputs, for each breakConfig.selectedPaths entry, the
// value at that '.'-separated path (pin id = the path). A non-empty string
// object is parsed like parse_json first; unparsable strings yield nulls.
func breakObjectNode(env *Env, inputs map[string]any) (any, error) {
	obj := inputs["object"]
	if s, ok := obj.(string); ok && s != "" {
		if parsed, err := parseJSONish(s); err == nil {
			obj = wrapScalar(parsed)
		}
	}
	out := map[string]any{}
	cfg := configObject(env, "breakConfig")
	paths, _ := cfg["selectedPaths"].([]any)
	for _, p := range paths {
		path, _ := p.(string)
		// Paths are trimmed, as the reference normalises them: the pin
		// " name " is the pin "name".
		if path = pyval.Strip(path); path == "" {
			continue
		}
		v, _ := pyval.GetDotted(obj, path)
		out[path] = v
	}
	return out, nil
}

// editJSONSchemaNode adds the fields of literalValue to the schema input
// without changing existing ones. Output: {"schema": merged}.
func editJSONSchemaNode(env *Env, inputs map[string]any) (any, error) {
	additions, _ := literalInput(env, inputs)
	return map[string]any{"schema": addSchemaFields(inputs["schema"], additions)}, nil
}

func addSchemaFields(baseRaw, addRaw any) map[string]any {
	base, _ := baseRaw.(map[string]any)
	add, _ := addRaw.(map[string]any)
	if len(base) == 0 {
		return orEmpty(add)
	}
	if len(add) == 0 {
		return base
	}
	props := map[string]any{}
	baseProps, _ := base["properties"].(map[string]any)
	for k, v := range baseProps {
		props[k] = v
	}
	added := map[string]bool{}
	addProps, _ := add["properties"].(map[string]any)
	for _, name := range pyval.SortedKeys(addProps) {
		if name == "" {
			continue
		}
		if _, exists := props[name]; exists {
			continue
		}
		props[name] = addProps[name]
		added[name] = true
	}
	var required []any
	seen := map[string]bool{}
	collect := func(raw any, onlyAdded bool) {
		list, _ := raw.([]any)
		for _, it := range list {
			s, ok := it.(string)
			if !ok || pyval.Strip(s) == "" || seen[s] || (onlyAdded && !added[s]) {
				continue
			}
			seen[s] = true
			required = append(required, s)
		}
	}
	collect(base["required"], false)
	collect(add["required"], true)

	merged := make(map[string]any, len(base)+2)
	for k, v := range base {
		merged[k] = v
	}
	merged["type"] = firstTruthy(base["type"], add["type"], "object")
	merged["properties"] = props
	for _, defsKey := range []string{"$defs", "definitions"} {
		addDefs, _ := add[defsKey].(map[string]any)
		if len(addDefs) == 0 {
			continue
		}
		next := map[string]any{}
		baseDefs, _ := base[defsKey].(map[string]any)
		for k, v := range baseDefs {
			next[k] = v
		}
		for k, v := range addDefs {
			if _, ok := next[k]; !ok {
				next[k] = v
			}
		}
		merged[defsKey] = next
	}
	if len(required) > 0 {
		merged["required"] = required
	} else {
		delete(merged, "required")
	}
	return merged
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func firstTruthy(vals ...any) any {
	for _, v := range vals {
		if pyval.Truthy(v) {
			return v
		}
	}
	return vals[len(vals)-1]
}
