package observe_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// A LedgerAppend that fails without appending notifies none of its
// records, even when the caller left a Seq in them (a record read from a
// ledger and appended again): only a Seq the store set says a record was
// appended. What would break: the append leaving the caller's Seq in
// place, so the failed write announces records that were never committed.
func TestFailedAppendIgnoresCallerSeqs(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(refusingLedger{memory.New()})
	sub := obs.Subscribe("", 4)
	defer sub.Cancel()
	r := rec("ghost")
	r.Seq = 7
	if err := obs.LedgerAppend(context.Background(), "ghost", []*durable.StepRecord{r}); err == nil {
		t.Fatal("the refused append returned no error")
	}
	if r.Seq != 0 {
		t.Errorf("Seq after a failed append = %d; want 0 (not appended)", r.Seq)
	}
	for _, ev := range drain(sub) {
		if len(ev.Records) > 0 {
			t.Fatalf("event %+v notifies records of an append that stored none", ev)
		}
	}
}

// An append refused for want of a run id wakes nobody: no ledger can have
// changed. What would break: waking with an empty RunID, which tells every
// follower of every run that ledgers may have changed, and each of them
// reads its ledgers again for nothing.
func TestAppendWithoutRunIDWakesNobody(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(memory.New())
	sub := obs.Subscribe("", 4)
	defer sub.Cancel()
	if err := obs.LedgerAppend(context.Background(), "", []*durable.StepRecord{rec("")}); err == nil {
		t.Fatal("an append without a run id succeeded")
	}
	if evs := drain(sub); len(evs) > 0 {
		t.Fatalf("events after an append refused for want of a run id: %+v; want none", evs)
	}
}
