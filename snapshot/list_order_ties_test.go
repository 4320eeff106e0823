package snapshot_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// TestListTiesByIDAscending: List orders newest created_at first, then by
// snapshot id (snapshot.sortAndLimit; Python's JSON store reads the files
// in name order and sorts stably by created_at, reverse). Snapshots taken
// in the same instant come in id order, and a limit keeps the first ids.
func TestListTiesByIDAscending(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			ctx := context.Background()
			same := durable.NewTime(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
			older := durable.NewTime(same.Add(-time.Hour))
			for _, s := range []struct {
				id string
				at durable.Time
			}{{"b", same}, {"old", older}, {"c", same}, {"a", same}} {
				if err := st.Save(ctx, &durable.Snapshot{SnapshotID: s.id, RunID: "r", Name: s.id, CreatedAt: s.at,
					RunState: runState("r")}); err != nil {
					t.Fatal(err)
				}
			}
			ids := func(p snapshot.ListParams) []string {
				got, err := st.List(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				out := []string{}
				for _, s := range got {
					out = append(out, s.SnapshotID)
				}
				return out
			}
			if g, w := ids(snapshot.ListParams{}), []string{"a", "b", "c", "old"}; !slices.Equal(g, w) {
				t.Errorf("List = %v, want %v", g, w)
			}
			if g, w := ids(snapshot.ListParams{Limit: 2}), []string{"a", "b"}; !slices.Equal(g, w) {
				t.Errorf("List(limit 2) = %v, want %v", g, w)
			}
		})
	}
}
