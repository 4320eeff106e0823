package pyjson

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Normalize returns a deep copy of v in the form Decode gives it back after
// v is encoded: objects as map[string]any (a nil one as {}), arrays as []any,
// numbers as json.Number holding the encoder's literal, strings as they are.
// A cache that hands out copies of what it stored uses it so that a value
// read from memory has the same Go types as the same value read from disk.
// Values outside the fast paths (other Go types, invalid UTF-8, Ordered)
// take the encode-and-decode path itself, so the equality holds for every
// value the encoder accepts. v must be free of cycles (a value that has been
// encoded once is).
func Normalize(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, json.Number:
		if n, ok := x.(json.Number); ok && !validNumber(string(n)) {
			return roundTrip(v)
		}
		return v, nil
	case string:
		if !utf8.ValidString(x) {
			return roundTrip(v)
		}
		return v, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return roundTrip(v) // the encoder's error
		}
		return json.Number(AppendFloat(nil, x)), nil
	case int:
		return json.Number(strconv.Itoa(x)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case map[string]any:
		return NormalizeObject(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := Normalize(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	default:
		return roundTrip(v)
	}
}

// NormalizeObject is Normalize for an object; nil gives an empty map, as
// the encoder writes a nil map as {}.
func NormalizeObject(m map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, e := range m {
		if !utf8.ValidString(k) {
			v, err := roundTrip(m)
			if err != nil {
				return nil, err
			}
			return v.(map[string]any), nil
		}
		n, err := Normalize(e)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

func roundTrip(v any) (any, error) {
	b, err := Append(nil, v, Line, "")
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// IsNormalized reports whether v is already in Normalize's form, so that
// Decode would give back an equal value for its encoding. It walks v
// without copying; a caller that hands over a value it built (rather than
// one it decoded) uses it to tell whether the value may stand for its
// decoded copy. It errs towards false: a value Normalize would change in
// any way (an int, a nil map, a string with invalid UTF-8) is not.
func IsNormalized(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case json.Number:
		return validNumber(string(x))
	case string:
		return utf8.ValidString(x)
	case map[string]any:
		return IsNormalizedObject(x)
	case []any:
		if x == nil {
			return false // Normalize gives an empty array
		}
		for _, e := range x {
			if !IsNormalized(e) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// IsNormalizedObject is IsNormalized for an object; nil is not (Normalize
// gives an empty map).
func IsNormalizedObject(m map[string]any) bool {
	if m == nil {
		return false
	}
	for k, e := range m {
		if !utf8.ValidString(k) || !IsNormalized(e) {
			return false
		}
	}
	return true
}
