package pyval

// Truthy reports Python truthiness: false for None, False, 0, 0.0, "", []
// and {}; true otherwise (the string "false" is true).
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	n := asNumber(v)
	switch n.kind {
	case intNumber:
		return n.i != 0
	case floatNumber:
		return n.f != 0 // NaN is truthy, as in Python
	}
	return true
}

// CoerceBool is the boolean coercion of Appendix B: null → false; bool →
// itself; number → != 0; string (trimmed, lower-cased) "true", "1", "yes",
// "on" → true and anything else → false; other types → false.
func CoerceBool(v any) bool {
	b, _ := CoerceBoolTri(v)
	return b
}

// CoerceBoolTri is the tri-state variant of CoerceBool: ok is false when v
// expresses no opinion (null, an unknown string, a list or object), so the
// caller can treat it as "no override".
func CoerceBoolTri(v any) (value bool, ok bool) {
	switch x := v.(type) {
	case nil:
		return false, false
	case bool:
		return x, true
	case string:
		switch Lower(Strip(x)) {
		case "", "false", "0", "no", "off":
			return false, true
		case "true", "1", "yes", "on":
			return true, true
		}
		return false, false
	}
	n := asNumber(v)
	switch n.kind {
	case intNumber:
		return n.i != 0, true
	case floatNumber:
		return n.f != 0, true
	}
	return false, false
}

// GetOr is Python's m.get(k1) or m.get(k2) or …: the first truthy value
// under keys, else the last key's value.
func GetOr(m map[string]any, keys ...string) any {
	var v any
	for _, k := range keys {
		if v = m[k]; Truthy(v) {
			return v
		}
	}
	return v
}
