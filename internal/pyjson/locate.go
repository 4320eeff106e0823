package pyjson

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// locate checks the members of the struct or map rv one by one, as
// encoding/json walks them, and returns the error of the first bad one at
// its own path (vars.cfg.Extra.scores[1], vars.m.7), or nil when none is.
// It runs only once encoding/json refused rv or wrote an empty object in
// it, so the walk costs nothing for a value that encodes fine.
func (e *encoder) locate(rv reflect.Value, depth int) error {
	checkOnly, locating := e.checkOnly, e.locating
	e.checkOnly, e.locating = true, true
	defer func() { e.checkOnly, e.locating = checkOnly, locating }()
	return e.members(rv, depth)
}

// members checks each member of the struct or map rv at its JSON key.
func (e *encoder) members(rv reflect.Value, depth int) error {
	switch rv.Kind() {
	case reflect.Struct:
		// A struct is a value: it cannot contain itself but through a
		// pointer, map or slice, which have their own cycle checks.
		for _, f := range jsonFields(rv.Type()) {
			fv, ok := fieldByIndex(rv, f.index)
			if !ok || !fv.CanInterface() || f.omitted(fv) {
				continue
			}
			if err := e.member(f.name, fv.Interface(), depth); err != nil {
				return err
			}
		}
	case reflect.Map:
		if rv.IsNil() || rv.Len() == 0 {
			return nil
		}
		if err := e.enter(container{rv.Pointer(), -1}, depth); err != nil {
			return err
		}
		defer e.leave()
		for it := rv.MapRange(); it.Next(); {
			k, err := mapKeyText(it.Key())
			if err != nil {
				return &Error{Path: e.pathString(), Reason: fmt.Sprintf("%s: %v", rv.Type(), err)}
			}
			if err := e.member(k, it.Value().Interface(), depth); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *encoder) member(key string, v any, depth int) error {
	e.path = append(e.path, pathElem{key: key, isKey: true})
	if err := e.value(v, depth+1); err != nil {
		return err
	}
	e.path = e.path[:len(e.path)-1]
	return nil
}

// mapKeyText is the object key encoding/json writes for the map key k.
func mapKeyText(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("map key type %s has no JSON form", k.Type())
}

// noJSONForm reports whether t is a struct encoding/json writes as {}
// whatever it holds: one with no exported field it encodes (an error
// value, a sync.Mutex, struct{}). Python's json.dumps refuses an object
// it has no encoding for; storing {} would silently drop the value.
// Callers check first that the value has no marshaler of its own.
func noJSONForm(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && len(jsonFields(t)) == 0
}

func (e *encoder) noFormError(v any) error {
	return &Error{Path: e.pathString(), Reason: fmt.Sprintf("a Go %T has no JSON form", v)}
}

// jsonField is a struct field encoding/json writes: its key, where it is
// (through embedded structs) and when it is left out.
type jsonField struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
}

// fieldCache maps a struct type to its []jsonField.
var fieldCache sync.Map

// jsonFields lists the fields encoding/json writes for the struct type t:
// exported ones named by their json tag or Go name, "-" left out, the
// fields of an untagged embedded struct promoted. Name conflicts between
// promoted fields are not resolved: a field encoding/json drops is still
// listed, which can only make a path more precise, never accept a value.
func jsonFields(t reflect.Type) []jsonField {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]jsonField)
	}
	fields := appendJSONFields(nil, t, nil, map[reflect.Type]bool{})
	fieldCache.Store(t, fields)
	return fields
}

func appendJSONFields(fields []jsonField, t reflect.Type, index []int, seen map[reflect.Type]bool) []jsonField {
	if seen[t] { // a struct embedding itself through a pointer
		return fields
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		idx := append(index[:len(index):len(index)], i)
		if sf.Anonymous {
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
			if name == "" && ft.Kind() == reflect.Struct {
				fields = appendJSONFields(fields, ft, idx, seen)
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fields = append(fields, jsonField{
			name:      name,
			index:     idx,
			omitEmpty: hasOption(opts, "omitempty"),
			omitZero:  hasOption(opts, "omitzero"),
		})
	}
	return fields
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// fieldByIndex is rv.FieldByIndex, false past a nil embedded pointer
// (encoding/json skips the fields behind it).
func fieldByIndex(rv reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && rv.Kind() == reflect.Pointer {
			if rv.IsNil() {
				return reflect.Value{}, false
			}
			rv = rv.Elem()
		}
		rv = rv.Field(x)
	}
	return rv, true
}

// omitted reports whether encoding/json leaves the field value v out.
func (f jsonField) omitted(v reflect.Value) bool {
	if f.omitEmpty && isEmptyValue(v) {
		return true
	}
	if f.omitZero {
		if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
			if v.Kind() != reflect.Pointer || !v.IsNil() {
				return z.IsZero()
			}
		}
		return v.IsZero()
	}
	return false
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
