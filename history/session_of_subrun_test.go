package history_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Spec §6.2 session turns: "parent-less runs of that session (found via
// list_run_index(session_id, root_only) …) … limited to runs created at
// or before the exported run". Python history_bundle.py computes the
// bound from the exported run's created_at whatever the run is, and keeps
// only runs without parent_run_id. Exporting a subrun of a session
// therefore lists the session's root runs created up to the subrun: not
// the subrun itself (it has a parent), not a root created after it, not
// another session's run; the bundle itself covers the subrun's tree only
// (root_run_id is the subrun, which has no children here).
func TestSessionOfExportedSubrun(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	chat := func(id, parent, session, prompt string, at time.Time) {
		r := completedRun(id, parent, at)
		r.SessionID = session
		r.Vars = map[string]any{"context": map[string]any{"messages": []any{map[string]any{"role": "user", "content": prompt}}}}
		r.Output = map[string]any{"answer": "a " + id}
		putRunAsIs(t, st, r)
	}
	chat("r0", "", "s", "first", t0)
	chat("r1", "", "s", "second", t0.Add(time.Second))
	chat("c1", "r1", "s", "inner", t0.Add(2*time.Second))
	chat("x1", "", "other", "elsewhere", t0.Add(2*time.Second))
	chat("r2", "", "s", "third", t0.Add(3*time.Second))

	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "c1", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if b["root_run_id"] != "c1" || obj(t, b["run"], "run")["parent_run_id"] != "r1" {
		t.Fatalf("root_run_id %v run %v", b["root_run_id"], b["run"])
	}
	if got := keys(obj(t, b["ledgers"], "ledgers")); !reflect.DeepEqual(got, []string{"c1"}) {
		t.Fatalf("ledgers of %v, want the subrun's only", got)
	}
	sess := obj(t, b["session"], "session")
	if sess["session_id"] != "s" {
		t.Fatalf("session_id %v", sess["session_id"])
	}
	var got [][2]any
	for _, tr := range list(t, sess["turns"], "turns") {
		m := obj(t, tr, "turn")
		got = append(got, [2]any{m["run_id"], m["prompt"]})
		if m["kind"] != "chat" || m["answer"] != "a "+m["run_id"].(string) {
			t.Errorf("turn %v: kind %v answer %v", m["run_id"], m["kind"], m["answer"])
		}
	}
	if want := [][2]any{{"r0", "first"}, {"r1", "second"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("turns %v, want %v", got, want)
	}
}
