package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// TestStartStoresSessionIDTrimmed: Start stores the session id trimmed of
// Python's whitespace, as the gateway (spec: session_id "trimmed; empty
// means none") and START_SUBWORKFLOW take it. The SQL stores find a run by
// its session id as written, so a padded one was found by no session
// filter and history's session export (which passes the trimmed id)
// exported no turns for it.
func TestStartStoresSessionIDTrimmed(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(1))
	ctx := context.Background()
	for given, want := range map[string]string{" s1 ": "s1", "\u3000s1\x1f\n": "s1", "s 1": "s 1", " \t ": ""} {
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", SessionID: given})
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.SessionID != want {
			t.Errorf("Start(SessionID %q) stored session %q, want %q", given, st.SessionID, want)
		}
	}
}

// TestStartExplicitIDOverPaddedStoredSession: a create-if-absent naming a
// run Python stored with a padded session id, in that same session, is
// that run, not an identity conflict: the session ids are compared trimmed
// on both sides (Python's verify_run_identity), though Start now stores
// its own trimmed. A different session still conflicts.
func TestStartExplicitIDOverPaddedStoredSession(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(1))
	ctx := context.Background()
	p := runtime.StartParams{WorkflowID: "chain", RunID: "r-padded", SessionID: " s1 ", Vars: map[string]any{"a": "b"}}
	if _, err := f.rt.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	// As Python writes it: the session id as its caller gave it.
	run, err := f.st.RunGet(ctx, "r-padded")
	if err != nil {
		t.Fatal(err)
	}
	run.SessionID = " s1 "
	if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	if id, err := f.rt.Start(ctx, p); err != nil || id != "r-padded" {
		t.Fatalf("Start(RunID r-padded, SessionID %q) over the run stored in session %q = (%q, %v), want the run itself",
			p.SessionID, " s1 ", id, err)
	}
	other := p
	other.SessionID = "s2"
	var conflict *runtime.IdentityConflictError
	if _, err := f.rt.Start(ctx, other); !errors.As(err, &conflict) || conflict.Field != "session_id" {
		t.Fatalf("Start(RunID r-padded, SessionID s2) over the run of session %q: %v, want a session_id IdentityConflictError", " s1 ", err)
	}
}
