package pyjson

// Clone returns a deep copy of a generic JSON tree. Maps and slices are
// copied; scalars are shared (they are immutable). Values outside the
// generic tree are returned as they are.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CloneObject(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Clone(e)
		}
		return out
	default:
		return v
	}
}

// CloneObject is Clone for an object; nil stays nil.
func CloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = Clone(e)
	}
	return out
}
