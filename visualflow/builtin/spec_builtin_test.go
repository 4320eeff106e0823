package builtin

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// newTestRand is a seeded source for the random nodes.
func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(5, 6)) }

// Spec §6.4: subtract and multiply read a missing pin as 0, modulo and
// divide a missing a as 0 and a missing b as 1, abs a missing value as 0,
// round a missing decimals as 0; every result is a float.
func TestSpec64_MathMissingPinDefaults(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "missing both", typ: "subtract", want: 0.0},
		{name: "missing b", typ: "subtract", in: obj{"a": int64(4)}, want: 4.0},
		{name: "missing b", typ: "multiply", in: obj{"a": int64(4)}, want: 0.0},
		{name: "missing a", typ: "divide", in: obj{"b": int64(4)}, want: 0.0},
		{name: "missing both", typ: "modulo", want: 0.0},
		{name: "missing b", typ: "modulo", in: obj{"a": 2.5}, want: 0.5},
		{name: "missing exp", typ: "power", in: obj{"base": int64(3)}, want: 3.0},
		{name: "missing", typ: "abs", want: 0.0},
		{name: "missing decimals", typ: "round", in: obj{"value": 3.5}, want: 4.0},
	})
}

// Spec §6.4: random_int reads its bounds as int(float(x)) and falls back
// to 0 / 100 when a bound is unparsable, so an unparsable max with min 100
// can only give 100.
func TestSpec64_RandomIntUnparsableBoundsFallBack(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "max falls back to 100", typ: "random_int", in: obj{"min": "100", "max": "abc"}, want: int64(100)},
		{name: "min falls back to 0, swapped", typ: "random_int", in: obj{"min": nil, "max": int64(0)}, want: int64(0)},
	})
}

// Spec §6.5: concat turns a non-object input into str(input); split's trim
// and drop_empty flags use truthiness, so the string "false" still trims and
// drops; join reads null items as []; format refuses a positional {}.
func TestSpec65_StringNodeEdgeCases(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "false string still trims and drops", typ: "split", in: obj{"text": " a ,, b", "trim": "false", "drop_empty": "false"}, want: arr{"a", "b"}},
		{name: "null items", typ: "join", in: obj{"items": nil}, want: ""},
		{name: "positional field", typ: "format", in: obj{"template": "{} x", "values": obj{"a": int64(1)}}, wantErr: "format"},
		{name: "missing name", typ: "format", in: obj{"template": "{b}", "values": obj{"a": int64(1)}}, wantErr: "format"},
	})
}

// Spec §6.5: substring's start defaults to 0 and out-of-range indexes
// clamp as a Python slice; contains reads a null text as "" and a null
// pattern as false; replace reads a null replacement as "" and the modes
// once, 1, * and global.
func TestSpec65_SubstringContainsReplaceEdges(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "start default", typ: "substring", in: obj{"text": "abcdef", "end": int64(2)}, want: "ab"},
		{name: "out of range clamps", typ: "substring", in: obj{"text": "abc", "start": int64(-10), "end": int64(99)}, want: "abc"},
		{name: "start past end", typ: "substring", in: obj{"text": "abc", "start": int64(5)}, want: ""},
		{name: "null text", typ: "contains", in: obj{"text": nil, "pattern": "None"}, want: false},
		{name: "null pattern", typ: "contains", in: obj{"text": "None", "pattern": nil}, want: false},
		{name: "null replacement", typ: "replace", in: obj{"text": "a-b-c", "pattern": "-", "replacement": nil}, want: "abc"},
		{name: "once", typ: "replace", in: obj{"text": "a-b-c", "pattern": "-", "replacement": "+", "mode": "ONCE"}, want: "a+b-c"},
		{name: "1", typ: "replace", in: obj{"text": "a-b-c", "pattern": "-", "replacement": "+", "mode": "1"}, want: "a+b-c"},
		{name: "star", typ: "replace", in: obj{"text": "a-b-c", "pattern": "-", "replacement": "+", "mode": "*"}, want: "a+b+c"},
		{name: "global", typ: "replace", in: obj{"text": "a-b-c", "pattern": "-", "replacement": "+", "mode": " global "}, want: "a+b+c"},
		{name: "empty pattern", typ: "replace", in: obj{"text": "abc", "pattern": "", "replacement": "+"}, want: "abc"},
	})
}

