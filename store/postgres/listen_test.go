package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestFollowOtherRunnersAppends: a follower of a run's ledger through
// one store (one gateway process) is woken by the appends another store
// on the database makes (a runner on another machine), once committed,
// and not twice for its own: those come with their records, from the
// in-process decorator.
func TestFollowOtherRunnersAppends(t *testing.T) {
	testURL(t)
	t.Parallel()
	rs := openRunners(t, 2)
	runner, gateway := rs[0], rs[1]
	obs := observe.Wrap(gateway)
	sub := obs.Subscribe("followed", 16)
	defer sub.Cancel()
	other := obs.Subscribe("elsewhere", 16)
	defer other.Cancel()

	ctx, stop := context.WithCancel(t.Context())
	ready := make(chan struct{})
	followed := make(chan error, 1)
	go func() {
		followed <- obs.Follow(ctx, observe.FollowConfig{Logger: testLogger(t), Ready: func() { close(ready) }})
	}()
	<-ready

	create := func(s store.Store, id string) *durable.RunState {
		r := testRun(id)
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{testRecord(id, "start")}}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	create(runner, "followed")
	ev := next(t, sub)
	if ev.RunID != "followed" || ev.Records != nil {
		t.Fatalf("event for the other store's append: %+v; want a wake-up for run followed", ev)
	}
	recs, err := gateway.LedgerList(ctx, &store.LedgerListParams{RunID: "followed"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("the woken follower reads %d records (%v); want the appended one", len(recs), err)
	}

	// The gateway's own append arrives once, with its records; the next
	// event is the other store's later append, with no wake-up between.
	if err := obs.LedgerAppend(ctx, "followed", []*durable.StepRecord{testRecord("followed", "own")}); err != nil {
		t.Fatal(err)
	}
	if err := runner.LedgerAppend(ctx, "followed", []*durable.StepRecord{testRecord("followed", "theirs")}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); len(ev.Records) != 1 || ev.Records[0].NodeID != "own" {
		t.Fatalf("event for the follower's own append: %+v; want its record", ev)
	}
	if ev := next(t, sub); ev.Records != nil || ev.RunID != "followed" {
		t.Fatalf("event after the own append: %+v; want the other store's wake-up only", ev)
	}
	select {
	case ev := <-other.C:
		t.Fatalf("a subscription to another run got %+v", ev)
	default:
	}

	stop()
	if err := <-followed; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
}

func next(t *testing.T, sub *observe.Subscription) observe.Event {
	t.Helper()
	select {
	case ev := <-sub.C:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return observe.Event{}
	}
}
