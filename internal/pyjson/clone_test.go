package pyjson

import (
	"reflect"
	"testing"
)

// CloneObject is a deep copy: arrays inside the object are copied too.
func TestCloneObjectCopiesNestedArrays(t *testing.T) {
	t.Parallel()
	orig := map[string]any{"list": []any{"a", map[string]any{"k": "v"}}, "obj": map[string]any{"l": []any{"x"}}}
	c := CloneObject(orig)
	c["list"].([]any)[0] = "changed"
	c["list"].([]any)[1].(map[string]any)["k"] = "changed"
	c["obj"].(map[string]any)["l"].([]any)[0] = "changed"
	if orig["list"].([]any)[0] != "a" || orig["list"].([]any)[1].(map[string]any)["k"] != "v" || orig["obj"].(map[string]any)["l"].([]any)[0] != "x" {
		t.Errorf("CloneObject shares nested values: original now %v", orig)
	}
	arr := []any{[]any{"a"}}
	ca := Clone(arr).([]any)
	ca[0].([]any)[0] = "changed"
	if arr[0].([]any)[0] != "a" {
		t.Errorf("Clone of an array shares its nested array: original now %v", arr)
	}
}

// Clone returns a deep copy: equal to its source, empty arrays included
// (an empty list must not come back as a nil slice, which IsNormalized
// refuses and reflect.DeepEqual tells apart).
func TestCloneKeepsEmptyArrays(t *testing.T) {
	t.Parallel()
	v := map[string]any{"a": []any{}, "b": []any{[]any{}, map[string]any{"c": []any{}}}}
	c := Clone(v)
	if !reflect.DeepEqual(c, v) {
		t.Errorf("Clone(%#v) = %#v; want an equal copy", v, c)
	}
	if !IsNormalized(c) {
		t.Errorf("Clone of a normalised value is not normalised: %#v", c)
	}
	if a, ok := Clone([]any{}).([]any); !ok || a == nil {
		t.Errorf("Clone([]any{}) = %#v; want an empty non-nil array", a)
	}
}
