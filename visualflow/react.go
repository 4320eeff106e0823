package visualflow

import (
	"context"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ReactPlaceholder returns a minimal stand-in for the ReAct child workflow
// of an agent node (§5.6), registered under id until the AbstractAgent
// port exists. It makes one tool-free llm_call with the agent's task and
// context (provider, model, system_prompt_extra, temperature and seed
// from its _runtime) and completes with {answer, iterations: 1, messages}.
// It needs an llm_call handler like any LLM node.
func ReactPlaceholder(id string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "reason", Nodes: map[string]runtime.NodeFunc{
		"reason": reactReason,
		"done":   reactDone,
	}}
}

func reactMessages(vars map[string]any) []any {
	ctx, _ := vars["context"].(map[string]any)
	task := pyval.Str(orDefault(ctx["task"], ""))
	var msgs []any
	if list, ok := ctx["messages"].([]any); ok {
		msgs, _ = pyval.DeepCopy(list).([]any)
	}
	if n := len(msgs); task != "" && (n == 0 || !isUserMessage(msgs[n-1], task)) {
		msgs = append(msgs, map[string]any{"role": "user", "content": task})
	}
	if msgs == nil {
		msgs = []any{}
	}
	return msgs
}

func isUserMessage(m any, content string) bool {
	o, _ := m.(map[string]any)
	return o["role"] == "user" && o["content"] == content
}

func reactReason(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	params := map[string]any{}
	for _, k := range []string{"temperature", "seed", "thinking"} {
		if v, ok := rt[k]; ok {
			params[k] = v
		}
	}
	payload := map[string]any{
		"messages": reactMessages(run.Vars), "system_prompt": orDefault(rt["system_prompt_extra"], ""),
		"provider": rt["provider"], "model": rt["model"], "tools": []any{}, "params": params,
	}
	return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: payload, ResultKey: "_temp.react_llm"}, "done"), nil
}

func reactDone(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
	tmp, _ := run.Vars["_temp"].(map[string]any)
	res, _ := tmp["react_llm"].(map[string]any)
	var answer string
	switch d := res["data"].(type) {
	case map[string]any, []any:
		answer, _ = pyval.Dumps(d, pyval.Compact)
	default:
		answer = pyval.Str(orDefault(res["content"], ""))
	}
	msgs := append(reactMessages(run.Vars), map[string]any{"role": "assistant", "content": answer})
	return runtime.Complete(map[string]any{"answer": answer, "iterations": int64(1), "messages": msgs}), nil
}
