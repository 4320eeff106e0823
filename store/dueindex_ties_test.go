package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestDueListingOfRunsDueAtTheSameInstantDoesNotWalkThemAll: a fleet of
// runs told to wait until one instant (09:00, or WAIT_UNTILs computed from
// one clock reading) all tie on the deadline. Listing a batch of them
// must walk about the batch, as for runs with distinct deadlines, not
// every run tied with the last one returned: the heap is ordered by
// (deadline, run id), the order ListDue returns. The walk's allocations
// (result, frontier, its boxed positions) count what it visits: they stay
// bounded by the batch, however many runs share the instant.
func TestDueListingOfRunsDueAtTheSameInstantDoesNotWalkThemAll(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	const limit = 100
	for _, n := range []int{1_000, 50_000} {
		var d DueIndex
		for i := range n {
			d.Set(fmt.Sprintf("r%06d", (i*7919)%n), durable.NewTime(t0))
		}
		now := t0.Add(time.Second)
		due := d.ListDue(now, limit)
		if len(due) != limit {
			t.Fatalf("%d tied runs: listed %d, want %d", n, len(due), limit)
		}
		for i, r := range due {
			if want := fmt.Sprintf("r%06d", i); r.RunID != want {
				t.Fatalf("%d tied runs: listing[%d] = %s, want %s (run id order)", n, i, r.RunID, want)
			}
		}
		allocs := testing.AllocsPerRun(3, func() { d.ListDue(now, limit) })
		t.Logf("%d tied: %v allocs", n, allocs)
		if allocs > 4*limit {
			t.Fatalf("listing %d of %d runs due at the same instant made %v allocations: it walked the runs tied with the last one returned", limit, n, allocs)
		}
	}
}
