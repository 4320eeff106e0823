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

// Spec §6.2: session turns keep "only chat turns" when any chat turn
// exists, then the "last session_turn_limit" of them (Python
// _best_effort_session_turns classifies every root run it lists, at least
// max(1000, limit*5) rows, before picking chat turns). Non-chat runs
// between chat messages (a scheduled automation by vars._meta.schedule or
// by a "scheduled:" workflow, plain jobs) must not crowd earlier chat
// turns out of the replay; with no chat turn at all the last turns of any
// kind are kept.
func TestSessionChatTurnsNotCrowdedOutByOtherRuns(t *testing.T) {
	chat := func(text string) (string, map[string]any) {
		return "agent", map[string]any{"context": messages(user(text))}
	}
	metaSched := func(string) (string, map[string]any) {
		return "agent", map[string]any{"_meta": map[string]any{"schedule": map[string]any{"every": "1h"}}}
	}
	wfSched := func(string) (string, map[string]any) { return "scheduled:daily", map[string]any{} }
	job := func(text string) (string, map[string]any) { return "job", map[string]any{"task": text} }
	type run func(string) (string, map[string]any)
	for _, tc := range []struct {
		name   string
		before []run // oldest first
		filler run   // 12 runs after the before runs
		last   run   // the exported run
		want   []string
	}{
		{"meta schedule", []run{chat, chat}, metaSched, chat, []string{"r01", "r14"}},
		{"scheduled workflow", []run{chat, chat}, wfSched, chat, []string{"r01", "r14"}},
		{"plain jobs", []run{chat, chat}, job, chat, []string{"r01", "r14"}},
		{"scheduled workflow after the last chat", []run{chat, chat, wfSched}, wfSched, chat, []string{"r01", "r15"}},
		{"no chat turn", []run{job, job}, wfSched, job, []string{"r13", "r14"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := memory.New()
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var ids []string
			add := func(f run) {
				id := fmt.Sprintf("r%02d", len(ids))
				ids = append(ids, id)
				wf, vars := f(id)
				at := durable.NewTime(t0.Add(time.Duration(len(ids)) * time.Minute))
				putRunAsIs(t, st, &durable.RunState{RunID: id, WorkflowID: wf, Status: durable.RunCompleted, SessionID: "s",
					CreatedAt: at, UpdatedAt: at, Vars: vars})
			}
			for _, f := range tc.before {
				add(f)
			}
			for range 12 {
				add(tc.filler)
			}
			add(tc.last)

			b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, ids[len(ids)-1],
				history.Options{IncludeSession: true, SessionTurnLimit: 2})
			if err != nil {
				t.Fatal(err)
			}
			var got []any
			for _, tr := range list(t, obj(t, b["session"], "session")["turns"], "turns") {
				got = append(got, obj(t, tr, "turn")["run_id"])
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("session turns %v, want %v", got, tc.want)
			}
		})
	}
}

// docs/compatibility.md: "Session turns created after the exported run are
// cut before the bounded load window, so they cannot crowd out earlier
// turns"; spec §6.2: turns are the session's root runs "created at or
// before the exported run ... last session_turn_limit". The cut was applied
// to the rows of one RunIndex call limited to max(1000, 5*limit) rows,
// newest first: with 1000 later root runs in the session, the exported
// run's own turn (and every earlier one) was never seen and the session
// section was empty.
func TestSessionTurnsNotCrowdedOutByLaterRuns(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, at time.Time) {
		putRunAsIs(t, st, &durable.RunState{RunID: id, WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s",
			CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at), Vars: map[string]any{"task": id}})
	}
	mk("early", t0)
	mk("exported", t0.Add(time.Second))
	for i := range 1000 {
		mk(fmt.Sprintf("later%04d", i), t0.Add(time.Duration(i+2)*time.Second))
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "exported", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	var ids []any
	for _, tr := range turns {
		ids = append(ids, obj(t, tr, "turn")["run_id"])
	}
	if len(ids) != 2 || ids[0] != "early" || ids[1] != "exported" {
		t.Fatalf("session turns %v, want [early exported]: later runs crowded out the earlier turns", ids)
	}
}
