package snapshot_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// A snapshot read with a created_at that is text but no ISO time (Python's
// JsonSnapshotStore keeps any non-empty string) keeps that text when saved
// again, as Python's save does; updated_at is the save's time.
func TestSavedSnapshotKeepsCreatedAtTextAsRead(t *testing.T) {
	t.Parallel()
	const text = "Thu, 01 Jan 2026 10:00:00 GMT"
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			ctx := context.Background()
			s, err := durable.SnapshotFromJSON(map[string]any{
				"snapshot_id": "s1", "run_id": "r1", "name": "n", "tags": []any{},
				"created_at": text, "updated_at": "later", "run_state": map[string]any{},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Save(ctx, s); err != nil {
				t.Fatal(err)
			}
			got, err := st.Load(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			v := got.JSONValue()
			for _, m := range v {
				switch m.Key {
				case "created_at":
					if m.Value != text {
						t.Errorf("created_at %v, want %q", m.Value, text)
					}
				case "updated_at":
					if got.UpdatedAt.IsZero() {
						t.Errorf("updated_at %v, want the save's time", m.Value)
					}
				}
			}
			if _, err := st.List(ctx, snapshot.ListParams{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
