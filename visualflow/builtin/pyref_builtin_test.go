package builtin

// Builtin node implementations checked against the Python reference
// (lpalbou/AbstractRuntime, src/abstractruntime/visualflow_compiler/visual/
// builtins.py and executor.py): each test quotes what the reference does,
// and "ours" describes the divergence the test guards against.

import (
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// callBuiltin evaluates node type typ on inputs with env.
func callBuiltin(t *testing.T, env *Env, typ string, inputs map[string]any) (any, error) {
	t.Helper()
	fn, ok := Lookup(typ)
	if !ok {
		t.Fatalf("no builtin %s", typ)
	}
	if env == nil {
		env = &Env{}
	}
	return fn(env, inputs)
}

// wantRepr compares repr(got) with want (a Python repr) and fails on err.
func wantRepr(t *testing.T, what string, got any, err error, want string) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: error %v, want %s", what, err, want)
		return
	}
	if g := pyval.Repr(got); g != want {
		t.Errorf("%s = %s, want %s", what, g, want)
	}
}

// TestPyRefFormatPrecisionWithoutType: builtins.string_format is
// `template.format(**values)`. With a precision and no presentation type,
// Python formats a float like 'g' but switches to exponent notation as
// soon as the rounded value would need '.0' to look like a float
// (CPython: format_float_internal, type '\0' → 'r'-style with
// Py_DTSF_ADD_DOT_0): format(12.345, '.2') == '1.2e+01',
// format(1234.5678, '.4') == '1.235e+03', format(3.0, '.1') == '3e+00'.
// Ours prints '12.0', '1235.0', '3.0'.
func TestPyRefFormatPrecisionWithoutType(t *testing.T) {
	for _, tc := range []struct {
		spec string
		x    float64
		want string
	}{
		{"{x:.2}", 12.345, "'1.2e+01'"},
		{"{x:.4}", 1234.5678, "'1.235e+03'"},
		{"{x:.1}", 3.0, "'3e+00'"},
		{"{x:.3}", 100.0, "'1e+02'"},
	} {
		got, err := callBuiltin(t, nil, "format", map[string]any{"template": tc.spec, "values": map[string]any{"x": tc.x}})
		wantRepr(t, "format("+tc.spec+")", got, err, tc.want)
	}
}

// TestPyRefFormatIndexesStrings: in str.format a field `{s[1]}` indexes
// any object with __getitem__, strings included:
// "{s[1]}".format(s="abc") == 'b'. Ours fails with "'str' object is not
// subscriptable".
func TestPyRefFormatIndexesStrings(t *testing.T) {
	got, err := callBuiltin(t, nil, "format", map[string]any{"template": "{s[1]}{s[0]}", "values": map[string]any{"s": "abc"}})
	wantRepr(t, "format({s[1]}{s[0]})", got, err, "'ba'")
}

// TestPyRefFormatDigitIndexIsIntKey: in str.format a digit-only index is
// an int: "{d[0]}".format(d={"0": "a"}) raises KeyError: 0 (JSON objects
// only have string keys), so the format node fails. Ours looks up "0" and
// returns 'a'.
func TestPyRefFormatDigitIndexIsIntKey(t *testing.T) {
	got, err := callBuiltin(t, nil, "format", map[string]any{"template": "{d[0]}", "values": map[string]any{"d": map[string]any{"0": "a"}}})
	if err == nil {
		t.Errorf("format({d[0]}) with d={'0': 'a'} = %s; Python raises KeyError: 0", pyval.Repr(got))
	}
}

// TestPyRefFormatASCIIConversion: `!a` is ascii():
// "{x!a}".format(x="é") == "'\\xe9'". Ours returns "'é'" (repr).
func TestPyRefFormatASCIIConversion(t *testing.T) {
	got, err := callBuiltin(t, nil, "format", map[string]any{"template": "{x!a}", "values": map[string]any{"x": "é"}})
	wantRepr(t, "format({x!a})", got, err, `"'\\xe9'"`)
}

// TestPyRefFormatZeroPaddedString: since Python 3.10 the '0' flag is
// accepted for strings (fill '0', left-aligned):
// "{x:05}".format(x="ab") == 'ab000'. Ours fails with "'=' alignment not
// allowed in string format specifier".
func TestPyRefFormatZeroPaddedString(t *testing.T) {
	got, err := callBuiltin(t, nil, "format", map[string]any{"template": "{x:05}", "values": map[string]any{"x": "ab"}})
	wantRepr(t, "format({x:05})", got, err, "'ab000'")
}

