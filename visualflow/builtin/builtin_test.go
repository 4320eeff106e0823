package builtin

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

type nodeCase struct {
	name    string
	typ     string
	data    map[string]any
	vars    map[string]any
	in      map[string]any
	want    any
	wantErr string
}

func runNodeCases(t *testing.T, cases []nodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.typ+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			fn, ok := Lookup(tc.typ)
			if !ok {
				t.Fatalf("Lookup(%q) not found", tc.typ)
			}
			env := &Env{
				Vars: tc.vars, NodeID: "n1", NodeType: tc.typ, Data: tc.data,
				Now:  func() time.Time { return time.Date(2026, 6, 14, 1, 1, 40, 123456000, time.UTC) },
				Rand: rand.New(rand.NewPCG(1, 2)),
			}
			in := tc.in
			if in == nil {
				in = map[string]any{}
			}
			got, err := fn(env, in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// pins builds a data.inputs pin list.
func pins(ids ...string) map[string]any {
	list := []any{map[string]any{"id": "exec-in", "type": "execution"}}
	for _, id := range ids {
		list = append(list, map[string]any{"id": id, "type": "any"})
	}
	return map[string]any{"inputs": list}
}

type obj = map[string]any
type arr = []any

func TestLogicNodes(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "eq int float", typ: "compare", in: obj{"a": int64(1), "b": 1.0}, want: true},
		{name: "eq bool int", typ: "compare", in: obj{"a": true, "b": json.Number("1")}, want: true},
		{name: "eq str int", typ: "compare", in: obj{"a": "1", "b": int64(1), "op": "=="}, want: false},
		{name: "ne", typ: "compare", in: obj{"a": "x", "b": "y", "op": "!="}, want: true},
		{name: "missing eq", typ: "compare", in: obj{"b": nil}, want: true},
		{name: "deep eq", typ: "compare", in: obj{"a": obj{"k": arr{int64(1)}}, "b": obj{"k": arr{1.0}}}, want: true},
		{name: "lt num", typ: "compare", in: obj{"a": int64(1), "b": 1.5, "op": "<"}, want: true},
		{name: "gt str num Q12", typ: "compare", in: obj{"a": "hello", "b": int64(0), "op": ">"}, want: false},
		{name: "le null", typ: "compare", in: obj{"a": nil, "b": nil, "op": "<="}, want: false},
		{name: "ge strings", typ: "compare", in: obj{"a": "b", "b": "a", "op": ">="}, want: true},
		{name: "lists", typ: "compare", in: obj{"a": arr{int64(1), int64(2)}, "b": arr{int64(1), int64(3)}, "op": "<"}, want: true},
		{name: "bad op", typ: "compare", in: obj{"op": "=~"}, wantErr: "Unknown comparison operator: =~"},
		{name: "null op", typ: "compare", in: obj{"op": nil}, wantErr: "Unknown comparison operator: None"},
		{name: "missing", typ: "not", want: true},
		{name: "false string", typ: "not", in: obj{"value": "false"}, want: false},
		{name: "zero", typ: "not", in: obj{"value": 0.0}, want: true},
		{name: "both", typ: "and", in: obj{"a": "x", "b": arr{int64(1)}}, want: true},
		{name: "missing b", typ: "and", in: obj{"a": true}, want: false},
		{name: "one", typ: "or", in: obj{"a": obj{}, "b": int64(2)}, want: true},
		{name: "none", typ: "or", want: false},
		{name: "pin order", typ: "coalesce", data: pins("c", "a", "b"), in: obj{"a": "A", "b": nil, "c": nil}, want: "A"},
		{name: "hidden order", typ: "coalesce", in: obj{"_pin_order": arr{"b", "a"}, "a": "A", "b": "B"}, want: "B"},
		{name: "default order", typ: "coalesce", in: obj{"a": nil, "b": int64(0), "z": "Z"}, want: int64(0)},
		{name: "all null", typ: "coalesce", in: obj{"a": nil}, want: nil},
	})
}

// compare `<=` and `>=` hold for equal operands (Python ordering), and
// `<`/`>` do not.
func TestCompareOrderingOperatorsOnEqualOperands(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "le equal", typ: "compare", in: obj{"a": int64(2), "b": 2.0, "op": "<="}, want: true},
		{name: "ge equal", typ: "compare", in: obj{"a": "x", "b": "x", "op": ">="}, want: true},
		{name: "lt equal", typ: "compare", in: obj{"a": int64(2), "b": int64(2), "op": "<"}, want: false},
		{name: "gt equal", typ: "compare", in: obj{"a": int64(2), "b": int64(2), "op": ">"}, want: false},
	})
}

