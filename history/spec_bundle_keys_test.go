package history_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestSpecBundleSectionKeys pins the section shapes of spec §6.2: a
// ledgers entry is {run_id, total, cursor_start, cursor_end, items,
// artifacts}, an item {cursor, record}, a timeline entry {run_id, cursor,
// node_id, status, effect_type, started_at, ended_at, duration_ms} and the
// session {session_id, turns}.
func TestSpecBundleSectionKeys(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "asker", SessionID: "sess_1",
		Vars: map[string]any{"context": map[string]any{"task": "demo"}}})

	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerOf(t, b, id)
	if got, want := keys(l), []string{"artifacts", "cursor_end", "cursor_start", "items", "run_id", "total"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ledgers entry keys %v, want %v", got, want)
	}
	if l["run_id"] != id {
		t.Errorf("ledgers entry run_id %v, want %s", l["run_id"], id)
	}
	items := list(t, l["items"], "items")
	if len(items) == 0 {
		t.Fatal("no ledger items")
	}
	for i, it := range items {
		if got := keys(obj(t, it, "item")); !reflect.DeepEqual(got, []string{"cursor", "record"}) {
			t.Errorf("items[%d] keys %v, want [cursor record]", i, got)
		}
	}
	tl := list(t, b["timeline"], "timeline")
	if len(tl) == 0 {
		t.Fatal("empty timeline")
	}
	wantTL := []string{"cursor", "duration_ms", "effect_type", "ended_at", "node_id", "run_id", "started_at", "status"}
	for i, e := range tl {
		if got := keys(obj(t, e, "timeline entry")); !reflect.DeepEqual(got, wantTL) {
			t.Errorf("timeline[%d] keys %v, want %v", i, got, wantTL)
		}
	}
	session := obj(t, b["session"], "session")
	if got := keys(session); !reflect.DeepEqual(got, []string{"session_id", "turns"}) {
		t.Errorf("session keys %v, want [session_id turns]", got)
	}
}