// TestPyRefParseJSONPythonLiteralFallback: builtins.data_parse_json falls
// back to `ast.literal_eval(text_stripped)` and then `_jsonify`, which
// turns every non-JSON Python value into `str(value)`, and the scalar is
// then wrapped as {"value": ...}:
//
//	"{'a': 1}  # note"  → literal_eval ignores the comment → {'a': 1}
//	"{1, 2}"            → set → str → {'value': '{1, 2}'}
//	"b'x'"              → bytes → str → {'value': "b'x'"}
//	"1+2j"              → complex → str → {'value': '(1+2j)'}
//	"set()"             → set() → {'value': 'set()'}
//
// Ours fails on the comment, complex and set() and returns [1, 2] and
// {'value': 'x'} for the set and the bytes.
func TestPyRefParseJSONPythonLiteralFallback(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"{'a': 1}  # note", "{'a': 1}"},
		{"{1, 2}", "{'value': '{1, 2}'}"},
		{"b'x'", `{'value': "b'x'"}`},
		{"1+2j", "{'value': '(1+2j)'}"},
		{"set()", "{'value': 'set()'}"},
	} {
		got, err := callBuiltin(t, nil, "parse_json", map[string]any{"text": tc.text})
		wantRepr(t, "parse_json("+tc.text+")", got, err, tc.want)
	}
}

// TestPyRefGetElementHugeIndex: data_get_element converts a numeric
// index with int() (exact, unbounded): int(1e20) and int(float("1e20"))
// are far out of range, so the result is {result: default, found: False}.
// Ours fails the int64 conversion, falls back to index 0 and returns the
// first element with found: True.
func TestPyRefGetElementHugeIndex(t *testing.T) {
	for _, idx := range []any{1e20, "1e20", -1e20} {
		got, err := callBuiltin(t, nil, "get_element", map[string]any{"array": []any{int64(1), int64(2)}, "index": idx, "default": "d"})
		wantRepr(t, "get_element(index="+pyval.Repr(idx)+")", got, err, "{'found': False, 'result': 'd'}")
	}
}

// TestPyRefBreakObjectStripsSelectedPaths: executor.py
// _create_break_object_handler normalises the configured paths:
//
//	selected_paths = [p.strip() for p in selected if isinstance(p, str) and p.strip()]
//
// so " name " produces the output pin "name" with the value at "name".
// Ours keys the output by the raw " name " string.
func TestPyRefBreakObjectStripsSelectedPaths(t *testing.T) {
	env := &Env{Data: map[string]any{"breakConfig": map[string]any{"selectedPaths": []any{" name ", "  "}}}}
	got, err := callBuiltin(t, env, "break_object", map[string]any{"object": map[string]any{"name": "bob"}})
	wantRepr(t, "break_object", got, err, "{'name': 'bob'}")
}

// TestPyRefVarDeclEmptyNameUsesDefault: executor.py
// _create_var_decl_handler, with no (or a blank) name:
//
//	if not isinstance(run_vars, dict) or not name_cfg:
//	    v = default_cfg if _matches(default_cfg) else _default_for_type()
//
// and type "any" matches everything, so the configured default is
// returned. Ours returns null (the "any" branch ignores the default).
func TestPyRefVarDeclEmptyNameUsesDefault(t *testing.T) {
	env := &Env{Vars: map[string]any{}, Data: map[string]any{"literalValue": map[string]any{"name": "", "type": "any", "default": "dflt"}}}
	got, err := callBuiltin(t, env, "var_decl", map[string]any{})
	wantRepr(t, "var_decl", got, err, "{'name': '', 'value': 'dflt'}")
}

// TestPyRefGetVarPathKeepsEmptySegments: executor.py `_get_by_path`
// (get_var, var_decl, bool_var) splits on "." without dropping or
// trimming segments: "user." looks up vars["user"][""] (missing → None),
// "user . name" looks up the keys "user " and " name". Ours drops empty
// segments and trims each one, so both resolve vars.user(.name).
func TestPyRefGetVarPathKeepsEmptySegments(t *testing.T) {
	env := &Env{Vars: map[string]any{"user": map[string]any{"name": "bob"}}}
	for _, name := range []string{"user.", "user . name", "user..name"} {
		got, err := callBuiltin(t, env, "get_var", map[string]any{"name": name})
		wantRepr(t, "get_var("+name+")", got, err, "{'value': None}")
	}
}

