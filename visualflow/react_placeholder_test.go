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
