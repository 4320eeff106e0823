package builtin

import "testing"

// catalogue is a host tool catalogue (Env.ToolSpec) holding AbstractCore
// ToolDefinition dicts, as the reference's list_default_tool_specs().
func catalogue(specs ...map[string]any) func(string) (map[string]any, bool) {
	byName := map[string]map[string]any{}
	for _, s := range specs {
		byName[s["name"].(string)] = s
	}
	return func(name string) (map[string]any, bool) {
		s, ok := byName[name]
		return s, ok
	}
}

// builtins.py data_format_tool_results picks the signature's primary
// argument from the tool's spec when the host catalogue has one: its
// required_args in order, else its parameters' keys; only when the spec
// names none (or there is no spec) from the call's own argument then
// output keys.
func TestFormatToolResultsPrimaryArgFromCatalogue(t *testing.T) {
	env := &Env{ToolSpec: catalogue(
		map[string]any{"name": "write_file", "required_args": []any{" file_path ", "", int64(3), "content"},
			"parameters": map[string]any{"content": map[string]any{}, "file_path": map[string]any{}}},
		map[string]any{"name": "search", "parameters": map[string]any{"query": map[string]any{"type": "string"}}},
		map[string]any{"name": "bare"},
		map[string]any{"name": "no_params", "required_args": []any{}, "parameters": map[string]any{}},
	)}
	cases := []struct {
		name string
		item map[string]any
		want string
	}{
		{"required arg wins over the sorted-first argument",
			map[string]any{"name": "write_file", "success": true, "output": "ok",
				"arguments": map[string]any{"content": "hello", "file_path": "notes.md"}},
			"- write_file(notes.md) [SUCCESS] : ok"},
		{"next required arg when the first is null or absent",
			map[string]any{"name": "write_file", "success": true, "output": "ok",
				"arguments": map[string]any{"file_path": nil, "content": "hello", "append": true}},
			"- write_file(hello) [SUCCESS] : ok"},
		{"required arg read from the output when no argument has it",
			map[string]any{"name": "write_file", "success": true,
				"arguments": map[string]any{"append": true}, "output": map[string]any{"file_path": "o.md", "rendered": "done"}},
			"- write_file(o.md) [SUCCESS] : done"},
		{"spec keys only: other argument keys are not tried",
			map[string]any{"name": "write_file", "success": true, "output": "ok",
				"arguments": map[string]any{"append": true}},
			"- write_file() [SUCCESS] : ok"},
		{"parameters keys when no required_args",
			map[string]any{"name": "search", "success": true, "output": "3 hits",
				"arguments": map[string]any{"limit": int64(5), "query": "go maps"}},
			"- search(go maps) [SUCCESS] : 3 hits"},
		{"spec without keys falls back to the call's keys",
			map[string]any{"name": "bare", "success": true, "output": "x",
				"arguments": map[string]any{"b": "second", "a": "first"}},
			"- bare(first) [SUCCESS] : x"},
		{"empty required_args and parameters fall back too",
			map[string]any{"name": "no_params", "success": true, "output": "x",
				"arguments": map[string]any{"z": "only"}},
			"- no_params(only) [SUCCESS] : x"},
		{"name looked up stripped",
			map[string]any{"name": " write_file ", "success": true, "output": "ok",
				"arguments": map[string]any{"content": "hello", "file_path": "notes.md"}},
			"- write_file(notes.md) [SUCCESS] : ok"},
		{"tool not in the catalogue",
			map[string]any{"name": "other", "success": true, "output": "ok",
				"arguments": map[string]any{"content": "hello", "file_path": "notes.md"}},
			"- other(hello) [SUCCESS] : ok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := callNode(t, env, "format_tool_results", map[string]any{"tool_results": []any{tc.item}})
			if got != tc.want {
				t.Errorf("format_tool_results = %q, want %q", got, tc.want)
			}
		})
	}
}

// Without a catalogue (nil Env or nil ToolSpec) the primary argument is
// the first non-null of the argument keys then the output keys.
func TestFormatToolResultsWithoutCatalogue(t *testing.T) {
	item := map[string]any{"name": "write_file", "success": true, "output": "ok",
		"arguments": map[string]any{"content": "hello", "file_path": "notes.md"}}
	for _, env := range []*Env{nil, {}} {
		got := callNode(t, env, "format_tool_results", map[string]any{"tool_results": []any{item}})
		if want := "- write_file(hello) [SUCCESS] : ok"; got != want {
			t.Errorf("format_tool_results = %q, want %q", got, want)
		}
	}
}