func TestMathNodes(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "ints give float", typ: "add", in: obj{"a": int64(1), "b": int64(1)}, want: 2.0},
		{name: "strings", typ: "add", in: obj{"a": " 2 ", "b": "1e3"}, want: 1002.0},
		{name: "missing", typ: "add", in: obj{"a": true}, want: 1.0},
		{name: "bad", typ: "add", in: obj{"a": "abc"}, wantErr: "could not convert string to float: 'abc'"},
		{name: "null", typ: "add", in: obj{"a": nil}, wantErr: "not 'NoneType'"},
		{name: "basic", typ: "subtract", in: obj{"a": int64(5), "b": 7.5}, want: -2.5},
		{name: "basic", typ: "multiply", in: obj{"a": "3", "b": json.Number("4")}, want: 12.0},
		{name: "basic", typ: "divide", in: obj{"a": int64(1), "b": int64(4)}, want: 0.25},
		{name: "missing b", typ: "divide", in: obj{"a": int64(3)}, want: 3.0},
		{name: "zero", typ: "divide", in: obj{"a": int64(1), "b": 0.0}, wantErr: "Division by zero"},
		{name: "neg", typ: "modulo", in: obj{"a": int64(-1), "b": int64(3)}, want: 2.0},
		{name: "neg b", typ: "modulo", in: obj{"a": int64(1), "b": int64(-3)}, want: -2.0},
		{name: "zero", typ: "modulo", in: obj{"a": int64(1), "b": int64(0)}, wantErr: "Modulo by zero"},
		{name: "basic", typ: "power", in: obj{"base": int64(2), "exp": int64(10)}, want: 1024.0},
		{name: "defaults", typ: "power", want: 0.0},
		{name: "zero neg", typ: "power", in: obj{"base": int64(0), "exp": int64(-1)}, wantErr: "power:"},
		{name: "complex", typ: "power", in: obj{"base": int64(-8), "exp": 0.5}, wantErr: "power:"},
		{name: "neg", typ: "abs", in: obj{"value": "-3"}, want: 3.0},
		{name: "half even", typ: "round", in: obj{"value": 2.5}, want: 2.0},
		{name: "binary", typ: "round", in: obj{"value": 2.675, "decimals": int64(2)}, want: 2.67},
		{name: "str decimals", typ: "round", in: obj{"value": 1.23456, "decimals": "3"}, want: 1.235},
		{name: "float decimals truncated", typ: "round", in: obj{"value": 1.23456, "decimals": 1.9}, want: 1.2},
		{name: "bad decimals", typ: "round", in: obj{"value": 1.0, "decimals": "2.5"}, wantErr: "invalid literal for int()"},
		{name: "equal bounds", typ: "random_int", in: obj{"min": "7.9", "max": int64(7)}, want: int64(7)},
		{name: "equal bounds", typ: "random_float", in: obj{"min": 1.5, "max": 1.5}, want: 1.5},
	})
}

func TestRandomNodesInRange(t *testing.T) {
	t.Parallel()
	ri, _ := Lookup("random_int")
	rf, _ := Lookup("random_float")
	env := &Env{Rand: rand.New(rand.NewPCG(3, 4))}
	for range 200 {
		v, err := ri(env, obj{"min": int64(10), "max": int64(1)})
		if n, ok := v.(int64); err != nil || !ok || n < 1 || n > 10 {
			t.Fatalf("random_int = %#v, %v", v, err)
		}
		f, err := rf(env, obj{"min": "x"})
		if x, ok := f.(float64); err != nil || !ok || x < 0 || x >= 1 {
			t.Fatalf("random_float = %#v, %v", f, err)
		}
	}
}

