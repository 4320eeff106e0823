package observe_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestFollowersRecordsAreTheirOwnWhileOthersAreServed checks the
// promise of observe.Event (observe.go: "Each follower's Records are its
// own") and of Store.send ("each with records of its own").
//
// The bug this guards against: send handed the notification's records to
// the first follower and only then cloned those very records for each
// following follower. The first follower owns them from the moment its
// channel receive returns, so a follower that changed its records (as
// TestSubscribersGetTheirOwnRecords allows) changed what later followers
// were given while send was still copying for them: they received its
// changes, and a change to a map being cloned aborted the process ("fatal
// error: concurrent map clone and map write") in the writer's commit path.
//
// Here every follower first looks for another follower's mark in its own
// records and then marks them (slice elements only, so the race cannot
// crash the test). With correct copies no follower ever sees a mark.
// The overlap depends on scheduling but is reached in practice on every
// run (16 followers, 3 events; ~40 of the 45 copies were seen marked,
// ~25 with GOMAXPROCS=1).
func TestFollowersRecordsAreTheirOwnWhileOthersAreServed(t *testing.T) {
	obs := observe.Wrap(memory.New())
	ctx := context.Background()
	const followers, items, events = 16, 100_000, 3
	var saw atomic.Int64
	var wg sync.WaitGroup
	subs := make([]*observe.Subscription, followers)
	for i := range subs {
		subs[i] = obs.Subscribe("r", events)
		wg.Add(1)
		go func(s *observe.Subscription) {
			defer wg.Done()
			for ev := range s.C {
				for _, r := range ev.Records {
					list := r.Result.(map[string]any)["items"].([]any)
					for _, v := range list {
						if v == "marked by a follower" {
							saw.Add(1)
							break
						}
					}
					for j := len(list) - 1; j >= 0; j-- {
						list[j] = "marked by a follower"
					}
				}
			}
		}(subs[i])
	}
	list := make([]any, items)
	for i := range list {
		list[i] = "stored"
	}
	for e := 0; e < events; e++ {
		r := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
			Result: map[string]any{"items": list}}
		if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{r}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range subs {
		s.Cancel()
	}
	wg.Wait()
	if n := saw.Load(); n > 0 {
		t.Errorf("%d events reached a follower with another follower's changes in them: send clones the records "+
			"it already handed to the first follower, while that follower may be changing them", n)
	}
}
