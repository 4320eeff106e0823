package history_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestSpecTurnPromptSources pins spec §6.2's order of a session turn's
// prompt sources: prompt, then message, then task, then context.task, then
// context.message.
func TestSpecTurnPromptSources(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		vars map[string]any
		want string
	}{
		{map[string]any{"prompt": "p", "message": "m", "task": "t"}, "p"},
		{map[string]any{"message": "m", "task": "t", "context": map[string]any{"task": "ct"}}, "m"},
		{map[string]any{"task": "t", "context": map[string]any{"task": "ct", "message": "cm"}}, "t"},
		{map[string]any{"context": map[string]any{"task": "ct", "message": "cm"}}, "ct"},
		{map[string]any{"context": map[string]any{"message": "cm"}}, "cm"},
		{map[string]any{"prompt": "  ", "message": "after a blank prompt"}, "after a blank prompt"},
	}
	var want []any
	for i, c := range cases {
		r := completedRun(string(rune('a'+i)), "", t0.Add(time.Duration(i)*time.Second))
		r.SessionID, r.Vars = "s", c.vars
		putRunAsIs(t, st, r)
		want = append(want, c.want)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, string(rune('a'+len(cases)-1)),
		history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, tr := range list(t, obj(t, b["session"], "session")["turns"], "turns") {
		got = append(got, obj(t, tr, "turn")["prompt"])
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turn prompts %q, want %q", got, want)
	}
}
