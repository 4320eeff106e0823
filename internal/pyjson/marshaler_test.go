package pyjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// celsius is a named float whose JSON form is its own.
type celsius float64

func (c celsius) MarshalJSON() ([]byte, error) { return json.Marshal("warm") }

// tagList is a named slice whose JSON form is its own.
type tagList []string

func (t tagList) MarshalJSON() ([]byte, error) { return json.Marshal(strings.Join(t, ",")) }

// attrMap is a named map whose JSON form is its own.
type attrMap map[string]int

func (a attrMap) MarshalJSON() ([]byte, error) { return json.Marshal(len(a)) }

// TestForeignKeepsJSONMarshalers: Go values outside the generic tree are
// converted with encoding/json, which honours a type's MarshalJSON. The
// element-by-element paths for float, slice and map kinds first ran before
// that check, so a host value of a named slice, map or float type with its
// own JSON form (vars a host sets, an effect result) was stored as its raw
// elements: a silent change of stored data.
func TestForeignKeepsJSONMarshalers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"t": celsius(21.5)}, `{"t":"warm"}`},
		{map[string]any{"t": tagList{"a", "b"}}, `{"t":"a,b"}`},
		{map[string]any{"t": attrMap{"x": 1, "y": 2}}, `{"t":2}`},
	} {
		got, err := Marshal(c.v, Canonical)
		if err != nil {
			t.Errorf("Marshal(%#v): %v", c.v, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Marshal(%#v) = %s, want %s (encoding/json honours its MarshalJSON)", c.v, got, c.want)
		}
	}
}