func TestStringNodes(t *testing.T) {
	t.Parallel()
	concatData := pins("a", "b", "c")
	concatData["concatConfig"] = obj{"separator": `\n`}
	runNodeCases(t, []nodeCase{
		{name: "pins and separator", typ: "concat", data: concatData, in: obj{"a": "x", "c": int64(3), "b": nil}, want: "x\n\n3"},
		{name: "absent pins skipped", typ: "concat", data: pins("a", "b", "c"), in: obj{"c": 1.0, "a": true}, want: "True 1.0"},
		{name: "no metadata", typ: "concat", in: obj{"b": "B", "a": "A", "zz": "Z", "_x": "hidden"}, want: "A B Z"},
		{name: "defaults", typ: "split", in: obj{"text": " a, b ,,c, "}, want: arr{"a", "b", "c"}},
		{name: "no trim", typ: "split", in: obj{"text": "a; b", "delimiter": ";", "trim": false}, want: arr{"a", " b"}},
		{name: "keep empty", typ: "split", in: obj{"text": "a,,b", "drop_empty": 0.0}, want: arr{"a", "", "b"}},
		{name: "maxsplit", typ: "split", in: obj{"text": "a b c", "delimiter": " ", "maxsplit": int64(1)}, want: arr{"a", "b c"}},
		{name: "escaped delimiter", typ: "split", in: obj{"text": "l1\nl2", "delimiter": `\n`}, want: arr{"l1", "l2"}},
		{name: "empty delimiter", typ: "split", in: obj{"text": "abc", "delimiter": nil}, want: arr{"abc"}},
		{name: "null text", typ: "split", in: obj{"text": nil}, want: arr{}},
		{name: "items", typ: "join", in: obj{"items": arr{"a", int64(1), nil, 2.0, true}}, want: "a,1,,2.0,True"},
		{name: "null delimiter Q7", typ: "join", in: obj{"items": arr{"a", "b"}, "delimiter": nil}, want: "aNoneb"},
		{name: "scalar items", typ: "join", in: obj{"items": "solo", "delimiter": `\t`}, want: "solo"},
		{name: "values", typ: "format", in: obj{"template": "{name} is {age:03d}", "values": obj{"name": "Ada", "age": int64(7)}}, want: "Ada is 007"},
		{name: "not object", typ: "format", in: obj{"template": "{x}", "values": "nope"}, want: "{x}"},
		{name: "missing values", typ: "format", in: obj{"template": "{x}"}, wantErr: "format:"},
		{name: "braces", typ: "format", in: obj{"template": "{{x}}", "values": obj{}}, want: "{x}"},
		{name: "upper", typ: "uppercase", in: obj{"text": "straße"}, want: "STRASSE"},
		{name: "null Q7", typ: "uppercase", in: obj{"text": nil}, want: "NONE"},
		{name: "lower", typ: "lowercase", in: obj{"text": "ÀB"}, want: "àb"},
		{name: "trim", typ: "trim", in: obj{"text": "\u3000 hi \n"}, want: "hi"},
		{name: "missing", typ: "trim", want: ""},
		{name: "non-ascii", typ: "substring", in: obj{"text": "héllo wörld", "start": int64(6), "end": int64(9)}, want: "wör"},
		{name: "negative", typ: "substring", in: obj{"text": "日本語です", "start": int64(-2)}, want: "です"},
		{name: "null end", typ: "substring", in: obj{"text": "abc", "start": "1", "end": nil}, want: "bc"},
		{name: "bad start", typ: "substring", in: obj{"text": "abc", "start": "x"}, wantErr: "substring: input 'start'"},
		{name: "code points", typ: "length", in: obj{"text": "héllo"}, want: int64(5)},
		{name: "null Q7", typ: "length", in: obj{"text": nil}, want: int64(4)},
		{name: "missing", typ: "length", want: int64(0)},
		{name: "number", typ: "length", in: obj{"text": 1.5}, want: int64(3)},
		{name: "null", typ: "is_empty_string", in: obj{"text": nil}, want: true},
		{name: "space", typ: "is_empty_string", in: obj{"text": " "}, want: false},
		{name: "found", typ: "contains", in: obj{"text": "hello", "pattern": "ell"}, want: true},
		{name: "empty pattern", typ: "contains", in: obj{"text": "hello", "pattern": ""}, want: false},
		{name: "number", typ: "contains", in: obj{"text": int64(123), "pattern": int64(2)}, want: true},
		{name: "all", typ: "replace", in: obj{"text": "a-a-a", "pattern": "-", "replacement": "+"}, want: "a+a+a"},
		{name: "first", typ: "replace", in: obj{"text": "a-a-a", "pattern": "-", "replacement": "+", "mode": " First "}, want: "a+a-a"},
		{name: "count", typ: "replace", in: obj{"text": "a-a-a-a", "pattern": "-", "mode": int64(2)}, want: "aaa-a"},
		{name: "negative count", typ: "replace", in: obj{"text": "a-a", "pattern": "-", "mode": "-1"}, want: "aa"},
		{name: "unknown mode", typ: "replace", in: obj{"text": "a-a", "pattern": "-", "mode": "weird"}, want: "aa"},
		{name: "null pattern", typ: "replace", in: obj{"text": "a-a", "pattern": nil}, want: "a-a"},
	})
}

