package builtin

// Builtins normalise text as the reference does with Python's str.strip()
// and str.lower() (lpalbou/AbstractRuntime visualflow_compiler/visual/
// builtins.py and executor.py), not with strings.TrimSpace/ToLower:
// str.strip() also removes the information separators U+001C..U+001F, and
// str.lower() maps U+0130 'İ' to "i\u0307". Text carrying such characters
// (LLM output, tool errors, configured modes) must give the same result as
// in Python. Expected values are what CPython returns for these inputs.

import (
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// callNode runs the builtin typ and fails the test on an error.
func callNode(t *testing.T, env *Env, typ string, inputs map[string]any) any {
	t.Helper()
	out, err := callBuiltin(t, env, typ, inputs)
	if err != nil {
		t.Fatalf("%s: unexpected error %v", typ, err)
	}
	return out
}

// format_tool_results: builtins.py data_format_tool_results strips the
// tool name (`str(it.get("name") or ...).strip()`), the error
// (`str(error_raw).strip()`), `rendered.strip()`, each line in _one_line
// (`p.strip()`) and the final text, all with str.strip(). Expected values
// are what CPython returns for these inputs.
func TestFormatToolResultsPythonStrip(t *testing.T) {
	cases := []struct {
		name string
		item map[string]any
		want string
	}{
		{
			// name and error stripped of U+001F: the error text is "boom".
			name: "name_and_error",
			item: map[string]any{"name": "\x1fread_file\x1f", "success": false, "error": "boom\x1f"},
			want: "- read_file() [FAILURE] : boom",
		},
		{
			// An error that is only U+001C is blank in Python (""), so the
			// observation falls back to the (missing) output.
			name: "blank_error",
			item: map[string]any{"name": "t", "success": false, "error": "\x1c"},
			want: "- t() [FAILURE] : (no output)",
		},
		{
			// _one_line drops lines for which p.strip() is empty.
			name: "one_line_drops_separator_line",
			item: map[string]any{"name": "t", "success": true, "output": "a\n\x1f\nb"},
			want: "- t() [SUCCESS] : a b",
		},
		{
			// rendered "\x1c" is blank for rendered.strip(), so obs is the
			// compact sorted JSON of output (json.dumps escapes U+001C).
			name: "blank_rendered",
			item: map[string]any{"name": "t", "output": map[string]any{"path": "x", "rendered": "\x1c"}},
			want: `- t(x) [DONE] : {"path":"x","rendered":"\u001c"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := callNode(t, nil, "format_tool_results", map[string]any{"tool_results": []any{tc.item}})
			if got != tc.want {
				t.Errorf("format_tool_results = %q, want %q (Python str.strip semantics)", got, tc.want)
			}
		})
	}
}

// break_object: executor.py _create_break_object_handler normalises
// selectedPaths with `p.strip()`, so the configured path "\x1fname" is the
// pin "name" and reads object["name"] (not a pin "\x1fname" holding null).
func TestBreakObjectPathPythonStrip(t *testing.T) {
	env := &Env{Data: map[string]any{"breakConfig": map[string]any{"selectedPaths": []any{"\x1fname"}}}}
	got := callNode(t, env, "break_object", map[string]any{"object": map[string]any{"name": "bob"}})
	if r := pyval.Repr(got); r != "{'name': 'bob'}" {
		t.Errorf("break_object = %s, want {'name': 'bob'}", r)
	}
}

// get / string_template: builtins.py _path_tokens strips the path
// (`str(path or "").strip()`) and every key token (`key.strip()`), with
// str.strip(), so a key carrying U+001F resolves.
func TestPathTokensPythonStrip(t *testing.T) {
	obj := map[string]any{"a": map[string]any{"b": "x"}}
	got := callNode(t, nil, "get", map[string]any{"object": obj, "key": "\x1fa.b", "default": "dflt"})
	if r := pyval.Repr(got); r != "{'value': 'x'}" {
		t.Errorf("get(key=%q) = %s, want {'value': 'x'} (data_get/_path_tokens)", "\x1fa.b", r)
	}
	got = callNode(t, nil, "string_template", map[string]any{"template": "[{{ a.\x1fb }}]", "vars": obj})
	if got != "[x]" {
		t.Errorf("string_template = %q, want %q (string_template/_path_tokens)", got, "[x]")
	}
}

// tools_allowlist / make_meta: builtins.py tools_allowlist keeps
// `x.strip()` of each string, and data_make_meta keeps `schema.strip()`,
// `output_mode.strip()`, `str(provider).strip()` and drops warnings whose
// `str(w).strip()` is empty: the allowlisted tool "\x1fread_file" is the
// tool read_file.
func TestAgentEnvelopePythonStrip(t *testing.T) {
	env := &Env{Data: map[string]any{"literalValue": []any{"\x1fread_file", "read_file"}}}
	got := callNode(t, env, "tools_allowlist", map[string]any{})
	if r := pyval.Repr(got); r != "{'tools': ['read_file']}" {
		t.Errorf("tools_allowlist = %s, want {'tools': ['read_file']}", r)
	}
	got = callNode(t, nil, "make_meta", map[string]any{
		"schema":   "my.schema\x1f",
		"provider": "\x1eollama",
		"warnings": []any{"\x1f", "w"},
	})
	want := "{'meta': {'provider': 'ollama', 'schema': 'my.schema', 'version': 1, 'warnings': ['w']}}"
	if r := pyval.Repr(got); r != want {
		t.Errorf("make_meta = %s, want %s", r, want)
	}
}

// stringify_json: the mode is normalised by Python's str.lower()
// (builtins.py data_stringify_json, then rendering/json_stringify.py
// stringify_json: `str(mode or "").strip().lower()`, unknown → beautify).
// str.lower() maps U+0130 'İ' to "i\u0307", so "MİNIFIED" is an unknown
// mode and renders beautified (strings.ToLower would map 'İ' to plain 'i'
// and pick minified).
func TestStringifyJSONModeLowerAsPython(t *testing.T) {
	got := callNode(t, nil, "stringify_json", map[string]any{"value": map[string]any{"a": int64(1)}, "mode": "MİNIFIED"})
	if want := "{\n  \"a\": 1\n}"; got != want {
		t.Errorf("stringify_json(mode=MİNIFIED) = %q, want %q (unknown mode → beautify)", got, want)
	}
}

// replace: builtins.py string_replace normalises mode with
// `str(mode_raw).strip().lower()`; "FİRST".lower() is "fi\u0307rst", which
// is neither a first/all keyword nor an int, so Python replaces all
// occurrences (strings.ToLower would yield "first").
func TestReplaceModeLowerAsPython(t *testing.T) {
	got := callNode(t, nil, "replace", map[string]any{"text": "a-a-a", "pattern": "a", "replacement": "b", "mode": "FİRST"})
	if got != "b-b-b" {
		t.Errorf("replace(mode=FİRST) = %q, want %q", got, "b-b-b")
	}
}
