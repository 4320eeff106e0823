package builtin

import (
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Spec §6.5 split: an empty (or null) delimiter gives [text], or [] when
// the text is empty, before drop_empty is applied. With drop_empty false
// an empty text must still give [], not [""]: Python's reference never
// builds the one empty part.
func TestSplitEmptyDelimiterOfEmptyTextIsEmpty(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "empty text, keep empty", typ: "split", in: obj{"text": "", "delimiter": "", "drop_empty": false}, want: arr{}},
		{name: "null text, null delimiter, keep empty", typ: "split", in: obj{"text": nil, "delimiter": nil, "drop_empty": false}, want: arr{}},
		{name: "blank text, keep empty", typ: "split", in: obj{"text": " ", "delimiter": "", "drop_empty": false}, want: arr{""}},
	})
}

// Spec §6.5 replace: an integer mode n replaces the first n occurrences,
// so mode 0 replaces none (Python's str.replace(p, r, 0)); only n < 0
// means all. A mode of 0 from a counter that ran down must leave the text
// as it is.
func TestReplaceModeZeroReplacesNothing(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "int 0", typ: "replace", in: obj{"text": "a-a-a", "pattern": "-", "replacement": "+", "mode": int64(0)}, want: "a-a-a"},
		{name: "string 0", typ: "replace", in: obj{"text": "a-a-a", "pattern": "-", "replacement": "+", "mode": " 0 "}, want: "a-a-a"},
	})
}

// Spec §6.4 random_float: equal bounds give that value, without a draw.
// min + (max-min)*U would turn equal infinite bounds into nan (inf - inf)
// and a -0.0 bound into 0.0.
func TestRandomFloatEqualBoundsReturnTheBound(t *testing.T) {
	for _, tt := range []struct {
		lo, hi any
		want   string
	}{
		{"inf", "inf", "inf"},
		{"-inf", "-inf", "-inf"},
		{math.Copysign(0, -1), "-0.0", "-0.0"},
		{2.5, 2.5, "2.5"},
	} {
		got, err := callBuiltin(t, nil, "random_float", obj{"min": tt.lo, "max": tt.hi})
		wantRepr(t, "random_float(min="+pyval.Repr(tt.lo)+", max="+pyval.Repr(tt.hi)+")", got, err, tt.want)
	}
}

// Spec §6.7 edit_json_schema: the merged type is base.type or
// additions.type or "object", by Python truthiness. The base's type wins
// when both have one, so adding fields never retypes an existing schema;
// an empty base type gives way to the additions'.
func TestEditJSONSchemaKeepsTheBaseType(t *testing.T) {
	prop := obj{"type": "string"}
	runNodeCases(t, []nodeCase{
		{name: "base type wins", typ: "edit_json_schema",
			in:   obj{"schema": obj{"type": "array", "properties": obj{"a": prop}}, "_literalValue": obj{"type": "object", "properties": obj{"b": prop}}},
			want: obj{"schema": obj{"type": "array", "properties": obj{"a": prop, "b": prop}}}},
		{name: "empty base type takes the additions'", typ: "edit_json_schema",
			in:   obj{"schema": obj{"type": "", "properties": obj{"a": prop}}, "_literalValue": obj{"type": "array", "properties": obj{"b": prop}}},
			want: obj{"schema": obj{"type": "array", "properties": obj{"a": prop, "b": prop}}}},
		{name: "neither has one", typ: "edit_json_schema",
			in:   obj{"schema": obj{"properties": obj{"a": prop}}, "_literalValue": obj{"properties": obj{"b": prop}}},
			want: obj{"schema": obj{"type": "object", "properties": obj{"a": prop, "b": prop}}}},
	})
}

// Spec §6.7 parse_json: a Markdown fence is removed up to its closing
// ```. An object or array inside a fence still parses when the closing
// fence is left (the raw decode from '{' ignores trailing text), but a
// fenced scalar does not: an LLM answering "```json\n42\n```" must give
// 42, not "Invalid JSON".
func TestParseJSONFencedScalar(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "fenced number", typ: "parse_json", in: obj{"text": "```json\n42\n```"}, want: obj{"value": int64(42)}},
		{name: "fenced string", typ: "parse_json", in: obj{"text": "```\n\"hi\"\n```\n"}, want: obj{"value": "hi"}},
		{name: "fenced python literal", typ: "parse_json", in: obj{"text": "```python\nTrue\n```"}, want: obj{"value": true}},
	})
}