// split with maxsplit 0 splits nothing ("at most maxsplit times when it
// is an int >= 0"), as Python's str.split(sep, 0).
func TestSplitMaxsplitZeroDoesNotSplit(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "maxsplit 0", typ: "split", in: obj{"text": "a,b,c", "maxsplit": int64(0)}, want: arr{"a,b,c"}},
		{name: "maxsplit 1", typ: "split", in: obj{"text": "a,b,c", "maxsplit": int64(1)}, want: arr{"a", "b,c"}},
		{name: "maxsplit -1", typ: "split", in: obj{"text": "a,b,c", "maxsplit": int64(-1)}, want: arr{"a", "b", "c"}},
	})
}

func TestStringTemplateNode(t *testing.T) {
	t.Parallel()
	vars := obj{"user": obj{"name": " Ada ", "tags": arr{"x", nil, int64(2)}}, "items": arr{obj{"id": int64(1)}}, "n": nil}
	runNodeCases(t, []nodeCase{
		{name: "path", typ: "string_template", in: obj{"template": "Hi {{ user.name | trim | upper }}!", "vars": vars}, want: "Hi ADA!"},
		{name: "brackets", typ: "string_template", in: obj{"template": "{{items[0].id}}/{{items.0.id}}", "vars": vars}, want: "1/1"},
		{name: "json", typ: "string_template", in: obj{"template": "{{ items | json }}", "vars": vars}, want: `[{"id": 1}]`},
		{name: "join", typ: "string_template", in: obj{"template": "{{ user.tags | join(' / ') }}|{{user.tags|join}}", "vars": vars}, want: "x /  / 2|x, , 2"},
		{name: "missing and null", typ: "string_template", in: obj{"template": "[{{nope}}][{{ n }}]", "vars": vars}, want: "[][]"},
		{name: "unknown filter", typ: "string_template", in: obj{"template": "{{ user.name | wat | lower }}", "vars": vars}, want: " ada "},
		{name: "vars not object", typ: "string_template", in: obj{"template": "{{x}}", "vars": "s"}, want: ""},
		{name: "null template", typ: "string_template", in: obj{"template": nil}, want: ""},
	})
}

func TestVariableNodes(t *testing.T) {
	t.Parallel()
	vars := obj{"prompt": "hi", "cfg": obj{"list": arr{"a", obj{"deep": true}}}, "_private": int64(1),
		"flag": true, "count": json.Number("3"), "context": obj{"task": int64(5), "messages": "solo"}}
	runNodeCases(t, []nodeCase{
		{name: "simple", typ: "get_var", vars: vars, in: obj{"name": "prompt"}, want: obj{"value": "hi"}},
		{name: "dotted index", typ: "get_var", vars: vars, in: obj{"name": "cfg.list.1.deep"}, want: obj{"value": true}},
		{name: "no brackets", typ: "get_var", vars: vars, in: obj{"name": "cfg.list[1]"}, want: obj{"value": nil}},
		{name: "private", typ: "get_var", vars: vars, in: obj{"name": " _private "}, want: obj{"value": int64(1)}},
		{name: "empty", typ: "get_var", vars: vars, in: obj{"name": ""}, want: obj{"value": nil}},
		{name: "nil vars", typ: "get_var", in: obj{"name": "x"}, want: obj{"value": nil}},
		{name: "number ok", typ: "var_decl", vars: vars, data: obj{"literalValue": obj{"name": "count", "type": "number", "default": int64(9)}}, want: obj{"name": "count", "value": int64(3)}},
		{name: "type mismatch default", typ: "var_decl", vars: vars, data: obj{"literalValue": obj{"name": "flag", "type": "number", "default": 2.5}}, want: obj{"name": "flag", "value": 2.5}},
		{name: "zero value", typ: "var_decl", vars: vars, data: obj{"literalValue": obj{"name": "nope", "type": "array", "default": "bad"}}, want: obj{"name": "nope", "value": arr{}}},
		{name: "any", typ: "var_decl", vars: vars, in: obj{"_literalValue": obj{"name": "cfg.list.0", "type": "weird"}}, want: obj{"name": "cfg.list.0", "value": "a"}},
		{name: "string name", typ: "bool_var", vars: vars, data: obj{"literalValue": "flag"}, want: obj{"name": "flag", "value": true}},
		{name: "non bool var", typ: "bool_var", vars: vars, data: obj{"literalValue": obj{"name": "prompt", "default": true}}, want: obj{"name": "prompt", "value": true}},
		{name: "bad default", typ: "bool_var", vars: vars, data: obj{"literalValue": obj{"name": "nope", "default": "yes"}}, want: obj{"name": "nope", "value": false}},
		// The configured names (and var_decl's type) are stripped, as the
		// reference's .strip(): the output names the var without the
		// padding, and a padded type is still the type.
		{name: "padded string name", typ: "bool_var", vars: vars, data: obj{"literalValue": " flag\t"}, want: obj{"name": "flag", "value": true}},
		{name: "padded object name", typ: "bool_var", vars: vars, data: obj{"literalValue": obj{"name": "  flag ", "default": false}}, want: obj{"name": "flag", "value": true}},
		{name: "padded decl", typ: "var_decl", vars: vars, data: obj{"literalValue": obj{"name": " count\n", "type": " number ", "default": int64(9)}}, want: obj{"name": "count", "value": int64(3)}},
		{name: "context", typ: "get_context", vars: vars, want: obj{"context": obj{"task": int64(5), "messages": "solo"}, "task": "5", "messages": arr{"solo"}}},
		{name: "no context", typ: "get_context", want: obj{"context": obj{}, "task": "", "messages": arr{}}},
	})
}

