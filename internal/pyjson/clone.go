package pyjson

import "maps"

// Clone returns a deep copy of a generic JSON tree. Maps and slices are
// copied; scalars are shared (they are immutable). Values outside the
// generic tree are returned as they are, and so are containers nested past
// the encoder's limit: no store takes such a value (nor one that contains
// itself, whose copy would otherwise never end), so sharing them is moot.
func Clone(v any) any { return clone(v, 0) }

// CloneObject is Clone for an object; nil stays nil.
func CloneObject(m map[string]any) map[string]any { return cloneObject(m, 0) }

func clone(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneObject(x, depth)
	case []any:
		return cloneArray(x, depth)
	default:
		return v
	}
}

func cloneObject(m map[string]any, depth int) map[string]any {
	if m == nil || depth > maxDepth {
		return m
	}
	// maps.Clone copies the table wholesale, far cheaper than inserting
	// key by key; only nested containers are then replaced.
	out := maps.Clone(m)
	for k, e := range out {
		switch x := e.(type) {
		case map[string]any:
			out[k] = cloneObject(x, depth+1)
		case []any:
			out[k] = cloneArray(x, depth+1)
		}
	}
	return out
}

func cloneArray(a []any, depth int) []any {
	if a == nil || depth > maxDepth {
		return a
	}
	out := make([]any, len(a))
	for i, e := range a {
		switch x := e.(type) {
		case map[string]any:
			out[i] = cloneObject(x, depth+1)
		case []any:
			out[i] = cloneArray(x, depth+1)
		default:
			out[i] = e
		}
	}
	return out
}
