package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Reference: AbstractRuntime visualflow_compiler/visual/models.py,
// load_visualflow_json + _migrate_node_prompt_pins (called by
// compiler.compile_visualflow and compile_visualflow_tree before
// visual_to_flow). An on_flow_start output pin with the deprecated id
// "request" or "task" is renamed to "prompt" (and so are its pinDefaults key
// and the sourceHandle of its outgoing edges), so a caller passing
// {"prompt": ...} feeds the wired consumer.
func TestLegacyStartRequestPinIsReadAsPrompt(t *testing.T) {
	flow := rsFlow("vf_legacy_start", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "request:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "answer:string"}, nil, nil),
	}, "start.exec-out>end.exec-in", "start.request>end.answer")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"prompt": "hello"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	if got := st.Output["answer"]; got != "hello" {
		t.Errorf("output answer = %#v; want %q (reference migrates start pin request -> prompt)\noutput: %s",
			got, "hello", jsonText(t, st.Output))
	}
}

// Same migration for a deprecated "task" start pin whose value comes from
// its pinDefaults entry (renamed to "prompt" by _rename_pin_defaults): the
// reference's start outputs {prompt: <default>} and the edge start.task is
// read as start.prompt.
func TestLegacyStartTaskPinDefaultBecomesPromptDefault(t *testing.T) {
	flow := rsFlow("vf_legacy_task", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "task:string"},
			map[string]any{"pinDefaults": map[string]any{"task": "from default"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "answer:string"}, nil, nil),
	}, "start.exec-out>end.exec-in", "start.task>end.answer")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{"task": "caller task"})
	// Reference: the pin is "prompt" now; the caller passed no "prompt", so
	// the (renamed) default is used, not the caller's "task" var.
	if got := st.Output["answer"]; got != "from default" {
		t.Errorf("output answer = %#v; want %q (reference renames the pin and its default to prompt)",
			got, "from default")
	}
}

// Reference: _migrate_node_prompt_pins also renames an llm_call's (and an
// agent's) input pin "request"/"task" to "prompt", with its pinDefaults key
// and incoming edges' targetHandle. A saved llm_call whose prompt pin is
// the legacy "request" therefore calls the model with that prompt.
func TestLegacyLLMCallRequestPinIsPrompt(t *testing.T) {
	flow := rsFlow("vf_legacy_llm", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "request:string"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"request": "say hi"},
				"effectConfig": map[string]any{"provider": "openai", "model": "gpt-x"}}),
	}, "start.exec-out>llm.exec-in")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	llm := &scripted{results: []any{map[string]any{"content": "ok"}}}
	rt := newTestRuntime(t, memory.New(), map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, wf)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(llm.payloads) != 1 {
		t.Fatalf("llm_call payloads: %d, want 1", len(llm.payloads))
	}
	if got := llm.payloads[0]["prompt"]; got != "say hi" {
		t.Errorf("llm_call prompt = %#v; want %q (reference migrates input pin request -> prompt)\npayload: %s",
			got, "say hi", jsonText(t, llm.payloads[0]))
	}
}
