package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
)

// StartParams.SessionFromRunID makes a sessionless run its own session, as
// the gateway does for a sessionless start; a session given is kept; with
// an explicit run id it counts as that session in the identity, so the
// same create-if-absent finds its run and one naming another session
// conflicts.
func TestStartSessionFromRunID(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	ctx := context.Background()
	session := func(id string) string {
		t.Helper()
		st, err := f.rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return st.SessionID
	}

	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", SessionFromRunID: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := session(id); got != id {
		t.Errorf("generated id: session %q, want the run's id %q", got, id)
	}
	plain, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	if got := session(plain); got != "" {
		t.Errorf("without the option: session %q, want none", got)
	}
	given, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", SessionID: " s1 ", SessionFromRunID: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := session(given); got != "s1" {
		t.Errorf("session given: %q, want s1 (kept)", got)
	}

	explicit := runtime.StartParams{WorkflowID: "chain", RunID: "run-x", SessionFromRunID: true}
	if _, err := f.rt.Start(ctx, explicit); err != nil {
		t.Fatal(err)
	}
	if got := session("run-x"); got != "run-x" {
		t.Errorf("explicit id: session %q, want run-x", got)
	}
	if again, err := f.rt.Start(ctx, explicit); err != nil || again != "run-x" {
		t.Errorf("the same create-if-absent again: (%q, %v), want its run", again, err)
	}
	same := runtime.StartParams{WorkflowID: "chain", RunID: "run-x", SessionID: "run-x"}
	if again, err := f.rt.Start(ctx, same); err != nil || again != "run-x" {
		t.Errorf("create-if-absent naming the session run-x: (%q, %v), want its run", again, err)
	}
	other := runtime.StartParams{WorkflowID: "chain", RunID: "run-x", SessionID: "s2"}
	var conflict *runtime.IdentityConflictError
	if _, err := f.rt.Start(ctx, other); !errors.As(err, &conflict) {
		t.Errorf("create-if-absent naming session s2: %v, want an IdentityConflictError", err)
	}
}
