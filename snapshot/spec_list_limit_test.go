package snapshot_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// TestSpecListDefaultLimit pins spec §4.9: list(run_id?, tag?, query?,
// limit=100) returns at most 100 snapshots, newest created_at first, when
// the caller gives no limit (Go: 0).
func TestSpecListDefaultLimit(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			const n = 105
			// One second apart: saves in one microsecond would tie, and
			// ties go by id, not by save order.
			t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			for i := range n {
				at := durable.NewTime(t0.Add(time.Duration(i) * time.Second))
				if err := s.Save(t.Context(), &durable.Snapshot{SnapshotID: fmt.Sprintf("s%03d", i), RunID: "r", CreatedAt: at}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.List(t.Context(), snapshot.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 100 {
				t.Fatalf("List(Limit 0) = %d snapshots, want 100", len(got))
			}
			if got[0].SnapshotID != fmt.Sprintf("s%03d", n-1) || got[99].SnapshotID != fmt.Sprintf("s%03d", n-100) {
				t.Errorf("List(Limit 0) runs %s … %s; want the 100 newest, newest first", got[0].SnapshotID, got[99].SnapshotID)
			}
			all, err := s.List(t.Context(), snapshot.ListParams{Limit: n + 1})
			if err != nil || len(all) != n {
				t.Errorf("List(Limit %d) = %d snapshots, %v; want %d", n+1, len(all), err, n)
			}
		})
	}
}
