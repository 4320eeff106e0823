package memory_test

// What store/store.go's doc comments promise, checked on the memory backend.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func TestDocumentedStoreDocComments(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	defer st.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id, parent string, created, updated int) {
		r := &durable.RunState{RunID: id, WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a",
			Vars: map[string]any{}, ParentRunID: parent,
			CreatedAt: durable.NewTime(base.Add(time.Duration(created) * time.Second)),
			UpdatedAt: durable.NewTime(base.Add(time.Duration(updated) * time.Second))}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	mk("p", "", 0, 0)
	mk("c1", "p", 2, 9)
	mk("c2", "p", 1, 3)

	// RunGet: unknown ids return ErrNotFound.
	if _, err := st.RunGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet unknown: %v", err)
	}
	// RunList: most recently updated first.
	runs, err := st.RunList(ctx, &store.RunListParams{ParentID: "p"})
	if err != nil || len(runs) != 2 || runs[0].RunID != "c1" {
		t.Errorf("RunList order: %v %v", ids(runs), err)
	}
	// RunListChildren: oldest first.
	runs, err = st.RunListChildren(ctx, "p", "")
	if err != nil || len(runs) != 2 || runs[0].RunID != "c2" {
		t.Errorf("RunListChildren order: %v %v", ids(runs), err)
	}
	// RunListParams.Limit: negative means 1.
	runs, _ = st.RunList(ctx, &store.RunListParams{Limit: -5})
	if len(runs) != 1 {
		t.Errorf("Limit -5 gave %d runs", len(runs))
	}
	// RunCommit with Create of an existing run: ErrAlreadyExists.
	err = st.RunCommit(ctx, &store.CommitParams{Run: &durable.RunState{RunID: "p", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}, Create: true})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("create existing: %v", err)
	}
	// RunDelete reports whether the run existed.
	if ok, err := st.RunDelete(ctx, "c2"); !ok || err != nil {
		t.Errorf("RunDelete existing: %v %v", ok, err)
	}
	if ok, err := st.RunDelete(ctx, "c2"); ok || err != nil {
		t.Errorf("RunDelete again: %v %v", ok, err)
	}
	// RunClaimer: another owner's live claim → ErrConflict (ClaimHeldError); Renew of a claim not held → ErrConflict.
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "p", Owner: "a", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	err = st.RunClaim(ctx, &store.RunClaimParams{RunID: "p", Owner: "b", TTL: time.Minute})
	var held *store.ClaimHeldError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &held) || held.Owner != "a" {
		t.Errorf("claim held: %v", err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "p", Owner: "b", TTL: time.Minute, Renew: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renew of another's claim: %v", err)
	}
}

func ids(runs []*durable.RunState) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.RunID)
	}
	return out
}

// docs/writing-a-store.md and store.Deadline doc: WAIT_UNTIL and WAIT_EVENT
// with a deadline are indexed, unless host-paused; user, job and subworkflow
// waits with an until are kept out.
func TestDocumentedDeadlineRules(t *testing.T) {
	until := durable.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	mk := func(reason durable.WaitReason, paused bool) *durable.RunState {
		vars := map[string]any{}
		if paused {
			vars["_runtime"] = map[string]any{"control": map[string]any{"paused": true}}
		}
		return &durable.RunState{RunID: "r", Status: durable.RunWaiting, Vars: vars,
			Waiting: &durable.WaitState{Reason: reason, Until: until}}
	}
	for reason, want := range map[durable.WaitReason]bool{
		durable.WaitUntil: true, durable.WaitEvent: true,
		durable.WaitUser: false, durable.WaitJob: false, durable.WaitSubworkflow: false,
	} {
		if _, ok := store.Deadline(mk(reason, false)); ok != want {
			t.Errorf("%s: indexed %v, want %v", reason, ok, want)
		}
		if _, ok := store.Deadline(mk(reason, true)); ok {
			t.Errorf("%s paused: indexed", reason)
		}
	}
}

// docs/writing-a-store.md RunClaimer: Force takes a live claim; Renew fails
// with ErrConflict when the row is another owner's or gone.
func TestDocumentedClaimForceAndRenew(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	defer st.Close()
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "a", TTL: time.Minute, Renew: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renew of a missing claim: %v", err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "a", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "b", TTL: time.Minute, Force: true}); err != nil {
		t.Errorf("force: %v", err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "a", TTL: time.Minute, Renew: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renew after losing the claim: %v", err)
	}
	if err := st.RunRelease(ctx, "r", "b"); err != nil {
		t.Fatal(err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "b", TTL: time.Minute, Renew: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renew after release: %v", err)
	}
}
