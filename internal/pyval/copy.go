package pyval

// DeepCopy returns a copy of v that shares no []any or map[string]any with
// it. Scalars (including json.Number) are returned unchanged.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = DeepCopy(e)
		}
		return out
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = DeepCopy(e)
		}
		return out
	}
	return v
}
