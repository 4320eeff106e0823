package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// A repeated create under the same id with another parent run is refused
// naming parent_run_id, the field that differs, as Python's
// verify_run_identity compares it before the digest. Dropping the parent
// comparison would still refuse it, but naming vars._meta.creation_digest.
func TestStartExplicitIDOtherParentConflictsOnParentRunID(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	ctx := context.Background()
	p := runtime.StartParams{WorkflowID: "chain", RunID: "run-p", ParentRunID: "parent-1"}
	if _, err := f.rt.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.ParentRunID = "parent-2"
	var conflict *runtime.IdentityConflictError
	if _, err := f.rt.Start(ctx, p); !errors.As(err, &conflict) || conflict.Field != "parent_run_id" ||
		conflict.Stored != "parent-1" || conflict.Given != "parent-2" {
		t.Fatalf("err = %v (%+v), want an identity conflict on parent_run_id", err, conflict)
	}
}

// vars._meta.occurrence is part of the identity on its own: a stored run
// whose occurrence differs from the request's conflicts even when the
// creation digest matches. Dropping "occurrence" from the compared keys
// would return the run as the same one.
func TestStartExplicitIDComparesMetaOccurrence(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	ctx := context.Background()
	p := runtime.StartParams{WorkflowID: "chain", RunID: "run-o", Vars: map[string]any{"_meta": map[string]any{"occurrence": 1}}}
	if _, err := f.rt.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	run, err := f.st.RunGet(ctx, "run-o")
	if err != nil {
		t.Fatal(err)
	}
	run.Vars["_meta"].(map[string]any)["occurrence"] = json.Number("2")
	if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	var conflict *runtime.IdentityConflictError
	if _, err := f.rt.Start(ctx, p); !errors.As(err, &conflict) || conflict.Field != "vars._meta.occurrence" {
		t.Fatalf("err = %v, want an identity conflict on vars._meta.occurrence", err)
	}
}

// A new run has committed no effect: vars._runtime.effect_seq starts at 0
// (effectSeq counts committed effects). Starting it at another value would
// shift every effect key of the run.
func TestStartSetsEffectSeqToZero(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(2))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := st.Vars["_runtime"].(map[string]any)
	if n, ok := runtime.AsInt(rt["effect_seq"]); !ok || n != 0 {
		t.Fatalf("_runtime.effect_seq = %#v, want 0", rt["effect_seq"])
	}
}