func TestAddMessageNode(t *testing.T) {
	t.Parallel()
	fn, _ := Lookup("add_message")
	env := &Env{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }, Rand: rand.New(rand.NewPCG(1, 1))}
	got, err := fn(env, obj{"content": int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	msg := got.(obj)["message"].(obj)
	if msg["role"] != "user" || msg["content"] != "5" || msg["timestamp"] != "2026-01-02T03:04:05+00:00" {
		t.Fatalf("message = %#v", msg)
	}
	id, _ := msg["metadata"].(obj)["message_id"].(string)
	if !strings.HasPrefix(id, "msg_") || len(id) != 36 {
		t.Fatalf("message_id = %q", id)
	}
}

func TestObjectNodes(t *testing.T) {
	t.Parallel()
	nested := obj{"a": obj{"b": arr{obj{"c": int64(1)}}}}
	breakData := obj{"breakConfig": obj{"selectedPaths": arr{"continue", "tasks.0", "missing.x"}}}
	schemaAdd := obj{"literalValue": obj{"properties": obj{"x": obj{"type": "string"}, "keep": obj{"type": "number"}},
		"required": arr{"x", "keep"}, "$defs": obj{"D": obj{}}}}
	runNodeCases(t, []nodeCase{
		{name: "path", typ: "get", in: obj{"object": nested, "key": "a.b[0].c"}, want: obj{"value": int64(1)}},
		{name: "default", typ: "get", in: obj{"object": nested, "key": "a.zz", "default": "d"}, want: obj{"value": "d"}},
		{name: "empty key", typ: "get", in: obj{"object": nested, "default": int64(0)}, want: obj{"value": int64(0)}},
		{name: "nested create", typ: "set", in: obj{"object": obj{"a": "scalar", "k": int64(1)}, "key": "a.b", "value": true}, want: obj{"a": obj{"b": true}, "k": int64(1)}},
		{name: "missing object", typ: "set", in: obj{"key": "x", "value": int64(2)}, want: obj{"x": int64(2)}},
		{name: "null object", typ: "set", in: obj{"object": nil, "key": "x"}, wantErr: "set: input 'object' must be an object"},
		{name: "b wins", typ: "merge", in: obj{"a": obj{"x": int64(1), "y": int64(1)}, "b": obj{"y": int64(2)}}, want: obj{"x": int64(1), "y": int64(2)}},
		{name: "null", typ: "merge", in: obj{"a": nil}, wantErr: "merge: input 'a'"},
		{name: "skip hidden", typ: "make_object", in: obj{"value": int64(1), "_pin_order": arr{"value"}, "_literalValue": "x"}, want: obj{"value": int64(1)}},
		{name: "object", typ: "break_object", data: breakData, in: obj{"object": obj{"continue": false, "tasks": arr{"t1"}}}, want: obj{"continue": false, "tasks.0": "t1", "missing.x": nil}},
		{name: "json string", typ: "break_object", data: breakData, in: obj{"object": "```json\n{\"continue\": true, \"tasks\": []}\n```"}, want: obj{"continue": true, "tasks.0": nil, "missing.x": nil}},
		{name: "bad string", typ: "break_object", data: breakData, in: obj{"object": "not json"}, want: obj{"continue": nil, "tasks.0": nil, "missing.x": nil}},
		{name: "add fields", typ: "edit_json_schema", data: schemaAdd,
			in: obj{"schema": obj{"properties": obj{"keep": obj{"type": "string"}}, "required": arr{"keep", "keep"}}},
			want: obj{"schema": obj{"type": "object", "properties": obj{"keep": obj{"type": "string"}, "x": obj{"type": "string"}},
				"required": arr{"keep", "x"}, "$defs": obj{"D": obj{}}}}},
		{name: "empty base", typ: "edit_json_schema", data: obj{"literalValue": obj{"type": "object"}}, want: obj{"schema": obj{"type": "object"}}},
		{name: "no additions", typ: "edit_json_schema", in: obj{"schema": obj{"type": "array"}}, want: obj{"schema": obj{"type": "array"}}},
	})
}

func TestArrayNodes(t *testing.T) {
	t.Parallel()
	people := arr{obj{"n": "a", "age": int64(1)}, obj{"n": "b", "age": 1.0}, obj{"n": "c"}, "x"}
	runNodeCases(t, []nodeCase{
		{name: "order", typ: "make_array", data: pins("b", "a", "c"), in: obj{"a": "A", "b": arr{"B"}, "c": nil}, want: arr{arr{"B"}, "A"}},
		{name: "default order", typ: "make_array", in: obj{"b": int64(2), "a": int64(1), "c": int64(3)}, want: arr{int64(1), int64(2)}},
		{name: "splice", typ: "array_concat", data: pins("a", "b"), in: obj{"a": arr{int64(1), arr{int64(2)}}, "b": "x"}, want: arr{int64(1), arr{int64(2)}, "x"}},
		{name: "map", typ: "array_map", in: obj{"items": people, "key": "n"}, want: arr{"a", "b", "c", "x"}},
		{name: "missing items", typ: "array_map", want: arr{}},
		{name: "null items", typ: "array_map", in: obj{"items": nil}, wantErr: "not iterable"},
		{name: "filter", typ: "array_filter", in: obj{"items": people, "key": "age", "value": true}, want: arr{people[0], people[1]}},
		{name: "filter scalar", typ: "array_filter", in: obj{"items": arr{int64(1), "1", 1.0}, "value": int64(1)}, want: arr{int64(1), 1.0}},
		{name: "list", typ: "array_length", in: obj{"array": arr{nil, nil}}, want: int64(2)},
		{name: "not list", typ: "array_length", in: obj{"array": "abc"}, want: int64(0)},
		{name: "null array", typ: "array_append", in: obj{"array": nil, "item": nil}, want: arr{nil}},
		{name: "scalar array", typ: "array_append", in: obj{"array": "a", "item": "b"}, want: arr{"a", "b"}},
		{name: "typed", typ: "array_dedup", in: obj{"array": arr{int64(1), 1.0, true, "1", int64(1), obj{"a": int64(1)}, obj{"a": int64(1)}}},
			want: arr{int64(1), 1.0, true, "1", obj{"a": int64(1)}}},
		{name: "key", typ: "array_dedup", in: obj{"array": arr{obj{"id": int64(1), "v": "a"}, obj{"id": int64(1), "v": "b"}, obj{"v": "c"}}, "key": "id"},
			want: arr{obj{"id": int64(1), "v": "a"}, obj{"v": "c"}}},
		{name: "not list", typ: "array_dedup", in: obj{"array": "x"}, want: arr{}},
		{name: "negative", typ: "get_element", in: obj{"array": arr{"a", "b"}, "index": int64(-1)}, want: obj{"result": "b", "found": true}},
		{name: "string index", typ: "get_element", in: obj{"array": arr{"a", "b"}, "index": " 1.7 "}, want: obj{"result": "b", "found": true}},
		{name: "bool index", typ: "get_element", in: obj{"array": arr{"a", "b"}, "index": true}, want: obj{"result": "a", "found": true}},
		{name: "out of range", typ: "get_element", in: obj{"array": arr{"a"}, "index": int64(3), "default": "d"}, want: obj{"result": "d", "found": false}},
		{name: "empty", typ: "get_random_element", in: obj{"array": arr{}, "default": int64(0)}, want: obj{"result": int64(0), "found": false}},
		{name: "single", typ: "get_random_element", in: obj{"array": arr{"only"}}, want: obj{"result": "only", "found": true}},
		{name: "non-empty", typ: "has_tools", in: obj{"array": arr{obj{}}}, want: true},
		{name: "null", typ: "has_tools", in: obj{"array": nil}, want: false},
	})
}

func TestJSONNodes(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "strict", typ: "parse_json", in: obj{"text": `{"a": [1, 2.5]}`}, want: obj{"a": arr{int64(1), 2.5}}},
		{name: "Q1 result key", typ: "parse_json", in: obj{"text": `{"result": 5, "x": 1}`}, want: obj{"result": int64(5), "x": int64(1)}},
		{name: "fence", typ: "parse_json", in: obj{"text": "```json\n[1]\n```"}, want: arr{int64(1)}},
		{name: "embedded", typ: "parse_json", in: obj{"text": `Sure! {"ok": true} hope this helps`}, want: obj{"ok": true}},
		{name: "python literal", typ: "parse_json", in: obj{"text": `{'a': None, 'b': (1, 'x')}`}, want: obj{"a": nil, "b": arr{int64(1), "x"}}},
		{name: "scalar wrapped", typ: "parse_json", in: obj{"text": "42"}, want: obj{"value": int64(42)}},
		{name: "scalar unwrapped", typ: "parse_json", in: obj{"text": `"s"`, "wrap_scalar": false}, want: "s"},
		{name: "passthrough", typ: "parse_json", in: obj{"text": arr{int64(1)}}, want: arr{int64(1)}},
		{name: "number input", typ: "parse_json", in: obj{"text": 2.5}, want: obj{"value": 2.5}},
		{name: "null", typ: "parse_json", in: obj{"text": nil}, wantErr: "parse_json requires a non-empty 'text' input."},
		{name: "blank", typ: "parse_json", in: obj{"text": "  "}, wantErr: "parse_json requires a non-empty 'text' input."},
		{name: "json null quirk", typ: "parse_json", in: obj{"text": "null"}, wantErr: "Invalid JSON:"},
		{name: "invalid", typ: "parse_json", in: obj{"text": "nope"}, wantErr: "Invalid JSON:"},
		{name: "beautify default", typ: "stringify_json", in: obj{"value": obj{"b": 1.0, "a": arr{int64(1)}}}, want: "{\n  \"a\": [\n    1\n  ],\n  \"b\": 1.0\n}"},
		{name: "minified", typ: "stringify_json", in: obj{"value": obj{"a": "é"}, "mode": "MINIFIED"}, want: `{"a":"é"}`},
		{name: "none", typ: "stringify_json", in: obj{"value": arr{int64(1), obj{"k": nil}}, "mode": "none"}, want: `[1, {"k": null}]`},
		{name: "indent 0", typ: "stringify_json", in: obj{"value": arr{int64(1), int64(2)}, "indent": int64(0)}, want: `[1,2]`},
		{name: "indent 4", typ: "stringify_json", in: obj{"value": arr{int64(1)}, "indent": "4"}, want: "[\n    1\n]"},
		{name: "string parsed", typ: "stringify_json", in: obj{"value": `{"x":1}`, "mode": "minified"}, want: `{"x":1}`},
		{name: "string kept", typ: "stringify_json", in: obj{"value": "hello", "mode": "minified"}, want: `"hello"`},
		{name: "unknown mode", typ: "stringify_json", in: obj{"value": arr{}, "mode": "pretty"}, want: `[]`},
	})
}

