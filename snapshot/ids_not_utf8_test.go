package snapshot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// A snapshot id that is not UTF-8 named the file, but the file's
// snapshot_id was written with U+FFFD: the id List returned could not be
// loaded or deleted, and Load returned another id than asked for. Save
// refuses it, saying why.
func TestJSONSnapshotIDNotUTF8IsRefusedOrRoundTrips(t *testing.T) {
	ctx := context.Background()
	st, err := snapshot.NewJSON(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := "snap-\xff"
	if err := st.Save(ctx, &durable.Snapshot{SnapshotID: id, RunID: "r1", RunState: map[string]any{"run_id": "r1"}}); err != nil {
		if !strings.Contains(err.Error(), "not UTF-8") {
			t.Fatalf("Save refused the id without saying why: %v", err)
		}
		return
	}
	got, err := st.Load(ctx, id)
	if err != nil {
		t.Fatalf("Load(%q) after Save: %v", id, err)
	}
	if got.SnapshotID != id {
		t.Errorf("Load(%q).SnapshotID = %q, want the id saved", id, got.SnapshotID)
	}
	list, err := st.List(ctx, snapshot.ListParams{})
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %d, %v", len(list), err)
	}
	if _, err := st.Load(ctx, list[0].SnapshotID); err != nil {
		t.Errorf("Load of the id List returned (%q): %v", list[0].SnapshotID, err)
	}
	if ok, err := st.Delete(ctx, list[0].SnapshotID); !ok || err != nil {
		t.Errorf("Delete of the id List returned (%q) = %v, %v; want true", list[0].SnapshotID, ok, err)
	}
}

// Two distinct ids that are not UTF-8 were two files that List showed
// under one id.
func TestJSONSnapshotIDsNotUTF8NeverListTheSame(t *testing.T) {
	ctx := context.Background()
	st, err := snapshot.NewJSON(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a\xff", "a\xfe"} {
		if err := st.Save(ctx, &durable.Snapshot{SnapshotID: id, RunID: "r1", RunState: map[string]any{}}); err != nil {
			if !strings.Contains(err.Error(), "not UTF-8") {
				t.Fatalf("Save(%q) refused without saying why: %v", id, err)
			}
			return
		}
	}
	list, err := st.List(ctx, snapshot.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 2 && list[0].SnapshotID == list[1].SnapshotID {
		t.Errorf("List returned two snapshots with the same id %q", list[0].SnapshotID)
	}
}
