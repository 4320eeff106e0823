package pyval

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// numKind classifies a value for arithmetic purposes.
type numKind int

const (
	notNumber numKind = iota
	intNumber
	floatNumber
	boolNumber
)

// number is a decoded numeric value: i is valid for intNumber and boolNumber,
// f for floatNumber. big marks an integer literal beyond int64 (a
// json.Number, as LoadsJSON and the stores give it): a float for
// arithmetic, but Python holds it as an int, so str(), repr() and
// json.dumps() write its digits.
type number struct {
	kind numKind
	i    int64
	f    float64
	big  bool
	// digits are a big int's decimal digits (big set), so that it
	// compares exactly: its float64 f is for arithmetic only.
	digits string
}

func (n number) float() float64 {
	if n.kind == floatNumber {
		return n.f
	}
	return float64(n.i)
}

// asNumber decodes any Go numeric kind (and bool) into a number.
func asNumber(v any) number {
	switch x := v.(type) {
	case bool:
		if x {
			return number{kind: boolNumber, i: 1}
		}
		return number{kind: boolNumber}
	case int64:
		return number{kind: intNumber, i: x}
	case int:
		return number{kind: intNumber, i: int64(x)}
	case int32:
		return number{kind: intNumber, i: int64(x)}
	case int16:
		return number{kind: intNumber, i: int64(x)}
	case int8:
		return number{kind: intNumber, i: int64(x)}
	case uint8:
		return number{kind: intNumber, i: int64(x)}
	case uint16:
		return number{kind: intNumber, i: int64(x)}
	case uint32:
		return number{kind: intNumber, i: int64(x)}
	case uint:
		if uint64(x) > math.MaxInt64 {
			return bigUint(uint64(x))
		}
		return number{kind: intNumber, i: int64(x)}
	case uint64:
		if x > math.MaxInt64 {
			return bigUint(x)
		}
		return number{kind: intNumber, i: int64(x)}
	case float64:
		return number{kind: floatNumber, f: x}
	case float32:
		return number{kind: floatNumber, f: float64(x)}
	case json.Number:
		return parseJSONNumber(string(x))
	}
	return number{}
}

// bigUint is a uint64 past int64: a Python int that int64 does not hold,
// carried as a big int literal is (a float for arithmetic, its digits
// for printing and exact comparison).
func bigUint(x uint64) number {
	return number{kind: floatNumber, f: float64(x), big: true, digits: strconv.FormatUint(x, 10)}
}

// parseJSONNumber turns a JSON number literal into an int or float. Integer
// literals outside the int64 range are floats for arithmetic (Python would
// compute with a big int), marked big so that their digits are kept where
// the value is printed or stored.
func parseJSONNumber(s string) number {
	big := false
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return number{kind: intNumber, i: i}
		}
		big = isRangeErr(err)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return number{}
	}
	n := number{kind: floatNumber, f: f, big: big}
	if big {
		n.digits = s
	}
	return n
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// IsNumber reports whether v is a number for Python arithmetic: any int or
// float kind, json.Number, or a bool (Python bools are ints).
func IsNumber(v any) bool {
	return asNumber(v).kind != notNumber
}

// IsInt reports whether v is a Python int (not a bool, not a float).
func IsInt(v any) bool {
	return asNumber(v).kind == intNumber
}

// IsFloat reports whether v is a Python float.
func IsFloat(v any) bool {
	return asNumber(v).kind == floatNumber
}

// IsRealNumber reports whether v is an int or float but not a bool (Python's
// isinstance(v, (int, float)) and not isinstance(v, bool)).
func IsRealNumber(v any) bool {
	k := asNumber(v).kind
	return k == intNumber || k == floatNumber
}

// Normalize converts every number in v (recursively through []any and
// map[string]any) to its canonical kind: int64 for Python ints and float64
// for Python floats. Other values are returned unchanged; containers are
// rebuilt, so the result shares no slices or maps with v.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return v
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	}
	n := asNumber(v)
	switch {
	case n.big:
		return v // its digits; a float64 would lose them
	case n.kind == intNumber:
		return n.i
	case n.kind == floatNumber:
		return n.f
	}
	return v
}

// TypeName returns the Python type name of v (NoneType, bool, int, float,
// str, list, dict), used in error messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	switch n := asNumber(v); {
	case n.kind == intNumber || n.big:
		return "int"
	case n.kind == floatNumber:
		return "float"
	}
	return "object"
}