// Spec §6.5 string_template: join(<delim>) strips one pair of matching
// quotes, double as well as single, so {{ xs | join(" - ") }} joins with
// " - " and not with the quotes kept.
func TestStringTemplateJoinStripsDoubleQuotes(t *testing.T) {
	vars := obj{"xs": arr{"a", "b"}}
	runNodeCases(t, []nodeCase{
		{name: "double quotes", typ: "string_template", in: obj{"template": `{{ xs | join(" - ") }}`, "vars": vars}, want: "a - b"},
		{name: "single quotes", typ: "string_template", in: obj{"template": `{{ xs | join(' + ') }}`, "vars": vars}, want: "a + b"},
		{name: "mismatched quotes kept", typ: "string_template", in: obj{"template": `{{ xs | join("/') }}`, "vars": vars}, want: `a"/'b`},
	})
}

// Spec §6.5 string_template: the template is str(template or ""), so a
// falsy non-string template (false, 0, [], {}) renders as "", not as
// "False" or "0".
func TestStringTemplateFalsyTemplateIsEmpty(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "false", typ: "string_template", in: obj{"template": false}, want: ""},
		{name: "zero", typ: "string_template", in: obj{"template": int64(0)}, want: ""},
		{name: "empty list", typ: "string_template", in: obj{"template": arr{}}, want: ""},
		{name: "true", typ: "string_template", in: obj{"template": true}, want: "True"},
	})
}

// make_object (§6.7) and concat without pin metadata read every input
// whose key does not start with '_' (Python's k.startswith("_")): a key
// that is "_" alone is hidden like _pin_order or _literalValue.
func TestUnderscoreAloneIsAHiddenInput(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "underscore key", typ: "make_object", in: obj{"_": int64(1), "a": int64(2), "__x": int64(3)}, want: obj{"a": int64(2)}},
		{name: "underscore key", typ: "concat", in: obj{"_": "hidden", "a": "x", "b": "y"}, want: "x y"},
	})
}

// Spec §6.6 add_message (pure form): a null role is "user", as a missing
// one; only a non-null role goes through str(), so a role pin wired to
// an unset variable does not produce the role "None".
func TestAddMessageNullRoleIsUser(t *testing.T) {
	for _, in := range []obj{{"role": nil, "content": "hi"}, {"content": "hi"}} {
		out := callNode(t, nil, "add_message", in)
		msg, _ := out.(obj)["message"].(obj)
		if msg["role"] != "user" || msg["content"] != "hi" {
			t.Errorf("add_message(%v) message = %v; want role user, content hi", in, msg)
		}
	}
	out := callNode(t, nil, "add_message", obj{"role": "assistant"})
	if msg, _ := out.(obj)["message"].(obj); msg["role"] != "assistant" || msg["content"] != "" {
		t.Errorf("add_message(role=assistant) message = %v; want role assistant, content \"\"", msg)
	}
}

// Spec §6.5 concat: only declared non-exec pins (a pin of type
// "execution" is an exec pin) are concatenated, so a value under the exec pin's id is
// not part of the text.
func TestConcatSkipsTheExecPin(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "exec pin value ignored", typ: "concat", data: pins("a", "b"), in: obj{"exec-in": "X", "a": "x", "b": "y"}, want: "x y"},
	})
}

// Spec §6.7 make_meta: a string trace becomes {trace_id: s}, and a
// trace_id input is set inside the trace object, keeping the trace's
// other fields (a host's span ids must survive a trace_id pin).
func TestMakeMetaTraceShapes(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "string trace", typ: "make_meta", in: obj{"trace": " t1 "},
			want: obj{"meta": obj{"schema": "abstractcode.agent.v1.meta", "version": int64(1), "trace": obj{"trace_id": "t1"}}}},
		{name: "trace_id into a trace object", typ: "make_meta", in: obj{"trace": obj{"span": "s1", "trace_id": "old"}, "trace_id": "t2"},
			want: obj{"meta": obj{"schema": "abstractcode.agent.v1.meta", "version": int64(1), "trace": obj{"span": "s1", "trace_id": "t2"}}}},
	})
}
