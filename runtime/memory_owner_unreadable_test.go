package runtime_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	_ "modernc.org/sqlite"
)

// A session-scoped memory effect writes into the synthetic owner run
// session_memory_<sid>. On SQLite (and PostgreSQL) a row whose run_json
// cannot be decoded reads as absent, so writeOwner built a fresh owner and
// committed it with Create, which the existing row refused; the loop took
// that for a race with another writer, and after its attempts the effect
// failed with "still changed by other writers … version conflict", the
// corrupt row named only in a log line. The effect's error must say that
// the owner run is unreadable, and the row must not be overwritten.
func TestUnreadableSessionOwnerRowNamedInMemoryError(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/db.sqlite"
	arts := artifact.NewMemory()
	wf := &runtime.Workflow{ID: "p", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote,
				Payload: map[string]any{"note": "hi", "scope": "session"}, ResultKey: "r"}, "b")
		}),
		"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	open := func() (*runtime.Runtime, *sqlite.Store) {
		sq, err := sqlite.New(ctx, sqlite.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: sq, Registry: reg, Artifacts: arts})
		if err != nil {
			t.Fatal(err)
		}
		return rt, sq
	}
	rt, sq := open()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("first note: %v %v", st, err)
	}
	if err := sq.Close(); err != nil {
		t.Fatal(err)
	}
	owner := runtime.SessionMemoryRunID("s1")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := db.Exec(`UPDATE runs SET run_json = '{"run_id": "torn' WHERE run_id = ?`, owner); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("owner row %s not found", owner)
	}
	db.Close()

	rt, sq = open()
	id, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "p", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed {
		t.Fatalf("run %s; want failed on the unreadable owner row", st.Status)
	}
	if !strings.Contains(st.Error, owner+" is unreadable") || strings.Contains(st.Error, "other writers") {
		t.Errorf("run error %q; want it to say the owner run %s is unreadable, not a write race", st.Error, owner)
	}
	if err := sq.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var text string
	if err := db.QueryRow(`SELECT run_json FROM runs WHERE run_id = ?`, owner).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != `{"run_id": "torn` {
		t.Errorf("the unreadable owner row was overwritten: %.200q", text)
	}
}
