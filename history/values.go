package history

import (
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// blankToNil is s trimmed, or null when that is empty (Python
// `str(x).strip() or None`).
func blankToNil(s string) any {
	if s = pyval.Strip(s); s == "" {
		return nil
	}
	return s
}

// storedTime is a run's created_at/updated_at as Python's turns write
// it, `str(x or "").strip() or None`: a text kept as read (no ISO time)
// stays, trimmed.
func storedTime(v any) any {
	if s, ok := v.(string); ok {
		return blankToNil(s)
	}
	return v
}

// millis is t in Unix milliseconds, the resolution Python compares
// session times and measures turn durations in.
func millis(t durable.Time) (int64, bool) {
	if t.IsZero() {
		return 0, false
	}
	return t.UnixMilli(), true
}

// durationMS is end-start in milliseconds, never negative, rounded to two
// decimals the way Python's round(x, 2) rounds.
func durationMS(start, end durable.Time) float64 {
	us := end.Sub(start.Time).Microseconds()
	if us <= 0 {
		return 0
	}
	// timedelta.total_seconds() * 1000.0: the same two roundings.
	return pyval.Round(float64(us)/1e6*1000.0, 2)
}

// object returns v as an object, or nil.
func object(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// wireObject indexes a value's wire form (its JSONValue) by key.
func wireObject(kvs pyjson.Ordered) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// nonBlankString returns v trimmed when it is a string with non-space
// content.
func nonBlankString(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	s = pyval.Strip(s)
	return s, s != ""
}

// textish is Python's _pick_textish: strings trimmed, numbers and
// booleans as str() writes them, anything else "".
func textish(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return pyval.Strip(x)
	case bool:
		return pyval.Str(x)
	}
	if pyval.IsNumber(v) {
		return pyval.Str(v)
	}
	return ""
}

// firstTextish is the first non-empty textish of m's keys, in order.
func firstTextish(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := textish(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// Bounds of the values of an artifact summary.
const (
	boundMaxDepth   = 5
	boundMaxString  = 2000 // code points
	boundMaxItems   = 40
	boundMaxKeys    = 80
	truncation      = "#TRUNCATION"
	depthTruncation = "#TRUNCATION: replay metadata depth limit"
)

// bounded returns a compact copy of a JSON value for an artifact summary:
// strings cut to 2000 code points plus "#TRUNCATION", lists to 40 items
// plus {"truncated_items": n}, objects to 80 keys plus "truncated_keys",
// and anything nested deeper than 5 levels replaced by a marker. Objects
// keep their first 80 keys in wire order (sorted order for maps, which
// have none).
func bounded(v any, depth int) any {
	if depth > boundMaxDepth {
		return depthTruncation
	}
	switch x := v.(type) {
	case nil, bool:
		return x
	case string:
		return boundString(x)
	case []any:
		return boundList(x, depth)
	case map[string]any:
		keys := pyjson.SortedKeys(x)
		kvs := make(pyjson.Ordered, len(keys))
		for i, k := range keys {
			kvs[i] = pyjson.KV{Key: k, Value: x[k]}
		}
		return boundObject(kvs, depth)
	case pyjson.Ordered:
		return boundObject(x, depth)
	}
	if pyval.IsNumber(v) {
		return v
	}
	return pyval.Str(v)
}

func boundString(s string) string {
	if utf8.RuneCountInString(s) <= boundMaxString {
		return s
	}
	n := 0
	for i := range s {
		if n == boundMaxString {
			return s[:i] + truncation
		}
		n++
	}
	return s
}

func boundList(list []any, depth int) []any {
	out := make([]any, 0, min(len(list), boundMaxItems)+1)
	for _, item := range list[:min(len(list), boundMaxItems)] {
		out = append(out, bounded(item, depth+1))
	}
	if len(list) > boundMaxItems {
		out = append(out, map[string]any{"truncated_items": len(list) - boundMaxItems})
	}
	return out
}

func boundObject(kvs pyjson.Ordered, depth int) map[string]any {
	out := make(map[string]any, min(len(kvs), boundMaxKeys)+1)
	for _, kv := range kvs[:min(len(kvs), boundMaxKeys)] {
		out[kv.Key] = bounded(kv.Value, depth+1)
	}
	if len(kvs) > boundMaxKeys {
		out["truncated_keys"] = len(kvs) - boundMaxKeys
	}
	return out
}
