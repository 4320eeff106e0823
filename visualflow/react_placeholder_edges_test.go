package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// An LLM result without content (null or missing) gives the answer "",
// not Python's "None" text.
func TestReactPlaceholderNullContentIsEmptyAnswer(t *testing.T) {
	run := &durable.RunState{Vars: map[string]any{"context": map[string]any{"task": "t"},
		"_temp": map[string]any{"react_llm": map[string]any{"content": nil}}}}
	plan, err := reactDone(context.Background(), run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.CompleteOutput["answer"]; got != "" {
		t.Fatalf("answer = %#v, want \"\"", got)
	}
}

// With no task and no messages the LLM request still carries a list of
// messages ([]), never null, which providers reject.
func TestReactPlaceholderNoTaskSendsEmptyMessages(t *testing.T) {
	msgs := reactMessages(map[string]any{})
	if msgs == nil || len(msgs) != 0 {
		t.Fatalf("messages = %#v, want an empty list", msgs)
	}
	if got := jsonText(t, map[string]any{"messages": msgs}); got == jsonText(t, map[string]any{"messages": nil}) {
		t.Fatalf("messages encode as null: %s", got)
	}
}
