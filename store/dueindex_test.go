package store

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestListDueMatchesASortOfEveryDueRun: the best-first walk returns what
// sorting every due run by (deadline, run id) and cutting at limit
// returns, ties across the cut included, after random sets, moves and
// removals.
func TestListDueMatchesASortOfEveryDueRun(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		var d DueIndex
		want := map[string]time.Time{}
		for range rng.IntN(60) {
			id := fmt.Sprintf("r%02d", rng.IntN(40))
			if rng.IntN(5) == 0 {
				d.Remove(id)
				delete(want, id)
				continue
			}
			at := base.Add(time.Duration(rng.IntN(8)) * time.Second) // few values: many ties
			d.Set(id, durable.Time{Time: at})
			want[id] = at
		}
		now := base.Add(time.Duration(rng.IntN(9)) * time.Second)
		limit := rng.IntN(12)
		var all []DueRun
		for id, at := range want {
			if !at.After(now) {
				all = append(all, DueRun{RunID: id, Until: durable.Time{Time: at}})
			}
		}
		slices.SortFunc(all, func(a, b DueRun) int {
			if c := a.Until.Compare(b.Until.Time); c != 0 {
				return c
			}
			return cmp.Compare(a.RunID, b.RunID)
		})
		all = all[:min(len(all), limit)]
		got := d.ListDue(now, limit)
		if !slices.EqualFunc(got, all, func(a, b DueRun) bool { return a.RunID == b.RunID && a.Until.Equal(b.Until.Time) }) {
			t.Fatalf("round %d: ListDue(now+%v, %d) = %v, want %v", round, now.Sub(base), limit, got, all)
		}
	}
}
