package history

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// blankToNil promises Python's `str(x).strip() or None`. Python's
// str.strip() also removes the information separators U+001C..U+001F
// (str.isspace is true for them); strings.TrimSpace does not, so a value
// made only of them is kept (Python: None) and a value ending with one
// keeps it (Python drops it). The runtime was fixed for the same
// difference in 7dec20e (pyval.Strip); history still uses TrimSpace.
func TestBlankToNilStripsAsPython(t *testing.T) {
	if got := blankToNil("\x1f"); got != nil {
		t.Errorf(`blankToNil("\x1f") = %q, want nil (Python: "\x1f".strip() or None is None)`, got)
	}
	if got := blankToNil("done\x1c"); got != "done" {
		t.Errorf(`blankToNil("done\x1c") = %q, want "done" (Python strip)`, got)
	}
	if s, ok := nonBlankString("\x1e\x1f"); ok {
		t.Errorf(`nonBlankString("\x1e\x1f") = %q, true; want blank (Python strip leaves "")`, s)
	}
}

// The session listing drops internal turns by the row's workflow id as
// stored, but the turn's kind is computed on the trimmed id: a root run
// whose workflow id is " __internal" is kept and exported as a turn of
// kind "internal", which §6.2 says is dropped.
func TestInternalTurnWithPaddedWorkflowIDIsDropped(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	mk := func(id, wf string, at time.Time) {
		run := &durable.RunState{RunID: id, WorkflowID: wf, Status: durable.RunCompleted, SessionID: "s1",
			Vars: map[string]any{"prompt": "p " + id}, Output: map[string]any{"answer": "a " + id},
			CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at)}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	mk("r1", " __internal", t0)
	mk("r2", "job", t0.Add(time.Second))
	b, err := Export(ctx, Source{Runs: st, Ledger: st}, "r2", Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := b["session"].(map[string]any)
	turns, _ := sess["turns"].([]any)
	for _, tr := range turns {
		m, _ := tr.(map[string]any)
		if m["kind"] == TurnInternal {
			t.Errorf("turn %v exported with kind %q: internal turns are dropped (spec §6.2)", m["run_id"], m["kind"])
		}
	}
}
