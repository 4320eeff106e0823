// Package frozen holds JSON values, runs and ledger records compactly for
// stores that keep them in memory (the in-memory store, the SQLite store's
// cache of hot ledgers).
//
// Freezing takes a deep copy in which every object (map[string]any)
// becomes an exact-size slice of members and every array ([]any) a new
// slice, recursively; thawing returns a fresh deep copy with ordinary
// maps. The frozen copy isolates its keeper from the callers as
// pyjson.Clone does (values of other types are shared, as Clone shares
// them) in well under half the memory: a Go map of a handful of keys takes
// several hundred bytes (its table holds eight slots), a member 32. What a
// process keeps, it must fault in page by page, and on this project's
// reference VM a page touched for the first time costs ~11 µs
// (docs/benchmarks.md, the page_first_touch ceiling), more than freezing
// and thawing a run together. Thawed maps are also exact-size, smaller
// than clones of maps that grew key by key.
//
// A frozen value is never changed once made, so readers may thaw it
// without the keeper's lock.
package frozen

// member is one key of a frozen object; value is frozen.
type member struct {
	key   string
	value any
}

// Object is a frozen map[string]any. A nil Object stands for a nil map,
// an empty non-nil one for an empty map.
type Object []member

// array is a frozen []any, nil for a nil slice.
type array []any

// Freeze returns a frozen deep copy of v.
func Freeze(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return FreezeObject(x)
	case []any:
		if x == nil {
			return array(nil)
		}
		out := make(array, len(x))
		for i, e := range x {
			out[i] = Freeze(e)
		}
		return out
	default:
		return v
	}
}

// FreezeObject returns a frozen deep copy of m.
func FreezeObject(m map[string]any) Object {
	if m == nil {
		return nil
	}
	out := make(Object, 0, len(m))
	for k, e := range m {
		out = append(out, member{key: k, value: Freeze(e)})
	}
	return out
}

// Thaw returns a new deep copy, with maps and slices, of the value v
// frozen.
func Thaw(v any) any {
	switch x := v.(type) {
	case Object:
		return x.Thaw()
	case array:
		if x == nil {
			return []any(nil)
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Thaw(e)
		}
		return out
	default:
		return v
	}
}

// Thaw returns a new map holding a deep copy of o.
func (o Object) Thaw() map[string]any {
	if o == nil {
		return nil
	}
	out := make(map[string]any, len(o))
	for _, m := range o {
		out[m.key] = Thaw(m.value)
	}
	return out
}

// Get returns a thawed copy of the value of key.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return Thaw(m.value), true
		}
	}
	return nil, false
}
