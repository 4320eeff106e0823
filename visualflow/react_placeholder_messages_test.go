package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// The placeholder completes with messages = the conversation it sent plus
// its answer as the last assistant message (the ReAct contract, spec §5.6:
// messages = final context messages), so the agent's scratchpad and
// parent-context transcript end with the answer.
func TestReactPlaceholderMessagesEndWithAnswer(t *testing.T) {
	run := &durable.RunState{Vars: map[string]any{"context": map[string]any{"task": "t"},
		"_temp": map[string]any{"react_llm": map[string]any{"content": "A"}}}}
	plan, err := reactDone(context.Background(), run, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{chatMsg("user", "t"), chatMsg("assistant", "A")}
	if got, w := jsonText(t, plan.CompleteOutput["messages"]), jsonText(t, want); got != w {
		t.Errorf("completion messages = %s\nwant %s", got, w)
	}
}
