package snapshot_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// A snapshot saved with a
// caller-chosen created_at (sub-microsecond, in another zone) must read back
// from every store as the JSON store keeps it: UTC, to the
// microsecond (spec §1.10 created_at is an ISO string; the JSON store writes
// durable.FormatTime and reads that back). The memory store kept the
// caller's value as given, so Load returned another time than the JSON
// store's, and List ordered two snapshots taken within one microsecond by
// their nanoseconds where the JSON store ties them and orders them by id (docs/compatibility.md: "every backend breaks ties the
// same way, so a listing does not depend on the store").
func TestCreatedAtIsStoredInUTCToTheMicrosecond(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("CEST", 2*3600)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, zone)
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			ctx := context.Background()
			// "a" is 800ns older than "b", both in the same microsecond.
			for _, s := range []struct {
				id string
				at time.Time
			}{{"a", base.Add(100 * time.Nanosecond)}, {"b", base.Add(900 * time.Nanosecond)}} {
				if err := st.Save(ctx, &durable.Snapshot{SnapshotID: s.id, RunID: "r", CreatedAt: durable.Time{Time: s.at},
					RunState: runState("r")}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := st.Load(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			want := base.UTC().Truncate(time.Microsecond)
			if !got.CreatedAt.Time.Equal(want) || got.CreatedAt.Location() != time.UTC {
				t.Errorf("Load(a).CreatedAt = %v, want %v (UTC, to the microsecond, as stored)", got.CreatedAt.Time, want)
			}
			list, err := st.List(ctx, snapshot.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list {
				ids = append(ids, s.SnapshotID)
			}
			if w := []string{"a", "b"}; !slices.Equal(ids, w) {
				t.Errorf("List = %v, want %v (equal stored created_at: by id)", ids, w)
			}
		})
	}
}
