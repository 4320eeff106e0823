package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// The ReAct placeholder's single llm_call carries the agent's
// temperature, seed and thinking from the child's _runtime
// (ReactPlaceholder's contract).
func TestReactPlaceholderPassesRuntimeParams(t *testing.T) {
	run := &durable.RunState{Vars: map[string]any{
		"_runtime": map[string]any{"provider": "p", "model": "m", "temperature": 0.2, "seed": int64(3), "thinking": "high"},
		"context":  map[string]any{"task": "t"},
	}}
	plan, err := reactReason(context.Background(), run, nil)
	if err != nil || plan.Effect == nil {
		t.Fatalf("reactReason = %+v, %v; want an llm_call", plan, err)
	}
	want := map[string]any{"temperature": 0.2, "seed": int64(3), "thinking": "high"}
	if got := jsonText(t, plan.Effect.Payload["params"]); got != jsonText(t, want) {
		t.Errorf("llm_call params = %s, want %s", got, jsonText(t, want))
	}
}

// Structured data (an object or a list) is the placeholder's answer as
// compact JSON; other data leaves the text content as the answer.
func TestReactPlaceholderAnswerFromData(t *testing.T) {
	cases := []struct {
		res  map[string]any
		want string
	}{
		{map[string]any{"data": []any{int64(1), int64(2)}, "content": "text"}, "[1,2]"},
		{map[string]any{"data": map[string]any{"a": int64(1)}, "content": "text"}, `{"a":1}`},
		{map[string]any{"data": "scalar", "content": "text"}, "text"},
	}
	for _, tc := range cases {
		run := &durable.RunState{Vars: map[string]any{"context": map[string]any{"task": "t"},
			"_temp": map[string]any{"react_llm": tc.res}}}
		plan, err := reactDone(context.Background(), run, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := plan.CompleteOutput["answer"]; got != tc.want {
			t.Errorf("llm result %s: answer = %#v, want %q", jsonText(t, tc.res), got, tc.want)
		}
	}
}

// A context whose last message is already the task as a user message is
// sent as is (ReAct contract, spec §5.6: ensure context.task is the last
// user message), so the model does not see the task twice; an earlier
// user message with other content still gets the task appended.
func TestReactPlaceholderDoesNotRepeatTrailingTask(t *testing.T) {
	cases := []struct {
		name string
		msgs []any
		want []any
	}{
		{"task already last", []any{chatMsg("assistant", "hi"), chatMsg("user", "t")},
			[]any{chatMsg("assistant", "hi"), chatMsg("user", "t")}},
		{"other user message last", []any{chatMsg("user", "earlier")},
			[]any{chatMsg("user", "earlier"), chatMsg("user", "t")}},
	}
	for _, c := range cases {
		run := &durable.RunState{Vars: map[string]any{"context": map[string]any{"task": "t", "messages": c.msgs}}}
		plan, err := reactReason(context.Background(), run, nil)
		if err != nil || plan.Effect == nil {
			t.Fatalf("%s: reactReason = %+v, %v; want an llm_call", c.name, plan, err)
		}
		if got, w := jsonText(t, plan.Effect.Payload["messages"]), jsonText(t, c.want); got != w {
			t.Errorf("%s: llm_call messages = %s\nwant %s", c.name, got, w)
		}
	}
}

// The placeholder's llm_call takes its system prompt from the child's
// _runtime.system_prompt_extra (the agent's system pin, spec §5.6 child
// vars), "" without one; dropping it would lose the agent's instructions.
func TestReactPlaceholderSystemPromptFromRuntime(t *testing.T) {
	for extra, want := range map[any]string{"be terse": "be terse", nil: ""} {
		rt := map[string]any{"provider": "p", "model": "m"}
		if extra != nil {
			rt["system_prompt_extra"] = extra
		}
		run := &durable.RunState{Vars: map[string]any{"_runtime": rt, "context": map[string]any{"task": "t"}}}
		plan, err := reactReason(context.Background(), run, nil)
		if err != nil || plan.Effect == nil {
			t.Fatalf("reactReason = %+v, %v; want an llm_call", plan, err)
		}
		if got := plan.Effect.Payload["system_prompt"]; got != want {
			t.Errorf("system_prompt_extra %#v: llm_call system_prompt = %#v, want %q", extra, got, want)
		}
	}
}

// The placeholder makes one llm_call, so it completes with iterations 1
// (its contract), which the agent's meta.iterations pin reports.
func TestReactPlaceholderCompletesWithOneIteration(t *testing.T) {
	run := &durable.RunState{Vars: map[string]any{"context": map[string]any{"task": "t"},
		"_temp": map[string]any{"react_llm": map[string]any{"content": "A"}}}}
	plan, err := reactDone(context.Background(), run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.CompleteOutput["iterations"]; got != int64(1) {
		t.Errorf("completion iterations = %#v, want 1", got)
	}
}