func TestAgentNodes(t *testing.T) {
	t.Parallel()
	toolData := obj{"toolParametersConfig": obj{"tool": " read_file "}, "inputs": arr{obj{"id": "path", "type": "string"}, obj{"id": "limit", "type": "number"}}}
	results := arr{
		obj{"name": "read_file", "success": true, "arguments": obj{"path": "a.txt"}, "output": "line1\n\nline2"},
		obj{"name": "run", "success": false, "error": "boom", "output": nil},
		obj{"tool": "search", "output": obj{"rendered": " found 3 "}},
		obj{"success": true, "output": obj{"query": "q", "hits": arr{int64(1)}}},
		"not an object",
	}
	runNodeCases(t, []nodeCase{
		{name: "build", typ: "make_context", in: obj{"task": int64(1), "messages": nil, "context_extra": obj{"task": "x", "k": "v"}}, want: obj{"context": obj{"task": "1", "messages": arr{}, "k": "v"}}},
		{name: "defaults", typ: "make_meta", want: obj{"meta": obj{"schema": "abstractcode.agent.v1.meta", "version": int64(1)}}},
		{name: "fields", typ: "make_meta", in: obj{"extra": obj{"schema": "lost", "x": int64(1)}, "version": "2.9", "provider": " openai ", "model": int64(4),
			"iterations": "3", "tool_calls": true, "gen_time": 1.5, "ttft_ms": false, "trace": "t1", "trace_id": "t2", "warnings": arr{"w", " ", int64(1)}, "debug": "d"},
			want: obj{"meta": obj{"schema": "abstractcode.agent.v1.meta", "version": int64(2), "x": int64(1), "provider": "openai", "model": "4",
				"iterations": int64(3), "gen_time": 1.5, "trace": obj{"trace_id": "t2"}, "warnings": arr{"w", "1"}, "debug": "d"}}},
		{name: "build", typ: "make_scratchpad", in: obj{"sub_run_id": " r1 ", "task": nil, "steps": "s", "node_traces": arr{}},
			want: obj{"scratchpad": obj{"sub_run_id": "r1", "task": "", "messages": arr{}, "steps": arr{"s"}, "tool_calls": arr{}, "tool_results": arr{}, "node_traces": obj{}}}},
		{name: "digest", typ: "format_tool_results", in: obj{"tool_results": results},
			want: "- read_file(a.txt) [SUCCESS] : line1 line2\n- run() [FAILURE] : boom\n- search(found 3) [DONE] : found 3\n- tool([1]) [SUCCESS] : {\"hits\":[1],\"query\":\"q\"}"},
		{name: "alias and empty", typ: "format_tool_results", in: obj{"results": nil}, want: ""},
		{name: "params", typ: "tool_parameters", data: toolData, in: obj{"path": "a.txt"},
			want: obj{"path": "a.txt", "limit": nil, "tool_call": obj{"name": "read_file", "arguments": obj{"path": "a.txt"}}}},
		{name: "dedup", typ: "tools_allowlist", data: obj{"literalValue": arr{" a ", "b", "a", "", int64(1)}}, want: obj{"tools": arr{"a", "b"}}},
		{name: "not list", typ: "tools_allowlist", data: obj{"literalValue": "a"}, want: obj{"tools": arr{}}},
	})
}

