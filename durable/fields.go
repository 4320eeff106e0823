package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// nullString maps "" to JSON null.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func fieldError(key, want string, got any) error {
	return fmt.Errorf("field %q: expected %s, got %s", key, want, pyjson.KindOf(got))
}

// getString reads an optional string field; null or absent gives "".
func getString(m map[string]any, key string) (string, error) {
	return asString(key, m[key])
}

// asString converts a member value to a string; null gives "".
func asString(key string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldError(key, "a string", v)
	}
	return s, nil
}

// asTime parses a member value as a timestamp; null or "" gives zero.
func asTime(key string, v any) (Time, error) {
	s, err := asString(key, v)
	if err != nil || s == "" {
		return Time{}, err
	}
	t, err := ParseTime(s)
	if err != nil {
		return Time{}, fmt.Errorf("field %q: %w", key, err)
	}
	return t, nil
}

// asTimeOrText is asTime keeping a string ParseTime cannot read, as
// text with the zero Time, instead of refusing it: Python's stores pass
// created_at/updated_at through as given, so a run or snapshot whose
// timestamp is other text (a hand edit, another writer) stays readable.
func asTimeOrText(key string, v any) (Time, string, error) {
	t, err := asTime(key, v)
	if s, ok := v.(string); ok && err != nil {
		return Time{}, s, nil
	}
	return t, "", err
}

// timeOrText is the wire value of a timestamp kept as text when read
// (see asTimeOrText): the text while t stays zero, else t's. A caller
// that assigns t replaces the text.
func timeOrText(t Time, text string) any {
	if t.IsZero() && text != "" {
		return text
	}
	return t.jsonValue()
}

func getObject(m map[string]any, key string) (map[string]any, error) {
	return asObject(key, m[key])
}

// asObject converts a member value to an object; null gives nil.
func asObject(key string, v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError(key, "an object", v)
	}
	return o, nil
}

func getTime(m map[string]any, key string) (Time, error) {
	return asTime(key, m[key])
}

func getInt(m map[string]any, key string, def int64) (int64, error) {
	return asInt(key, m[key], def)
}

// asInt converts a member value to an integer; null gives def. A float
// is truncated, as Python's int() does; one that is not finite or does
// not fit an int64 (Python's int is unbounded) is an error, not wrapped.
func asInt(key string, v any, def int64) (int64, error) {
	if v == nil {
		return def, nil
	}
	var f float64
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err == nil {
			return i, nil
		}
		var ferr error
		if f, ferr = n.Float64(); ferr != nil && !errors.Is(ferr, strconv.ErrRange) {
			return 0, fmt.Errorf("field %q: %w", key, err)
		}
	case float64:
		f = n
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	default:
		return 0, fieldError(key, "an integer", v)
	}
	// -2^63 is an int64, 2^63 is not; NaN fails both comparisons.
	if !(f >= math.MinInt64 && f < math.MaxInt64) {
		return 0, fmt.Errorf("field %q: %v is out of range for an integer", key, v)
	}
	return int64(f), nil
}

// lastWins applies the members of an object as Python's json.loads reads
// it: of a repeated key the last value counts. to's set must replace all
// an earlier occurrence of the key set; member keeps an error until the
// object ends and drops it if the key comes again, so an invalid value
// that a later one supersedes does not refuse the object. While no
// member fails it costs nothing.
type lastWins struct {
	// to is an interface, not the method value: a func value would be
	// allocated, as escape analysis sees errs' appends leak all of l.
	to interface {
		set(key string, value any) error
	}
	errs []memberError // in the order read; err nil once superseded
}

type memberError struct {
	key string
	err error
}

// member is the decoder's callback.
func (l *lastWins) member(key string, v any) error {
	for i := range l.errs {
		if l.errs[i].key == key {
			l.errs[i].err = nil
		}
	}
	if err := l.to.set(key, v); err != nil {
		l.errs = append(l.errs, memberError{key, err})
	}
	return nil
}

// result returns the decoder's error err, else the first error left.
func (l *lastWins) result(err error) error {
	for i := 0; err == nil && i < len(l.errs); i++ {
		err = l.errs[i].err
	}
	return err
}
