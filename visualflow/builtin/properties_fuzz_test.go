package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Property fuzzing of every pure builtin (FuzzBuiltinProperties): each
// registered node type is called with fuzzed input pins, node data
// (config) and run vars, all decoded from fuzzed JSON. Beyond "no panic"
// it asserts:
//
//   - the call returns within a deadline (no hang);
//   - an error has a non-empty, valid UTF-8 message;
//   - a result holds only the generic JSON tree types the stores persist
//     (nil, bool, string, int64, float64, json.Number, []any,
//     map[string]any) and survives a pyjson encode/decode round trip
//     unchanged (non-finite floats are allowed: Python's float arithmetic
//     makes them and the commit refuses them by path, docs/compatibility.md);
//   - valid UTF-8 in (inputs, data, vars) gives valid UTF-8 out (strings
//     and object keys);
//   - the same inputs with an identically seeded Env give the identical
//     result or error text twice (random/time nodes read Env.Rand/Env.Now);
//   - the call mutates neither its inputs nor Env.Vars/Env.Data/the tool
//     catalogue, and the result shares no container with them (mutating
//     the result afterwards leaves them unchanged).

// fuzzToolCatalogue is a fixed host tool catalogue; the same map is
// handed out on every lookup so that aliasing into it is detectable.
var fuzzToolCatalogue = map[string]any{
	"read_file": map[string]any{"name": "read_file", "parameters": map[string]any{
		"path": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}},
}

func fuzzEnv(typ string, data, vars map[string]any) *Env {
	return &Env{
		Vars: vars, NodeID: "fz", NodeType: typ, Data: data,
		Now:  func() time.Time { return time.Date(2026, 6, 14, 1, 1, 40, 123456000, time.UTC) },
		Zone: time.UTC,
		Rand: rand.New(rand.NewPCG(7, 9)),
		ToolSpec: func(name string) (map[string]any, bool) {
			m, ok := fuzzToolCatalogue[name].(map[string]any)
			return m, ok
		},
	}
}

// encodeAll is the canonical text of v (non-finite floats allowed).
func encodeAll(t *testing.T, what string, v any) []byte {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Style{SortKeys: true, Compact: true, AllowNaN: true})
	if err != nil {
		t.Fatalf("%s: encode: %v", what, err)
	}
	return b
}

