package store_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestDeadlineOfTypedPause: store.Deadline is what every backend's
// due index keeps for a committed run, and each computes it from the
// caller's RunState (memory, jsonfile newMeta, sqlite indexDeadline,
// postgres runArgs). It must agree with the run as stored (StoredCopy: as
// a read, or a reopen's re-index, gives it back), as RunLifecycle does
// since it normalizes typed vars. A pause held in typed maps reads back as
// paused (HostPaused true), but Deadline of the committed value still
// indexes the deadline: the run is listed due (and RunNextDue reports it)
// until the store is reopened.
func TestDeadlineOfTypedPause(t *testing.T) {
	r := &durable.RunState{
		RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
		Vars:    map[string]any{"_runtime": map[string]any{"control": map[string]bool{"paused": true}}},
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Unix(100, 0))},
	}
	stored, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	if !stored.HostPaused() {
		t.Fatal("the stored copy is not paused; the test premise fails")
	}
	_, onCommit := store.Deadline(r)
	_, onRead := store.Deadline(stored)
	if onCommit != onRead {
		t.Errorf("Deadline indexes the committed run: %v, the same run as stored and read back: %v (want equal: a paused run is not due)", onCommit, onRead)
	}
}
