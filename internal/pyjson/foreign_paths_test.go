package pyjson

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

type hostConfig struct {
	Name  string
	Score float64
	Extra map[string]any
}

type taggedConfig struct {
	Score   float64 `json:"score"`
	Ignored float64 `json:"-"`
	Empty   []any   `json:",omitempty"`
}

type embeddedBase struct{ Limit float64 }

type withEmbedded struct {
	embeddedBase
	Name string
}

type node struct {
	Name string
	Next *node
}

// failingMarshaler is a value whose MarshalJSON fails: its error is its own.
type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("no way") }

type holdsErr struct {
	Name string
	Err  error
}

// errFirst has its member with no JSON form first: encoding/json writes
// {"Err":{},"Name":"x"}, the {} not at the end of the text.
type errFirst struct {
	Err  error
	Name string
}

type allOmitted struct {
	A string `json:",omitempty"`
}

type opaqueMarshaler struct{ secret int }

func (o opaqueMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal(o.secret) }

// TestBadValueInGoStructOrMapNamesItsPath: a struct or a map with
// non-string keys goes through encoding/json, whose error names neither
// the member nor where it is ("json: unsupported value: +Inf"). The error
// must name the key path of the bad value itself, as it does for the
// generic tree (vars.a.b[2]): fields by their JSON name, map keys as the
// text encoding/json writes for them.
func TestBadValueInGoStructOrMapNamesItsPath(t *testing.T) {
	t.Parallel()
	loop := &node{Name: "a"}
	loop.Next = loop
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"struct field", hostConfig{Score: math.NaN()}, "vars.cfg.Score"},
		{"pointer to struct", &hostConfig{Extra: map[string]any{"scores": []any{1.5, math.Inf(1)}}}, "vars.cfg.Extra.scores[1]"},
		{"channel in a map in a struct", hostConfig{Extra: map[string]any{"c": make(chan int)}}, "vars.cfg.Extra.c"},
		{"json tag name", taggedConfig{Score: math.Inf(-1)}, "vars.cfg.score"},
		{"embedded struct field promoted", withEmbedded{embeddedBase: embeddedBase{Limit: math.NaN()}}, "vars.cfg.Limit"},
		{"int-keyed map", map[int]any{7: math.NaN()}, "vars.cfg.7"},
		{"int key of several digits, in decimal", map[int]any{255: math.NaN()}, "vars.cfg.255"},
		{"struct in int-keyed map", map[int]hostConfig{3: {Score: math.Inf(1)}}, "vars.cfg.3.Score"},
		{"pointer cycle", loop, "vars.cfg.Next"},
		{"marshaler error", map[string]any{"x": 1, "f": []any{hostConfig{Extra: map[string]any{"m": failingMarshaler{}}}}}, "vars.cfg.f[0].Extra.m"},
	} {
		_, err := Append(nil, map[string]any{"cfg": c.v}, Canonical, "vars")
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a *pyjson.Error", c.name, err)
			continue
		}
		if pe.Path != c.want {
			t.Errorf("%s: error %q names path %q, want %q", c.name, err, pe.Path, c.want)
		}
		// Check walks the same way.
		if cerr := Check(map[string]any{"cfg": c.v}, "vars"); cerr == nil || !strings.HasPrefix(cerr.Error(), c.want+" ") {
			t.Errorf("%s: Check gives %v, want an error at %s", c.name, cerr, c.want)
		}
	}
}

// TestGoStructEncodingUnchanged: the member walk only reports; a struct
// that encodes fine is still written as encoding/json writes it (an
// integral float as an int, "-" and omitempty honoured), empty objects
// included.
func TestGoStructEncodingUnchanged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		want string
	}{
		{hostConfig{Name: "x", Score: 2, Extra: map[string]any{}}, `{"Extra":{},"Name":"x","Score":2}`},
		{taggedConfig{Score: 1.5, Ignored: math.NaN()}, `{"score":1.5}`},
		{map[int]any{2: map[string]any{}, 1: "a"}, `{"1":"a","2":{}}`},
		{allOmitted{}, `{}`},
		{opaqueMarshaler{secret: 4}, `4`},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), `"2026-01-02T03:04:05Z"`},
	} {
		got, err := Marshal(c.v, Canonical)
		if err != nil {
			t.Errorf("Marshal(%#v): %v", c.v, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Marshal(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// TestValueWithNoJSONFormIsRefused: encoding/json writes {} for a struct
// with no exported field (an error value, struct{}{}), so the value was
// silently stored as an empty object. Python's json.dumps raises
// TypeError for an object it cannot encode; the encoder refuses it at its
// path, naming the Go type. Structs with a marshaler, or with exported
// fields that are all omitted, keep their encoding.
func TestValueWithNoJSONFormIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		v        any
		wantPath string
		wantType string
	}{
		{"error value", errors.New("boom"), "vars.err", "*errors.errorString"},
		{"empty struct", struct{}{}, "vars.err", "struct {}"},
		{"error in a struct field", holdsErr{Name: "x", Err: errors.New("boom")}, "vars.err.Err", "*errors.errorString"},
		{"error in a struct field before others", errFirst{Err: errors.New("boom"), Name: "x"}, "vars.err.Err", "*errors.errorString"},
		{"error in a typed slice", []error{nil, errors.New("boom")}, "vars.err[1]", "*errors.errorString"},
		{"error in an int-keyed map", map[int]any{5: errors.New("boom")}, "vars.err.5", "*errors.errorString"},
	} {
		_, err := Append(nil, map[string]any{"err": c.v}, Canonical, "vars")
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a *pyjson.Error", c.name, err)
			continue
		}
		if pe.Path != c.wantPath || !strings.Contains(pe.Reason, "a Go "+c.wantType+" has no JSON form") {
			t.Errorf("%s: error %q, want path %s and the Go type %s", c.name, err, c.wantPath, c.wantType)
		}
	}
}

// Check names the path of the offending value: a bad member of an object
// whose other members are fine is reported at root.key, whatever the order
// the members are visited in (map order varies from call to call).
func TestCheckNamesTheBadMemberAmongGoodOnes(t *testing.T) {
	t.Parallel()
	m := map[string]any{"bad": map[string]any{"x": nanValue()}}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		m[k] = map[string]any{"ok": int64(1)}
	}
	for range 30 {
		err := Check(m, "vars")
		var je *Error
		if !errors.As(err, &je) || je.Path != "vars.bad.x" {
			t.Fatalf("Check = %v; want the path vars.bad.x", err)
		}
	}
}
