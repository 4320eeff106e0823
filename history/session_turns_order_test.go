package history_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Spec §6.2: session turns are the session's root runs "limited to runs
// created at or before the exported run, oldest first, last
// session_turn_limit"; sessionRoots' doc says the same. sessionRoots fills
// its bounded window from RunIndex rows assuming they come newest-created
// first, but every store's RunIndex orders rows by updated_at (store.go:
// "most recently updated first"). Earlier runs that were updated after the
// exported run (a long-lived run that was resumed, a run that received a
// note, ...) fill the window, the listing stops widening, and the turns
// created last — here the exported run itself — are never seen.
func TestTurnsWindowOrderedByUpdate(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, created, updated time.Time) {
		putRunAsIs(t, st, &durable.RunState{RunID: id, WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s",
			CreatedAt: durable.NewTime(created), UpdatedAt: durable.NewTime(updated), Vars: map[string]any{"task": id}})
	}
	// Ten early turns, each updated long after the exported run was made.
	for i := range 10 {
		mk(fmt.Sprintf("early%02d", i), t0.Add(time.Duration(i)*time.Second), t0.Add(time.Hour+time.Duration(i)*time.Second))
	}
	mk("recent", t0.Add(20*time.Second), t0.Add(20*time.Second))
	mk("exported", t0.Add(21*time.Second), t0.Add(21*time.Second))

	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "exported",
		history.Options{IncludeSession: true, SessionTurnLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	var ids []any
	for _, tr := range turns {
		ids = append(ids, obj(t, tr, "turn")["run_id"])
	}
	if len(ids) != 2 || ids[0] != "recent" || ids[1] != "exported" {
		t.Fatalf("session turns %v, want [recent exported] (the last 2 created at or before the exported run)", ids)
	}
}
