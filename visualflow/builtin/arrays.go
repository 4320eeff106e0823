package builtin

import (
	"fmt"
	"math"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// orderedValues returns the values of the declared input pins in order
// (["a", "b"] without metadata), skipping absent and null values.
func orderedValues(env *Env, inputs map[string]any) []any {
	order := pinOrder(env, inputs)
	if len(order) == 0 {
		order = []string{"a", "b"}
	}
	out := []any{}
	for _, pin := range order {
		if v, ok := inputs[pin]; ok && v != nil {
			out = append(out, v)
		}
	}
	return out
}

// makeArrayNode: values of the declared pins in order, no flattening.
func makeArrayNode(env *Env, inputs map[string]any) (any, error) {
	return orderedValues(env, inputs), nil
}

// arrayConcatNode: like make_array, but array values are spliced in.
func arrayConcatNode(env *Env, inputs map[string]any) (any, error) {
	out := []any{}
	for _, v := range orderedValues(env, inputs) {
		if list, ok := v.([]any); ok {
			out = append(out, list...)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// arrayMapNode: for each item, item[str(key)] for objects, else the item.
func arrayMapNode(_ *Env, inputs map[string]any) (any, error) {
	items, err := iterate("array_map", "items", get(inputs, "items", []any{}))
	if err != nil {
		return nil, err
	}
	key := pyval.Str(get(inputs, "key", ""))
	out := make([]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m[key])
			continue
		}
		out = append(out, it)
	}
	return out, nil
}

// arrayFilterNode keeps objects with item[key] == value and other items
// equal to value (Python equality).
func arrayFilterNode(_ *Env, inputs map[string]any) (any, error) {
	items, err := iterate("array_filter", "items", get(inputs, "items", []any{}))
	if err != nil {
		return nil, err
	}
	key := pyval.Str(get(inputs, "key", ""))
	value := inputs["value"]
	out := []any{}
	for _, it := range items {
		cand := it
		if m, ok := it.(map[string]any); ok {
			cand = m[key]
		}
		if pyval.Equal(cand, value) {
			out = append(out, it)
		}
	}
	return out, nil
}

func arrayLengthNode(_ *Env, inputs map[string]any) (any, error) {
	list, _ := inputs["array"].([]any)
	return int64(len(list)), nil
}

func hasToolsNode(_ *Env, inputs map[string]any) (any, error) {
	list, _ := inputs["array"].([]any)
	return len(list) > 0, nil
}

func arrayAppendNode(_ *Env, inputs map[string]any) (any, error) {
	return append(listOf(inputs["array"]), inputs["item"]), nil
}

// arrayDedupNode removes duplicates by fingerprint, keeping first
// occurrences; with a key path, the fingerprint is that of the value at
// the path when non-null.
func arrayDedupNode(_ *Env, inputs map[string]any) (any, error) {
	items, ok := inputs["array"].([]any)
	if !ok {
		return []any{}, nil
	}
	keyPath := ""
	if k := inputs["key"]; pyval.Truthy(k) {
		keyPath = pyval.Strip(pyval.Str(k))
	}
	seen := map[string]bool{}
	out := []any{}
	for _, it := range items {
		target := it
		if keyPath != "" {
			if v, ok := pyval.GetPath(it, keyPath); ok && v != nil {
				target = v
			}
		}
		fp := fingerprint(target)
		if seen[fp] {
			continue
		}
		seen[fp] = true
		out = append(out, it)
	}
	return out, nil
}

// fingerprint tags scalars with their Python type name (so 1, 1.0, true
// and "1" differ) and renders containers as compact sorted JSON.
func fingerprint(v any) string {
	switch v.(type) {
	case []any, map[string]any:
		if s, err := pyval.Dumps(v, pyval.Compact); err == nil {
			return s
		}
	}
	return pyval.TypeName(v) + ":" + pyval.Str(v)
}

// elementIndex coerces an index as the reference does: bool → 0, number →
// int() (floats truncated), non-blank string → int(float(s)), anything it
// cannot convert (inf and nan included) → 0. Python's ints are unbounded,
// so an index beyond int64 (1e20) is out of range of every array: it is
// saturated rather than treated as unconvertible.
func elementIndex(raw any) int64 {
	var f float64
	switch x := raw.(type) {
	case bool:
		return 0
	case string:
		v, err := pyval.ToFloat(x)
		if pyval.Strip(x) == "" || err != nil {
			return 0
		}
		f = v
	default:
		if !pyval.IsNumber(raw) {
			return 0
		}
		// int() of a number: past int64 (1e20, a 400-digit int) it is
		// out of range of every array, so ToIndex's saturation is exact
		// enough; inf and nan are unconvertible.
		i, err := pyval.ToIndex(raw)
		if err != nil {
			return 0
		}
		return i
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0
	case f >= 0x1p63:
		return math.MaxInt64
	case f < -0x1p63:
		return math.MinInt64
	}
	return int64(f)
}

// getElementNode: {result, found} for array[index] (negative from the end).
func getElementNode(_ *Env, inputs map[string]any) (any, error) {
	arr, _ := inputs["array"].([]any)
	idx := elementIndex(get(inputs, "index", int64(0)))
	if idx < 0 {
		idx += int64(len(arr))
	}
	if idx >= 0 && idx < int64(len(arr)) {
		return map[string]any{"result": arr[idx], "found": true}, nil
	}
	return map[string]any{"result": inputs["default"], "found": false}, nil
}

func getRandomElementNode(env *Env, inputs map[string]any) (any, error) {
	arr, _ := inputs["array"].([]any)
	if len(arr) == 0 {
		return map[string]any{"result": inputs["default"], "found": false}, nil
	}
	return map[string]any{"result": arr[env.int64N(int64(len(arr)))], "found": true}, nil
}

// pathMuxNode selects in<select> (present even if null), else fallback,
// else null. Output: {"out": v}.
func pathMuxNode(_ *Env, inputs map[string]any) (any, error) {
	idx := int64(0)
	switch x := inputs["select"].(type) {
	case nil:
	case bool:
		if x {
			idx = 1
		}
	case string:
		if pyval.Strip(x) != "" {
			if i, err := pyval.ToIntViaFloat(pyval.Strip(x)); err == nil {
				idx = i
			}
		}
	default:
		if i, err := pyval.ToInt(x); err == nil {
			idx = i
		}
	}
	if v, ok := inputs[fmt.Sprintf("in%d", idx)]; ok {
		return map[string]any{"out": v}, nil
	}
	if v, ok := inputs["fallback"]; ok {
		return map[string]any{"out": v}, nil
	}
	return map[string]any{"out": nil}, nil
}
