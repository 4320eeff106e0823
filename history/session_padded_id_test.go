package history_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestExportSessionOfRunStartedWithPaddedSessionID: the session export
// lists a session's runs by its trimmed id. A run started with session
// " s1 " on SQLite (which finds runs by the session id as stored) used to
// be exported with no turns, itself included; Start stores the id trimmed.
func TestExportSessionOfRunStartedWithPaddedSessionID(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "runs.sqlite3")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	arts := artifact.NewMemory()
	rt := newRuntime(t, st, arts, newClock())
	first := startTick(t, rt, runtime.StartParams{WorkflowID: "chat_answer", SessionID: "s1",
		Vars: map[string]any{"context": messages(user("hello"))}})
	padded := startTick(t, rt, runtime.StartParams{WorkflowID: "chat_answer", SessionID: " s1 ",
		Vars: map[string]any{"context": messages(user("again"))}})
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, padded, history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	session := obj(t, b["session"], "session")
	turns := list(t, session["turns"], "turns")
	var ids []any
	for _, turn := range turns {
		ids = append(ids, obj(t, turn, "turn")["run_id"])
	}
	if session["session_id"] != "s1" || len(ids) != 2 || ids[0] != first || ids[1] != padded {
		t.Fatalf("session of the run started in session %q: id %v, turns %v, want s1 with turns [%s %s]",
			" s1 ", session["session_id"], ids, first, padded)
	}
}
