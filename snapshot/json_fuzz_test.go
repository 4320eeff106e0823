package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/snapshot"
	"github.com/abstractframework/abstractgateway/store"
)

// FuzzJSONSnapshotFile writes arbitrary bytes as snapshot_s1.json beside a
// snapshot saved by the store, then reads the directory. Properties: Load
// of the good snapshot and a listing holding it succeed whatever s1 holds;
// Load(s1) returns snapshot s1 or an error naming the file that is not
// ErrNotFound; List holds s1 exactly when Load reads it, and every listed
// snapshot loads by its id to the same value; a snapshot read saves back
// and loads again to the same bytes (its canonical form is stable), and a
// new snapshot saved beside them is listed and loaded.
func FuzzJSONSnapshotFile(f *testing.F) {
	f.Add([]byte(`{"snapshot_id": "s1", "run_id": "r1", "step_id": null, "name": "n", "description": null, "tags": ["a", 1], "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "yesterday", "run_state": {"run_id": "r1"}}`))
	f.Add([]byte(`{"snapshot_id": "s1", "run_id": "r1"}`))
	f.Add([]byte(`{"snapshot_id": "other", "run_id": "r1", "name": "x"}`))
	f.Add([]byte(`{"snapshot_id": "good", "run_id": "r1", "name": "x"}`))
	f.Add([]byte(`{"snapshot_id": "s1", "run_id": 5}`))
	f.Add([]byte(`{"snapshot_id": "s1", "run_id": "r1", "created_at": 12, "run_state": {"v": NaN}}`))
	f.Add([]byte(`{"snapshot_id": "s1"`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		dir := t.TempDir()
		st, err := snapshot.NewJSON(dir)
		if err != nil {
			t.Fatal(err)
		}
		st.NowFunc = func() time.Time { return time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) }
		good := &durable.Snapshot{SnapshotID: "good", RunID: "r1", Name: "kept", Tags: []string{"t"}, RunState: map[string]any{"run_id": "r1"}}
		if err := st.Save(ctx, good); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "snapshot_s1.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if g, err := st.Load(ctx, "good"); err != nil || g.Name != "kept" {
			t.Fatalf("Load(good) = %v, %v", g, err)
		}
		s1, loadErr := st.Load(ctx, "s1")
		switch {
		case loadErr == nil && s1.SnapshotID != "s1":
			t.Fatalf("Load(s1) returned snapshot %q: a listing would show it, and no Load or Delete of that id finds it", s1.SnapshotID)
		case loadErr != nil && (errors.Is(loadErr, store.ErrNotFound) || !strings.Contains(loadErr.Error(), path)):
			t.Fatalf("Load(s1) = %v; want an error naming %s, not not-found", loadErr, path)
		}
		list, err := st.List(ctx, snapshot.ListParams{Limit: 1000})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		var ids []string
		for _, s := range list {
			ids = append(ids, s.SnapshotID)
			l, err := st.Load(ctx, s.SnapshotID)
			if err != nil {
				t.Fatalf("listed snapshot %q does not load: %v", s.SnapshotID, err)
			}
			a, _ := pyjson.Marshal(s.JSONValue(), pyjson.Pretty)
			b, _ := pyjson.Marshal(l.JSONValue(), pyjson.Pretty)
			if !bytes.Equal(a, b) {
				t.Fatalf("listed snapshot %q differs from its Load:\n%s\n---\n%s", s.SnapshotID, a, b)
			}
		}
		slices.Sort(ids)
		want := []string{"good"}
		if loadErr == nil {
			want = []string{"good", "s1"}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("List lists %v, want %v (Load(s1) err %v)", ids, want, loadErr)
		}
		if loadErr == nil {
			if err := st.Save(ctx, s1); err != nil {
				t.Fatalf("Save of the snapshot as read: %v", err)
			}
			again, err := st.Load(ctx, "s1")
			if err != nil {
				t.Fatalf("Load after Save: %v", err)
			}
			a, _ := pyjson.Marshal(s1.JSONValue(), pyjson.Pretty)
			b, _ := pyjson.Marshal(again.JSONValue(), pyjson.Pretty)
			if !bytes.Equal(a, b) {
				t.Fatalf("snapshot saved and loaded again differs:\n%s\n---\n%s", a, b)
			}
			if err := st.Save(ctx, again); err != nil {
				t.Fatal(err)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, b) {
				t.Fatalf("second save wrote other bytes:\n%s\n---\n%s", now, b)
			}
		}
		if err := st.Save(ctx, &durable.Snapshot{SnapshotID: "new", RunID: "r2", Name: "fresh"}); err != nil {
			t.Fatal(err)
		}
		list, err = st.List(ctx, snapshot.ListParams{Limit: 1000})
		if err != nil || len(list) != len(want)+1 {
			t.Fatalf("List after a save = %d snapshots, %v; want %d", len(list), err, len(want)+1)
		}
	})
}

// TestSnapshotFileNamingAnotherIDIsRefused: a snapshot_s1.json whose
// snapshot_id is "good" (a hand edit, a file copied to another name) is
// refused by Load("s1") with an error naming the file, and List skips it.
// Read as it is, List would show "good" twice, once for a file no Load or
// Delete of "good" reaches (found by FuzzJSONSnapshotFile). The run and
// artifact stores refuse a file naming another id the same way.
func TestSnapshotFileNamingAnotherIDIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, &durable.Snapshot{SnapshotID: "good", RunID: "r1", Name: "kept"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "snapshot_s1.json")
	if err := os.WriteFile(path, []byte(`{"snapshot_id": "good", "run_id": "r1", "name": "copy"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Load(ctx, "s1"); err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), path) {
		t.Errorf("Load(s1) = %v, %v; want an error naming %s", s, err, path)
	}
	list, err := st.List(ctx, snapshot.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "kept" {
		var names []string
		for _, s := range list {
			names = append(names, s.SnapshotID+"/"+s.Name)
		}
		t.Errorf("List = %v; want only good/kept", names)
	}
}
