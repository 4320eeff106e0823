package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// As for provider and model (agentPins, Python's sync from
// _temp.effects.<N>), a structured agent's data fields sub_run_id
// (stripped) and iterations (an int) override the meta pin's.
func TestAgentStructuredDataSubRunAndIterationsOverrideMetaPin(t *testing.T) {
	meta := structuredMetaPin(t, map[string]any{"sub_run_id": " ds ", "iterations": int64(9)})
	if meta["sub_run_id"] != "ds" || jsonText(t, meta["iterations"]) != "9" {
		t.Errorf("meta pin = %s, want sub_run_id ds and iterations 9 from the data", jsonText(t, meta))
	}
}

// The use_context pin is include_context's alias (§5.6 input
// normalisation: include_context|use_context): set on the pin alone it
// appends the agent turn to the parent context.
func TestAgentUseContextPinAppendsTurn(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "find it", "use_context": true},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-uc"},
	}, []string{"prompt:string", "use_context:boolean"})
	st := runAgentFlow(t, flow, fakeReact("react-uc", "A"), nil, nil)
	if got := len(parentMessages(st)); got != 2 {
		t.Fatalf("parent context.messages = %s, want the task and answer turn", jsonText(t, parentMessages(st)))
	}
}

// Python's `if schema_enabled and schema`: an enabled outputSchema whose
// jsonSchema is {} gives no structured pass; the agent ends unstructured.
func TestAgentEmptyOutputSchemaIsNotStructured(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-term",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{}}}
	llm := &scripted{}
	st := runAgentFlow(t, terminalAgentFlow(cfg), fakeReact("react-term", "A"),
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	meta, _ := st.Output["meta"].(map[string]any)
	if len(llm.payloads) != 0 || meta["output_mode"] != "unstructured" {
		t.Fatalf("llm calls = %d, meta = %s; want none and output_mode unstructured", len(llm.payloads), jsonText(t, meta))
	}
}

// The agent turn's metadata names the child run only when it is known: a
// child result with an empty sub_run_id leaves sub_run_id out of the
// task and answer messages' metadata rather than setting it to "".
func TestAgentTurnWithoutSubRunIDHasNoSubRunMetadata(t *testing.T) {
	st := savedAgentRun(t, map[string]any{"sub_run_id": "", "output": map[string]any{"answer": "A", "messages": []any{}}}, []any{})
	msgs := parentMessages(st)
	if len(msgs) != 2 {
		t.Fatalf("parent messages = %s, want the task and answer", jsonText(t, msgs))
	}
	for _, m := range msgs {
		md, _ := m.(map[string]any)["metadata"].(map[string]any)
		if _, has := md["sub_run_id"]; has {
			t.Errorf("metadata = %s, want no sub_run_id", jsonText(t, md))
		}
	}
}
