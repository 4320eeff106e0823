package visualflow

import (
	"context"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The reference agent handler builds its own effects (spec §5.6), not
// through the generic effect-node wrapper: the start_subworkflow payload
// is exactly {workflow_id, vars, async, wait, include_traces} and the
// structured pass's llm_call payload {messages, system_prompt, provider,
// model, response_schema, response_schema_name, params}; neither carries
// the "type" / "resume_to_node" keys the generic wrapper adds (the resume
// target is the plan's next node, the agent itself).
func TestReviewAgentEffectPayloadKeys(t *testing.T) {
	t.Parallel()
	src := agentWiredFlow(`{"type":"object","properties":{"a":{"type":"string"}}}`, "response")
	var subPayloads, llmPayloads []map[string]any
	sub := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		subPayloads = append(subPayloads, pyjson.CloneObject(req.Effect.Payload))
		return runtime.Completed(map[string]any{"sub_run_id": "child-1", "output": map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}}), nil
	}}
	llm := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		llmPayloads = append(llmPayloads, pyjson.CloneObject(req.Effect.Payload))
		return runtime.Completed(map[string]any{"content": `{"a":"x"}`}), nil
	}}
	_, st := runFlows(t, []string{src}, nil, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sub, durable.EffectLLMCall: llm}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if len(subPayloads) != 1 || len(llmPayloads) != 1 {
		t.Fatalf("start_subworkflow payloads %d, llm_call payloads %d, want 1 and 1", len(subPayloads), len(llmPayloads))
	}
	check := func(what string, p map[string]any, want []string) {
		var got []string
		for k := range p {
			got = append(got, k)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s payload keys = %v, want %v", what, got, want)
		}
	}
	check("start_subworkflow", subPayloads[0], []string{"workflow_id", "vars", "async", "wait", "include_traces"})
	check("structured llm_call", llmPayloads[0], []string{"messages", "system_prompt", "provider", "model", "response_schema", "response_schema_name", "params"})
}
