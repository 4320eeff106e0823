package pyjson

import "maps"

// Clone returns a deep copy of a generic JSON tree. Maps and slices are
// copied; scalars are shared (they are immutable). Values outside the
// generic tree are returned as they are.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CloneObject(x)
	case []any:
		return cloneArray(x)
	default:
		return v
	}
}

// CloneObject is Clone for an object; nil stays nil.
func CloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	// maps.Clone copies the table wholesale, far cheaper than inserting
	// key by key; only nested containers are then replaced.
	out := maps.Clone(m)
	for k, e := range out {
		switch x := e.(type) {
		case map[string]any:
			out[k] = CloneObject(x)
		case []any:
			out[k] = cloneArray(x)
		}
	}
	return out
}

func cloneArray(a []any) []any {
	if a == nil {
		return nil
	}
	out := make([]any, len(a))
	for i, e := range a {
		switch x := e.(type) {
		case map[string]any:
			out[i] = CloneObject(x)
		case []any:
			out[i] = cloneArray(x)
		default:
			out[i] = e
		}
	}
	return out
}