// TestPyRefFalsyNonStringNames: the variable readers read the name as
// `raw if isinstance(raw, str) else str(raw or "")` (executor.py
// _create_get_var_handler), so a 0/False name is empty → value None;
// get_context builds task as `task if isinstance(task, str) else
// str(task or "")`, so task 0 becomes "". Ours uses str(): "0"/"False".
func TestPyRefFalsyNonStringNames(t *testing.T) {
	env := &Env{Vars: map[string]any{"0": "zero", "False": "f", "context": map[string]any{"task": int64(0)}}}
	for _, name := range []any{int64(0), false} {
		got, err := callBuiltin(t, env, "get_var", map[string]any{"name": name})
		wantRepr(t, "get_var(name="+pyval.Repr(name)+")", got, err, "{'value': None}")
	}
	got, err := callBuiltin(t, env, "get_context", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if task := got.(map[string]any)["task"]; task != "" {
		t.Errorf("get_context task = %#v for context.task 0; Python gives \"\"", task)
	}
}

// TestPyRefConcatNonStringSeparatorIgnored: executor.py
// _create_concat_handler only uses concatConfig.separator when it is a
// string (`if isinstance(sep_raw, str): separator = sep_raw`), else the
// default " ". Ours uses str(separator): 5 joins with "5".
func TestPyRefConcatNonStringSeparatorIgnored(t *testing.T) {
	env := &Env{Data: map[string]any{"concatConfig": map[string]any{"separator": int64(5)},
		"inputs": []any{map[string]any{"id": "a", "type": "string"}, map[string]any{"id": "b", "type": "string"}}}}
	got, err := callBuiltin(t, env, "concat", map[string]any{"a": "x", "b": "y"})
	wantRepr(t, "concat", got, err, "'x y'")
}

// TestPyRefToolParametersWithoutPins: executor.py
// _create_tool_parameters_handler only reports the declared input pins
// (param_ids from data.inputs); with none it returns just
// {"tool_call": {"name": ..., "arguments": {}}}. Ours falls back to every
// public input key.
func TestPyRefToolParametersWithoutPins(t *testing.T) {
	env := &Env{Data: map[string]any{"toolParametersConfig": map[string]any{"tool": "t"}}}
	got, err := callBuiltin(t, env, "tool_parameters", map[string]any{"path": "x"})
	wantRepr(t, "tool_parameters", got, err, "{'tool_call': {'arguments': {}, 'name': 't'}}")
}

// TestPyRefPowerZeroToMinusInfinity: math_power is float ** float;
// 0.0 ** float('-inf') == inf in Python (no ZeroDivisionError: that is
// only raised for finite negative exponents). Ours errors.
func TestPyRefPowerZeroToMinusInfinity(t *testing.T) {
	got, err := callBuiltin(t, nil, "power", map[string]any{"base": 0.0, "exp": math.Inf(-1)})
	wantRepr(t, "power(0.0, -inf)", got, err, "inf")
}

// TestPyRefFloatAcceptsUnicodeDigits: the math nodes use float(x), which
// accepts any Unicode decimal digits: float("١٢") == 12.0 (Arabic-Indic),
// float("１２") == 12.0 (fullwidth). Ours rejects them.
func TestPyRefFloatAcceptsUnicodeDigits(t *testing.T) {
	for _, s := range []string{"١٢", "１２"} {
		got, err := callBuiltin(t, nil, "add", map[string]any{"a": s, "b": int64(0)})
		wantRepr(t, "add("+s+", 0)", got, err, "12.0")
	}
}

// TestPyRefUppercaseSpecialCasing: str.upper() applies the full Unicode
// case mappings (SpecialCasing.txt): "ǰ".upper() == "J̌" (U+004A U+030C),
// "ΐ".upper() == "\u0399\u0308\u0301". Ours left them unchanged.
func TestPyRefUppercaseSpecialCasing(t *testing.T) {
	got, err := callBuiltin(t, nil, "uppercase", map[string]any{"text": "ǰΐ"})
	wantRepr(t, "uppercase(ǰΐ)", got, err, "'J\u030c\u0399\u0308\u0301'")
}