// checkTree reports the first value in v that is not a generic JSON tree
// value, naming its path.
func checkTree(v any, path string) error {
	switch x := v.(type) {
	case nil, bool, int64, float64:
		return nil
	case string:
		return nil
	case json.Number:
		return nil
	case []any:
		for i, e := range x {
			if err := checkTree(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for k, e := range x {
			if err := checkTree(e, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: Go-only type %T (%#v)", path, v, v)
}

// validUTF8 reports whether every string and key in v is valid UTF-8.
func validUTF8(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if s, ok := validUTF8(e); !ok {
				return s, false
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return k, false
			}
			if s, ok := validUTF8(e); !ok {
				return s, false
			}
		}
	}
	return "", true
}

// scribble mutates every container in v in place.
func scribble(v any) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			scribble(e)
			x[i] = "\x00scribbled"
		}
	case map[string]any:
		for k, e := range x {
			scribble(e)
			x[k] = "\x00scribbled"
		}
		x["\x00scribbled"] = true
	}
}

func decodeObj(b []byte) (map[string]any, bool) {
	if len(b) == 0 {
		return nil, true
	}
	m, err := pyjson.DecodeObject(b)
	if err != nil {
		return nil, false
	}
	return m, true
}

type callResult struct {
	out any
	err error
}

func callWithDeadline(t *testing.T, typ string, fn Func, env *Env, in map[string]any) (any, error) {
	t.Helper()
	done := make(chan callResult, 1)
	go func() {
		out, err := fn(env, in)
		done <- callResult{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: builtin did not return within 10s (hang)", typ)
	}
	return nil, nil
}

func FuzzBuiltinProperties(f *testing.F) {
	types := Types()
	idx := func(typ string) uint8 {
		for i, x := range types {
			if x == typ {
				return uint8(i)
			}
		}
		f.Fatalf("no type %s", typ)
		return 0
	}
	seeds := []struct {
		typ            string
		in, data, vars string
	}{
		{"add", `{"a": 1, "b": 2.5}`, ``, ``},
		{"add", `{"a": "1e308", "b": 1e308}`, ``, ``},
		{"compare", `{"a": [1, null], "b": [1, null], "op": "<="}`, ``, ``},
		{"format", `{"template": "{n:>10,.2f}|{s!r}", "values": {"n": 1234.5, "s": "é"}}`, ``, ``},
		{"string_template", `{"template": "Hi {{user.name | upper}}", "vars": {"user": {"name": "bob"}}}`, ``, ``},
		{"concat", `{"a": "x", "b": "y"}`, `{"concatConfig": {"separator": "-"}, "inputs": [{"id": "a"}, {"id": "b"}]}`, ``},
		{"split", `{"text": "a,b,,c", "delimiter": ",", "maxsplit": 1}`, ``, ``},
		{"substring", `{"text": "héllo", "start": -3, "end": null}`, ``, ``},
		{"replace", `{"text": "aaa", "old": "", "new": "-"}`, ``, ``},
		{"get_var", `{"name": "a.b"}`, ``, `{"a": {"b": [1, {"c": 2}]}}`},
		{"var_decl", `{}`, `{"literalValue": {"name": "a", "type": "object", "default": {"x": [1]}}}`, `{"a": {"k": "v"}}`},
		{"bool_var", `{}`, `{"literalValue": {"name": "flag", "default": true}}`, `{"flag": false}`},
		{"get_context", `{}`, ``, `{"context": {"task": "t", "messages": [{"role": "user", "content": "hi"}]}}`},
		{"literal_json", `{}`, `{"literalValue": {"a": [1, 2, {"b": null}]}}`, ``},
		{"set", `{"object": {"a": {"b": 1}}, "key": "a.b", "value": [1]}`, ``, ``},
		{"merge", `{"a": {"x": 1}, "b": [["k", "v"]]}`, ``, ``},
		{"break_object", `{"object": {"a": {"b": 2}}}`, `{"breakConfig": {"selectedPaths": ["a.b", "a"]}}`, ``},
		{"make_object", `{"k": "v", "n": 1}`, `{"inputs": [{"id": "k"}, {"id": "n"}]}`, ``},
		{"edit_json_schema", `{"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}`, `{"schemaEdit": {"add": {"b": {"type": "number"}}}}`, ``},
		{"array_map", `{"items": [{"a": 1}, {"a": 2}], "key": "a"}`, ``, ``},
		{"array_filter", `{"items": [1, 2, 1.0, true], "value": 1}`, ``, ``},
		{"array_dedup", `{"array": [1, 1.0, {"a": 1}, {"a": 1}], "key": ""}`, ``, ``},
		{"get_element", `{"array": [1, 2, 3], "index": -1, "default": 0}`, ``, ``},
		{"get_random_element", `{"array": ["a", "b", "c"]}`, ``, ``},
		{"parse_json", `{"text": "{'a': 1, 'b': (1, 2)}"}`, ``, ``},
		{"parse_json", `{"text": "[1, NaN]"}`, ``, ``},
		{"stringify_json", `{"value": {"b": 1, "a": [1.5, "é"]}, "indent": 2}`, ``, ``},
		{"make_meta", `{"schema": "x", "version": "2", "output_mode": "json"}`, ``, ``},
		{"make_scratchpad", `{"iterations": 3, "steps": [{"a": 1}]}`, ``, ``},
		{"make_context", `{"task": "t", "messages": [1], "context_extra": {"k": {"v": 1}}}`, ``, ``},
		{"format_tool_results", `{"tool_results": [{"name": "read_file", "arguments": {"limit": 5, "path": "/x"}, "success": true, "output": {"a": 1}}]}`, ``, ``},
		{"agent_trace_report", `{"scratchpad": {"node_traces": {"n": {"steps": [{"ts": "1", "status": "completed", "duration_ms": 1.5, "effect": {"type": "llm_call", "payload": {"prompt": "p"}}, "result": {"content": "c"}}]}}}}`, ``, ``},
		{"tool_parameters", `{"tools": ["a", "b"]}`, `{"toolParametersConfig": {"tool": "read_file"}}`, ``},
		{"tools_allowlist", `{}`, `{"literalValue": ["a", " b ", 3]}`, ``},
		{"random_int", `{"min": -5, "max": 5}`, ``, ``},
		{"random_float", `{"min": 1e308, "max": -1e308}`, ``, ``},
		{"round", `{"value": 2.675, "decimals": 2}`, ``, ``},
		{"modulo", `{"a": -7, "b": 2.5}`, ``, ``},
		{"power", `{"base": -8, "exp": 0.3333}`, ``, ``},
		{"system_datetime", `{}`, ``, ``},
		{"add_message", `{"role": "assistant", "content": {"a": 1}}`, ``, ``},
		{"path_mux", `{"a": 1, "b": 2}`, `{"pathMuxConfig": {"paths": ["a", "b"]}}`, `{"_temp": {"path": "b"}}`},
		{"has_tools", `{"tools": ["x"]}`, ``, ``},
		{"coalesce", `{"a": null, "b": 0, "c": "x"}`, `{"inputs": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}`, ``},
	}
	for _, s := range seeds {
		f.Add(idx(s.typ), []byte(s.in), []byte(s.data), []byte(s.vars))
	}
	f.Fuzz(func(t *testing.T, ti uint8, inJSON, dataJSON, varsJSON []byte) {
		typ := types[int(ti)%len(types)]
		fn, _ := Lookup(typ)
		in, ok1 := decodeObj(inJSON)
		data, ok2 := decodeObj(dataJSON)
		vars, ok3 := decodeObj(varsJSON)
		if !ok1 || !ok2 || !ok3 {
			t.Skip()
		}
		if in == nil {
			in = map[string]any{}
		}
		if tmpl, ok := in["template"].(string); ok && typ == "format" && hugeSpec(tmpl) {
			t.Skip() // a huge width/precision allocates gigabytes (as in Python)
		}
		allValid := true
		for _, v := range []any{in, data, vars} {
			if _, ok := validUTF8(v); !ok {
				allValid = false
			}
		}
		inBefore := encodeAll(t, "inputs", in)
		dataBefore := encodeAll(t, "data", data)
		varsBefore := encodeAll(t, "vars", vars)
		catBefore := encodeAll(t, "catalogue", fuzzToolCatalogue)

		out, err := callWithDeadline(t, typ, fn, fuzzEnv(typ, data, vars), in)

		// No mutation of what the builtin was handed.
		for _, c := range []struct {
			what   string
			v      any
			before []byte
		}{{"inputs", in, inBefore}, {"data", data, dataBefore}, {"vars", vars, varsBefore}, {"tool catalogue", fuzzToolCatalogue, catBefore}} {
			if after := encodeAll(t, c.what, c.v); !bytes.Equal(after, c.before) {
				t.Fatalf("%s mutated its %s:\nbefore %s\nafter  %s", typ, c.what, c.before, after)
			}
		}

		var outText []byte
		if err != nil {
			msg := err.Error()
			if strings.TrimSpace(msg) == "" {
				t.Fatalf("%s: empty error message (%#v)", typ, err)
			}
			if !utf8.ValidString(msg) && allValid {
				t.Fatalf("%s: error message is not valid UTF-8: %q", typ, msg)
			}
		} else {
			if e := checkTree(out, "result"); e != nil {
				t.Fatalf("%s: result is not a JSON tree value: %v", typ, e)
			}
			outText = encodeAll(t, "result", out)
			back, derr := pyjson.Decode(outText)
			if derr != nil {
				t.Fatalf("%s: result encoding %s does not decode: %v", typ, outText, derr)
			}
			if again := encodeAll(t, "decoded result", back); !bytes.Equal(again, outText) {
				t.Fatalf("%s: result does not round-trip:\n%s\n%s", typ, outText, again)
			}
			if allValid {
				if s, ok := validUTF8(out); !ok {
					t.Fatalf("%s: valid UTF-8 in gave invalid UTF-8 out: %q (result %s)", typ, s, outText)
				}
			}
		}

		// Determinism: fresh copies, identically seeded env.
		in2, _ := decodeObj(inJSON)
		if in2 == nil {
			in2 = map[string]any{}
		}
		data2, _ := decodeObj(dataJSON)
		vars2, _ := decodeObj(varsJSON)
		out2, err2 := callWithDeadline(t, typ, fn, fuzzEnv(typ, data2, vars2), in2)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%s: nondeterministic: first err=%v, second err=%v", typ, err, err2)
		}
		if err != nil {
			if err.Error() != err2.Error() {
				t.Fatalf("%s: nondeterministic error text:\n%s\n%s", typ, err, err2)
			}
			return
		}
		if t2 := encodeAll(t, "second result", out2); !bytes.Equal(t2, outText) {
			t.Fatalf("%s: nondeterministic result:\n%s\n%s", typ, outText, t2)
		}

		// No aliasing: scribbling over the result leaves the caller's
		// inputs, data, vars and catalogue alone.
		scribble(out)
		for _, c := range []struct {
			what   string
			v      any
			before []byte
		}{{"inputs", in, inBefore}, {"data", data, dataBefore}, {"vars", vars, varsBefore}, {"tool catalogue", fuzzToolCatalogue, catBefore}} {
			if after := encodeAll(t, c.what, c.v); !bytes.Equal(after, c.before) {
				t.Fatalf("%s: result aliases its %s (mutating the result changed it):\nbefore %s\nafter  %s", typ, c.what, c.before, after)
			}
		}
	})
}
