package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// An llm_call's provider/model is the pin when it holds a string, even a
// blank one, else effectConfig (spec §5.4.1; Python tests isinstance(...,
// str)). Blank pins therefore override the node's configuration and, both
// blank, the call goes out without provider/model so the host defaults
// apply. (The agent node instead skips blank pins, §5.6.)
func TestLLMCallBlankProviderPinWinsOverConfig(t *testing.T) {
	flow := rsFlow("vfe_llm", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("llm", "llm_call", []string{"exec-in:exec", "prompt:string", "provider:provider", "model:model"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "hi", "provider": "", "model": ""},
				"effectConfig": map[string]any{"provider": "openai", "model": "gpt-x"}}),
	}, "start.exec-out>llm.exec-in")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	llm := &scripted{results: []any{map[string]any{"content": "ok"}}}
	rt := newTestRuntime(t, memory.New(), map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, wf)
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(context.Background(), id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(llm.payloads) != 1 {
		t.Fatalf("llm_call payloads: %d, want 1", len(llm.payloads))
	}
	p := llm.payloads[0]
	_, hasProvider := p["provider"]
	_, hasModel := p["model"]
	if hasProvider || hasModel {
		t.Errorf("payload provider/model = %v/%v; want none (blank pins win over effectConfig, defaults apply)", p["provider"], p["model"])
	}
}
