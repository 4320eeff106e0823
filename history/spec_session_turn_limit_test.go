package history_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestSpecSessionTurnLimitDefault pins spec §6.2: with no
// session_turn_limit given (default 200), the session section keeps the
// last 200 turns created at or before the exported run, oldest first.
func TestSpecSessionTurnLimitDefault(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const n = 203
	id := func(i int) string { return fmt.Sprintf("turn-%03d", i) }
	for i := range n {
		r := completedRun(id(i), "", t0.Add(time.Duration(i)*time.Second))
		r.SessionID = "s1"
		putRunAsIs(t, st, r)
	}
	// A later run of the session is not a turn of a bundle exported before it.
	later := completedRun("turn-later", "", t0.Add(time.Hour))
	later.SessionID = "s1"
	putRunAsIs(t, st, later)

	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id(n-1), history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 200 {
		t.Fatalf("%d turns, want the default limit of 200", len(turns))
	}
	first, last := obj(t, turns[0], "turns[0]")["run_id"], obj(t, turns[199], "turns[199]")["run_id"]
	if first != id(n-200) || last != id(n-1) {
		t.Errorf("turns run %v … %v; want %s … %s (the last 200, oldest first)", first, last, id(n-200), id(n-1))
	}
}
