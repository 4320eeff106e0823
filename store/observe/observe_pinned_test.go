package observe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// A subscription asked for with a buffer of 0 gets the minimum of 1, so
// an append with no reader waiting is still delivered.
func TestSubscribeBufferAtLeastOne(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(memory.New())
	sub := obs.Subscribe("r", 0)
	defer sub.Cancel()
	if err := obs.LedgerAppend(context.Background(), "r", []*durable.StepRecord{rec("r")}); err != nil {
		t.Fatal(err)
	}
	if evs := drain(sub); len(evs) != 1 || len(evs[0].Records) != 1 {
		t.Fatalf("events = %+v; want the append's one event", evs)
	}
}

// A delete that takes the place of a buffered records event drops that
// event, so the subscription reports Lagged: the follower must read again
// from its cursor.
func TestDeleteReplacingAnEventMarksLagged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obs := observe.Wrap(memory.New())
	sub := obs.Subscribe("a", 1)
	defer sub.Cancel()
	if err := obs.LedgerAppend(ctx, "a", []*durable.StepRecord{rec("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.LedgerDelete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if evs := drain(sub); len(evs) != 1 || !evs[0].Deleted {
		t.Fatalf("events = %+v; want the delete alone", evs)
	}
	if !sub.Lagged() {
		t.Error("Lagged() = false after the delete replaced a buffered event; want true")
	}
}

// A buffered merged delete (empty RunID) covers every run: a later delete
// that finds the buffer full is dropped, and the other buffered events
// stay, without a lag.
func TestMergedDeleteCoversLaterDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obs := observe.Wrap(memory.New())
	for _, r := range []string{"a", "b", "c", "d"} {
		if err := obs.LedgerAppend(ctx, r, []*durable.StepRecord{rec(r)}); err != nil {
			t.Fatal(err)
		}
	}
	sub := obs.Subscribe("", 2)
	defer sub.Cancel()
	for _, r := range []string{"a", "b", "c"} { // the third merges the buffer into one delete
		if _, err := obs.LedgerDelete(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := obs.LedgerAppend(ctx, "x", []*durable.StepRecord{rec("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.LedgerDelete(ctx, "d"); err != nil { // covered by the merged delete
		t.Fatal(err)
	}
	evs := drain(sub)
	if len(evs) != 2 || !evs[0].Deleted || evs[0].RunID != "" || evs[1].RunID != "x" || len(evs[1].Records) != 1 {
		t.Fatalf("events = %+v; want the merged delete, then x's records", evs)
	}
	if sub.Lagged() {
		t.Error("Lagged() = true; want false (no event was dropped)")
	}
}

// failingDelete fails every ledger delete, having removed nothing.
type failingDelete struct{ store.Store }

func (failingDelete) LedgerDelete(context.Context, string) (int64, error) {
	return 0, errors.New("connection reset")
}

// LedgerDelete tells the run's followers of the delete also when it
// failed: it may have removed part of the ledger.
func TestFailedDeleteStillNotifies(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(failingDelete{memory.New()})
	sub := obs.Subscribe("a", 2)
	defer sub.Cancel()
	if _, err := obs.LedgerDelete(context.Background(), "a"); err == nil {
		t.Fatal("the failing delete returned no error")
	}
	if evs := drain(sub); len(evs) != 1 || !evs[0].Deleted || evs[0].RunID != "a" {
		t.Fatalf("events = %+v; want a Deleted event for run a", evs)
	}
}

// A RunCommit that fails before appending notifies none of its records,
// even when the caller left a Seq in them: only a Seq the store set says
// a record was appended.
func TestFailedCommitIgnoresCallerSeqs(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(memory.New())
	sub := obs.Subscribe("", 4)
	defer sub.Cancel()
	r := rec("ghost")
	r.Seq = 7
	run := &durable.RunState{RunID: "ghost", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
	if err := obs.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{r}}); err == nil {
		t.Fatal("commit to a run that does not exist succeeded")
	}
	for _, ev := range drain(sub) {
		if len(ev.Records) > 0 {
			t.Fatalf("event %+v notifies records of a commit that appended none", ev)
		}
	}
}
