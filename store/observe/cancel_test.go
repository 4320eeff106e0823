package observe_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestCancelledSubscriptionIsNoLongerServed: after Cancel, appends and
// deletes go on (to the other followers) and none is sent to the closed
// subscription. What would break: a subscription left in the set when its
// channel is closed, so the next append panics the writer (send on a
// closed channel).
func TestCancelledSubscriptionIsNoLongerServed(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(memory.New())
	ctx := context.Background()
	gone := obs.Subscribe("a", 4)
	stays := obs.Subscribe("a", 4)
	defer stays.Cancel()
	gone.Cancel()
	if err := obs.LedgerAppend(ctx, "a", []*durable.StepRecord{rec("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.LedgerDelete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if evs := drain(stays); len(evs) != 2 || len(evs[0].Records) != 1 || !evs[1].Deleted {
		t.Fatalf("the remaining follower got %+v; want the append, then the delete", evs)
	}
	if ev, open := <-gone.C; open {
		t.Fatalf("the cancelled subscription got %+v", ev)
	}
}
