package pyjson

import (
	"encoding/json"
	"errors"
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
// value the encoder accepts; a value it refuses (a NaN, a cycle, a value
// nested too deep) gives the encoder's error.
func Normalize(v any) (any, error) { return NormalizeMember(v, 0) }

// NormalizeMember is Normalize of v as a value depth levels down in the
// document that holds it (a run's vars are one level down in the run's
// JSON), where the nesting limit counts from the document's root: it
// refuses what encoding the whole document would.
func NormalizeMember(v any, depth int) (any, error) {
	n, err := normalize(v, depth)
	if err == errTooDeep {
		return roundTrip(v, depth) // the encoder's error, naming the path
	}
	return n, err
}

// NormalizeObject is Normalize for an object; nil gives an empty map, as
// the encoder writes a nil map as {}.
func NormalizeObject(m map[string]any) (map[string]any, error) { return NormalizeObjectMember(m, 0) }

// NormalizeObjectMember is NormalizeMember for an object; nil gives an
// empty map.
func NormalizeObjectMember(m map[string]any, depth int) (map[string]any, error) {
	n, err := normalizeObject(m, depth)
	if err == errTooDeep {
		v, err := roundTrip(m, depth)
		if err != nil {
			return nil, err
		}
		return v.(map[string]any), nil
	}
	return n, err
}

// errTooDeep stops the fast paths past the encoder's nesting limit: a
// value that contains itself would otherwise recurse until the stack
// overflows. Normalize then encodes the whole value, for the encoder's
// error (a cycle or a nesting too deep) with its path.
var errTooDeep = errors.New("nesting too deep")

func normalize(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case nil, bool, json.Number:
		if n, ok := x.(json.Number); ok && !encodableNumber(string(n)) {
			return roundTrip(v, depth)
		}
		return v, nil
	case string:
		if !utf8.ValidString(x) {
			return roundTrip(v, depth)
		}
		return v, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return roundTrip(v, depth) // the encoder's error
		}
		return json.Number(AppendFloat(nil, x)), nil
	case int:
		return json.Number(strconv.Itoa(x)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case map[string]any:
		return normalizeObject(x, depth)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	default:
		return roundTrip(v, depth)
	}
}

func normalizeObject(m map[string]any, depth int) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, e := range m {
		if !utf8.ValidString(k) {
			v, err := roundTrip(m, depth)
			if err != nil {
				return nil, err
			}
			return v.(map[string]any), nil
		}
		n, err := normalize(e, depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

// roundTrip encodes and decodes v, a value depth levels down in the one
// being normalised, so that the nesting limit is the whole value's.
func roundTrip(v any, depth int) (any, error) {
	b, err := AppendMember(nil, v, Line, "", depth)
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
// any way (an int, a nil map, a string with invalid UTF-8) is not, nor is
// one nested past the encoder's limit (a cycle among them).
func IsNormalized(v any) bool { return isNormalized(v, 0) }

// IsNormalizedObject is IsNormalized for an object; nil is not (Normalize
// gives an empty map).
func IsNormalizedObject(m map[string]any) bool { return isNormalizedObject(m, 0) }

func isNormalized(v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool:
		return true
	case json.Number:
		return encodableNumber(string(x))
	case string:
		return utf8.ValidString(x)
	case map[string]any:
		return isNormalizedObject(x, depth)
	case []any:
		if x == nil {
			return false // Normalize gives an empty array
		}
		for _, e := range x {
			if !isNormalized(e, depth+1) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

func isNormalizedObject(m map[string]any, depth int) bool {
	if m == nil {
		return false
	}
	for k, e := range m {
		if !utf8.ValidString(k) || !isNormalized(e, depth+1) {
			return false
		}
	}
	return true
}
