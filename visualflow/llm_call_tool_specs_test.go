package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestLLMCall_ToolSpecObjectsReducedToNameDescriptionParameters: a tools
// value holding ToolSpec objects is "taken as ToolSpecs, each reduced to
// {name, description, parameters}" (spec §5.4.1). The reference
// (executor.py _create_llm_call_handler._strip_tool_spec) drops entries
// without a non-blank string name, strips the name, and sends
// description = str(desc or "") and parameters = dict or {}; a provider
// rejects a tool whose parameters are null or whose name is missing.
func TestLLMCall_ToolSpecObjectsReducedToNameDescriptionParameters(t *testing.T) {
	t.Parallel()
	tools := `[{"name":" search ","ui_only":true},
	  {"description":"a spec without a name"},
	  {"name":"   ","description":"a blank name"},
	  {"name":7,"description":"a name that is not a string"},
	  {"name":"calc","description":"adds","parameters":{"type":"object"}},
	  {"name":"echo","description":null,"parameters":"not an object"}]`
	flow := effectWiredFlow("llm_call", `{"prompt":"hi","tools":`+tools+`}`, `{}`, "response")
	sc := &scripted{results: []any{map[string]any{"content": "x"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, nil)
	if st.Status != durable.RunCompleted || len(sc.payloads) != 1 {
		t.Fatalf("status %s (%s), llm calls %d", st.Status, st.Error, len(sc.payloads))
	}
	want := []any{
		map[string]any{"name": "search", "description": "", "parameters": map[string]any{}},
		map[string]any{"name": "calc", "description": "adds", "parameters": map[string]any{"type": "object"}},
		map[string]any{"name": "echo", "description": "", "parameters": map[string]any{}},
	}
	if got, w := jsonText(t, sc.payloads[0]["tools"]), jsonText(t, want); got != w {
		t.Fatalf("llm_call payload tools =\n%s\nwant (reference _strip_tool_spec)\n%s", got, w)
	}
}

// TestLLMCall_MixedToolsListReadAsNames: the reference
// (executor.py _create_llm_call_handler._normalize_tools) takes the tools
// value as ToolSpecs only when every entry is an object; otherwise it
// reads it as tool names, so a ToolSpec object in a mixed list is
// dropped. The llm_call payload (ledger, provider request) must match.
func TestLLMCall_MixedToolsListReadAsNames(t *testing.T) {
	t.Parallel()
	tools := `[{"name":"calc","description":"adds","parameters":{"type":"object"}}, "other"]`
	flow := effectWiredFlow("llm_call", `{"prompt":"hi","tools":`+tools+`}`, `{}`, "response")
	sc := &scripted{results: []any{map[string]any{"content": "x"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, nil)
	if st.Status != durable.RunCompleted || len(sc.payloads) != 1 {
		t.Fatalf("status %s (%s), llm calls %d", st.Status, st.Error, len(sc.payloads))
	}
	// No tool catalogue in these options: a name is sent as {"name": x}.
	want := []any{map[string]any{"name": "other"}}
	if got, w := jsonText(t, sc.payloads[0]["tools"]), jsonText(t, want); got != w {
		t.Fatalf("llm_call payload tools = %s, want %s (the object of a mixed list dropped)", got, w)
	}
}

// The host catalogue given as CompileOptions.ToolSpec is the one
// format_tool_results reads its primary-argument order from (the
// reference: the host's default tool specs), so a compiled flow renders
// write_file by its required file_path rather than the sorted-first
// argument.
func TestFormatToolResults_UsesCompileToolCatalogue(t *testing.T) {
	t.Parallel()
	flow := rsFlow("ftr", "S", []map[string]any{
		rsNode("S", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("D", "format_tool_results", []string{"tool_results:array"}, []string{"result:string"},
			map[string]any{"pinDefaults": map[string]any{"tool_results": []any{map[string]any{
				"name": "write_file", "success": true, "output": "ok",
				"arguments": map[string]any{"content": "hello", "file_path": "notes.md"}}}}}),
		rsNode("E", "on_flow_end", []string{"exec-in:exec", "r:string"}, nil, nil),
	}, "S.exec-out>E.exec-in", "D.result>E.r")
	catalogue := func(name string) (map[string]any, bool) {
		if name != "write_file" {
			return nil, false
		}
		return map[string]any{"name": name, "required_args": []any{"file_path", "content"}}, true
	}
	for _, tc := range []struct {
		name string
		opts CompileOptions
		want string
	}{
		{"with a catalogue", CompileOptions{ToolSpec: catalogue}, "- write_file(notes.md) [SUCCESS] : ok"},
		{"without", CompileOptions{}, "- write_file(hello) [SUCCESS] : ok"},
	} {
		_, st := startRunWith(t, flow, tc.opts, nil)
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", tc.name, st.Status, st.Error)
		}
		if st.Output["r"] != tc.want {
			t.Errorf("%s: digest = %q, want %q", tc.name, st.Output["r"], tc.want)
		}
	}
}