func TestInternalAndLiteralNodes(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "select", typ: "path_mux", in: obj{"select": "1.0", "in0": "a", "in1": nil, "fallback": "f"}, want: obj{"out": nil}},
		{name: "fallback", typ: "path_mux", in: obj{"select": int64(2), "in0": "a", "fallback": "f"}, want: obj{"out": "f"}},
		{name: "bool", typ: "path_mux", in: obj{"select": true, "in1": "b"}, want: obj{"out": "b"}},
		{name: "nothing", typ: "path_mux", in: obj{"select": nil}, want: obj{"out": nil}},
		{name: "verbatim", typ: "literal_number", data: obj{"literalValue": "5"}, want: obj{"value": "5"}},
		{name: "number kind", typ: "literal_number", data: obj{"literalValue": json.Number("5")}, want: obj{"value": int64(5)}},
		{name: "missing", typ: "literal_string", want: obj{"value": nil}},
		{name: "hidden", typ: "literal_json", in: obj{"_literalValue": obj{"a": int64(1)}}, want: obj{"value": obj{"a": int64(1)}}},
		{name: "bool", typ: "literal_boolean", data: obj{"literalValue": true}, want: obj{"value": true}},
		{name: "array", typ: "literal_array", data: obj{"literalValue": arr{}}, want: obj{"value": arr{}}},
		{name: "schema", typ: "json_schema", data: obj{"literalValue": obj{"type": "object"}}, want: obj{"value": obj{"type": "object"}}},
	})
}

