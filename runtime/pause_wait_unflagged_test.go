package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// unflaggedPauseWait starts a 3-node chain, pauses it and then drops the
// paused flag as another writer could (a Python host, a process editing
// vars._runtime.control), leaving the run in the synthetic pause wait.
func unflaggedPauseWait(t *testing.T) (*fixture, string) {
	t.Helper()
	f := setup(t, chain(3))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Pause(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	run, err := f.st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	delete(run.Vars["_runtime"].(map[string]any)["control"].(map[string]any), "paused")
	if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	return f, id
}

// Spec §2.7: Pause is a no-op on a person's question (a real USER wait),
// not on a pause wait. A run left in its pause wait without the flag is
// paused again, and ResumeRun then continues it; it used to be a dead end
// (Pause and ResumeRun both no-ops, Resume refusing it as paused).
func TestPauseOfUnflaggedPauseWaitFlagsItForResumeRun(t *testing.T) {
	t.Parallel()
	f, id := unflaggedPauseWait(t)
	ctx := context.Background()
	st, err := f.rt.Pause(ctx, id, "again")
	if err != nil {
		t.Fatal(err)
	}
	if !runtime.IsPaused(st) {
		t.Fatal("Pause of a run in an unflagged pause wait was a no-op")
	}
	if st, err = f.rt.ResumeRun(ctx, id); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("ResumeRun = %v, %v; want the run completed", st, err)
	}
}

// Python's resume refuses paused runs only: an unflagged pause wait is
// answered like any other wait and the run continues.
func TestResumeOfUnflaggedPauseWaitContinues(t *testing.T) {
	t.Parallel()
	f, id := unflaggedPauseWait(t)
	st, err := f.rt.Resume(context.Background(), runtime.ResumeParams{RunID: id, WaitKey: "pause:" + id})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("Resume = %v, %v; want the run completed", st, err)
	}
}
