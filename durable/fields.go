package durable

import (
	"encoding/json"
	"fmt"
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

// asInt converts a member value to an integer; null gives def.
func asInt(key string, v any, def int64) (int64, error) {
	if v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil {
				return 0, fmt.Errorf("field %q: %w", key, err)
			}
			return int64(f), nil
		}
		return i, nil
	case float64:
		return int64(n), nil
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	}
	return 0, fieldError(key, "an integer", v)
}

func getBool(m map[string]any, key string, def bool) (bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return def, fieldError(key, "a boolean", v)
	}
	return b, nil
}
