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

type namedBool bool

// Deadline agrees with the stored run whichever level of
// _runtime.control.paused a caller typed, and other typed values beside
// the path (the kernel's Go ints) neither pause a run nor unpause it.
func TestDeadlineOfTypedPauseAtEachLevel(t *testing.T) {
	for name, rt := range map[string]any{
		"typed _runtime":   map[string]map[string]bool{"control": {"paused": true}},
		"named bool":       map[string]any{"control": map[string]any{"paused": namedBool(true)}},
		"typed unpaused":   map[string]map[string]bool{"control": {"paused": false}},
		"ints beside":      map[string]any{"effect_seq": 3, "control": map[string]any{"paused": true}},
		"ints, no control": map[string]any{"effect_seq": int64(3)},
		"control not map":  map[string]any{"control": []int{1}},
		"paused not bool":  map[string]any{"control": map[string]any{"paused": 1}},
	} {
		r := &durable.RunState{
			RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
			Vars:    map[string]any{"_runtime": rt},
			Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Unix(100, 0))},
		}
		stored, err := r.StoredCopy()
		if err != nil {
			t.Fatal(name, err)
		}
		_, onCommit := store.Deadline(r)
		_, onRead := store.Deadline(stored)
		if onCommit != onRead || onRead == stored.HostPaused() {
			t.Errorf("%s: due on commit %v, on read %v, stored run paused %v", name, onCommit, onRead, stored.HostPaused())
		}
	}
}