// Spec §6.7: get reads a missing object as {} (so the default is
// returned), merge a missing side as {}, get_random_element a non-list as
// {default, found: false}, array_length anything but a list as 0.
func TestSpec67_MissingContainerDefaults(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "missing object", typ: "get", in: obj{"key": "a", "default": "d"}, want: obj{"value": "d"}},
		{name: "missing both", typ: "merge", want: obj{}},
		{name: "missing a", typ: "merge", in: obj{"b": obj{"k": int64(1)}}, want: obj{"k": int64(1)}},
		{name: "non-list", typ: "get_random_element", in: obj{"array": "abc", "default": "d"}, want: obj{"result": "d", "found": false}},
		{name: "non-list array", typ: "get_element", in: obj{"array": obj{"0": "x"}, "index": int64(0), "default": "d"}, want: obj{"result": "d", "found": false}},
		{name: "unparsable index is 0", typ: "get_element", in: obj{"array": arr{"a", "b"}, "index": "nope"}, want: obj{"result": "a", "found": true}},
	})
}

// Spec §6.7: make_context keeps context_extra's keys but task and
// messages win over them, task "" for null, a scalar message list-wrapped;
// make_scratchpad leaves workflow_id out when blank and context_extra when
// not an object, node_traces {} when not an object.
func TestSpec67_MakeContextAndScratchpadShapes(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "scalar message", typ: "make_context", in: obj{"messages": "hi", "context_extra": obj{"messages": arr{}, "x": int64(1)}}, want: obj{"context": obj{"task": "", "messages": arr{"hi"}, "x": int64(1)}}},
		{name: "extra not object", typ: "make_context", in: obj{"task": "t", "context_extra": "junk"}, want: obj{"context": obj{"task": "t", "messages": arr{}}}},
		{name: "blank ids", typ: "make_scratchpad", in: obj{"workflow_id": "  ", "context_extra": "junk", "node_traces": "x", "tool_calls": obj{"a": int64(1)}},
			want: obj{"scratchpad": obj{"task": "", "messages": arr{}, "steps": arr{}, "tool_calls": arr{obj{"a": int64(1)}}, "tool_results": arr{}, "node_traces": obj{}}}},
	})
}

// Spec §6.5: split with an empty delimiter gives [text], or [] for an
// empty text; join decodes escapes in its delimiter; format applies
// str() to a non-string template; string_template renders the final
// value with str().
func TestSpec65_DelimiterTemplateAndStrRendering(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "empty delimiter empty text", typ: "split", in: obj{"text": "", "delimiter": ""}, want: arr{}},
		{name: "escaped delimiter between items", typ: "join", in: obj{"items": arr{"a", "b"}, "delimiter": `\n`}, want: "a\nb"},
		{name: "non-string template", typ: "format", in: obj{"template": int64(5), "values": obj{}}, want: "5"},
		{name: "str of values", typ: "string_template", in: obj{"template": "{{f}}|{{b}}|{{l}}", "vars": obj{"f": 1.0, "b": true, "l": arr{"a"}}}, want: "1.0|True|['a']"},
	})
}

// Spec §6.7 get_element: a number index is truncated towards zero (-1.5
// is -1, the last element); §6.12 path_mux: a float select is truncated.
func TestSpec67_TruncatedFloatIndexes(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "negative float", typ: "get_element", in: obj{"array": arr{"a", "b", "c"}, "index": -1.5}, want: obj{"result": "c", "found": true}},
		{name: "float select", typ: "path_mux", in: obj{"select": 1.9, "in0": "a", "in1": "b", "fallback": "f"}, want: obj{"out": "b"}},
	})
}

// Spec §6.4 random_float: swapped bounds are put in order, so the result
// lies in [min, max).
func TestSpec64_RandomFloatSwappedBounds(t *testing.T) {
	fn, _ := Lookup("random_float")
	env := &Env{Rand: newTestRand()}
	for range 100 {
		v, err := fn(env, obj{"min": int64(5), "max": int64(3)})
		if x, ok := v.(float64); err != nil || !ok || x < 3 || x >= 5 {
			t.Fatalf("random_float(5, 3) = %#v, %v; want a float in [3, 5)", v, err)
		}
	}
}

// Spec §6.7 parse_json: the raw-decode fallback starts "at each of the
// first 64 {/[ positions": a value starting at the 64th is found, one at
// the 65th is not (and the text is then Invalid JSON).
func TestSpec67_ParseJSONRawDecodeTriesFirst64Brackets(t *testing.T) {
	junk := strings.Repeat("{x ", 63)
	runNodeCases(t, []nodeCase{
		{name: "64th bracket", typ: "parse_json", in: obj{"text": junk + "[1]"}, want: arr{int64(1)}},
		{name: "65th bracket", typ: "parse_json", in: obj{"text": junk + "{x [1]"}, wantErr: "Invalid JSON"},
	})
}