func TestSystemDatetimeNode(t *testing.T) {
	t.Parallel()
	fn, _ := Lookup("system_datetime")
	zone := time.FixedZone("XST", -(3*3600 + 30*60))
	env := &Env{Now: func() time.Time { return time.Date(2026, 6, 14, 1, 1, 40, 0, zone) }, Zone: zone}
	got, err := fn(env, obj{})
	if err != nil {
		t.Fatal(err)
	}
	m := got.(obj)
	if m["iso"] != "2026-06-14T01:01:40-03:30" || m["timezone"] != "XST" || m["utc_offset_minutes"] != int64(-210) {
		t.Fatalf("system_datetime = %#v", m)
	}
	if _, ok := m["locale"].(string); !ok {
		t.Fatalf("locale = %#v", m["locale"])
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	types := Types()
	if !slices.IsSorted(types) {
		t.Fatal("Types not sorted")
	}
	for _, typ := range []string{"compare", "concat", "get_var", "break_object", "make_array", "path_mux", "json_schema"} {
		if !slices.Contains(types, typ) {
			t.Errorf("Types missing %q", typ)
		}
	}
	for _, typ := range []string{"set_var", "llm_call", "on_flow_start", "provider_catalog"} {
		if _, ok := Lookup(typ); ok {
			t.Errorf("Lookup(%q) should not be implemented here", typ)
		}
	}
	if !IsLiteral("json_schema") || IsLiteral("tools_allowlist") {
		t.Error("IsLiteral wrong")
	}
}

func TestInputsNotMutated(t *testing.T) {
	t.Parallel()
	fn, _ := Lookup("set")
	inner := obj{"x": int64(1)}
	in := obj{"object": obj{"inner": inner}, "key": "inner.x", "value": int64(2)}
	if _, err := fn(&Env{}, in); err != nil {
		t.Fatal(err)
	}
	if inner["x"] != int64(1) {
		t.Fatal("set mutated its input (quirk Q8 must not leak in Go)")
	}
}
