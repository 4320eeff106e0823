package snapshot_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
	"github.com/abstractframework/abstractgateway/store"
)

// fakeClock returns base, base+1s, base+2s… on successive calls.
func fakeClock() func() time.Time {
	t := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

type factory func(t *testing.T) snapshot.Store

func stores() map[string]factory {
	return map[string]factory{
		"Memory": func(t *testing.T) snapshot.Store {
			s := snapshot.NewMemory()
			s.NowFunc = fakeClock()
			return s
		},
		"JSON": func(t *testing.T) snapshot.Store {
			s, err := snapshot.NewJSON(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s.NowFunc = fakeClock()
			return s
		},
	}
}

func runState(id string) map[string]any {
	return map[string]any{"run_id": id, "status": "waiting", "vars": map[string]any{
		"n": json.Number("1.0"), "text": "ünïcode ✓", "list": []any{}, "null": nil}}
}

func TestStores(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("SaveLoad", func(t *testing.T) { t.Parallel(); testSaveLoad(t, newStore(t)) })
			t.Run("NotFound", func(t *testing.T) { t.Parallel(); testNotFound(t, newStore(t)) })
			t.Run("Delete", func(t *testing.T) { t.Parallel(); testDelete(t, newStore(t)) })
			t.Run("List", func(t *testing.T) { t.Parallel(); testList(t, newStore(t)) })
			t.Run("NoRunState", func(t *testing.T) { t.Parallel(); testNoRunState(t, newStore(t)) })
		})
	}
}

// testNoRunState: a snapshot saved without a run state loads with an
// empty object (run_state is an object on the wire, §1.10), from every
// store alike: the JSON store reads back the {} it wrote, and the memory
// store must not hand back nil where a reload of the same data would give
// {}.
func testNoRunState(t *testing.T, s snapshot.Store) {
	ctx := t.Context()
	snap := &durable.Snapshot{RunID: "r1", Name: "empty"}
	if err := s.Save(ctx, snap); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, snap.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunState == nil || len(got.RunState) != 0 {
		t.Errorf("run state loaded as %#v; want an empty object", got.RunState)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func testSaveLoad(t *testing.T, s snapshot.Store) {
	ctx := t.Context()
	snap := &durable.Snapshot{RunID: "run-1", StepID: "step-1", Name: "before deploy", Tags: []string{"prod"},
		RunState: runState("run-1")}
	if err := s.Save(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if !uuidRE.MatchString(snap.SnapshotID) {
		t.Errorf("assigned id %q is not a UUID4", snap.SnapshotID)
	}
	if snap.CreatedAt.IsZero() || !snap.UpdatedAt.Equal(snap.CreatedAt.Time) {
		t.Errorf("times after first save: created %v updated %v", snap.CreatedAt, snap.UpdatedAt)
	}
	got, err := s.Load(ctx, snap.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, snap) {
		t.Errorf("Load =\n %#v\nwant\n %#v", got, snap)
	}
	// Private copies.
	snap.RunState["vars"].(map[string]any)["text"] = "MUTATED"
	snap.Tags[0] = "MUTATED"
	got.RunState["status"] = "MUTATED"
	again, _ := s.Load(ctx, snap.SnapshotID)
	if again.Tags[0] != "prod" || again.RunState["status"] != "waiting" ||
		again.RunState["vars"].(map[string]any)["text"] != "ünïcode ✓" {
		t.Errorf("mutation leaked into the store: %#v", again)
	}
	// A second save keeps created_at and refreshes updated_at.
	created := again.CreatedAt
	again.Description = "edited"
	if err := s.Save(ctx, again); err != nil {
		t.Fatal(err)
	}
	third, _ := s.Load(ctx, snap.SnapshotID)
	if !third.CreatedAt.Equal(created.Time) || !third.UpdatedAt.After(created.Time) || third.Description != "edited" {
		t.Errorf("after re-save: created %v updated %v description %q", third.CreatedAt, third.UpdatedAt, third.Description)
	}
	// Nil tags are saved as an empty list.
	bare := &durable.Snapshot{SnapshotID: "bare", RunID: "run-2"}
	if err := s.Save(ctx, bare); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, "bare"); got == nil || got.Tags == nil || len(got.Tags) != 0 {
		t.Errorf("bare snapshot = %#v", got)
	}
}

func testNotFound(t *testing.T, s snapshot.Store) {
	if _, err := s.Load(t.Context(), "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load(missing) err = %v, want ErrNotFound", err)
	}
	if _, err := s.Load(t.Context(), "../x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load(../x) err = %v, want ErrNotFound", err)
	}
}

func testDelete(t *testing.T, s snapshot.Store) {
	ctx := t.Context()
	if err := s.Save(ctx, &durable.Snapshot{SnapshotID: "a", RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Delete(ctx, "a"); err != nil || !ok {
		t.Errorf("Delete = %v, %v; want true", ok, err)
	}
	if ok, err := s.Delete(ctx, "a"); err != nil || ok {
		t.Errorf("second Delete = %v, %v; want false", ok, err)
	}
	if _, err := s.Load(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load after delete err = %v", err)
	}
}

func testList(t *testing.T, s snapshot.Store) {
	ctx := t.Context()
	for _, sn := range []*durable.Snapshot{
		{SnapshotID: "s1", RunID: "r1", Name: "Nightly backup", Tags: []string{"Prod", "db"}},
		{SnapshotID: "s2", RunID: "r1", Name: "manual", Description: "Before the BIG change", Tags: []string{"dev"}},
		{SnapshotID: "s3", RunID: "r2", Name: "other", Tags: []string{"PROD"}},
		{SnapshotID: "s4", RunID: "r2", Name: "backup of r2"},
	} {
		if err := s.Save(ctx, sn); err != nil { // created_at increases with each save
			t.Fatal(err)
		}
	}
	ids := func(p snapshot.ListParams) []string {
		t.Helper()
		got, err := s.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, sn := range got {
			out = append(out, sn.SnapshotID)
		}
		return out
	}
	cases := []struct {
		name string
		p    snapshot.ListParams
		want []string
	}{
		{"All", snapshot.ListParams{}, []string{"s4", "s3", "s2", "s1"}},
		{"RunID", snapshot.ListParams{RunID: "r1"}, []string{"s2", "s1"}},
		{"Tag", snapshot.ListParams{Tag: "prod"}, []string{"s3", "s1"}},
		{"TagNone", snapshot.ListParams{Tag: "pro"}, []string{}},
		{"QueryName", snapshot.ListParams{Query: "BACKUP"}, []string{"s4", "s1"}},
		{"QueryDescription", snapshot.ListParams{Query: "big change"}, []string{"s2"}},
		{"Combined", snapshot.ListParams{RunID: "r2", Tag: "Prod"}, []string{"s3"}},
		{"Limit", snapshot.ListParams{Limit: 2}, []string{"s4", "s3"}},
		{"NegativeLimit", snapshot.ListParams{Limit: -1}, []string{"s4"}},
	}
	for _, c := range cases {
		if got := ids(c.p); !slices.Equal(got, c.want) {
			t.Errorf("%s: List = %v, want %v", c.name, got, c.want)
		}
	}
	// Listed snapshots are private copies, as Load's are: changing one
	// changes nothing the store holds (the memory store handing out its
	// own structs would).
	listed, err := s.List(ctx, snapshot.ListParams{RunID: "r1"})
	if err != nil || len(listed) == 0 {
		t.Fatalf("List(r1) = %d snapshots, %v", len(listed), err)
	}
	listed[0].Name = "MUTATED"
	listed[0].Tags[0] = "MUTATED"
	if got, err := s.Load(ctx, listed[0].SnapshotID); err != nil || got.Name != "manual" || got.Tags[0] != "dev" {
		t.Errorf("a change to a listed snapshot leaked into the store: %#v, %v", got, err)
	}
}

func TestJSONStore_Files(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.NowFunc = func() time.Time { return time.Date(2026, 11, 29, 22, 46, 49, 646746000, time.UTC) }
	snap := &durable.Snapshot{SnapshotID: "snap-1", RunID: "run-1", Name: "café", Tags: []string{"a"},
		RunState: map[string]any{"run_id": "run-1", "vars": map[string]any{"x": json.Number("1.0")}}}
	if err := s.Save(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	want := `{
  "snapshot_id": "snap-1",
  "run_id": "run-1",
  "step_id": null,
  "name": "café",
  "description": null,
  "tags": [
    "a"
  ],
  "created_at": "2026-11-29T22:46:49.646746+00:00",
  "updated_at": "2026-11-29T22:46:49.646746+00:00",
  "run_state": {
    "run_id": "run-1",
    "vars": {
      "x": 1.0
    }
  }
}`
	b, err := os.ReadFile(filepath.Join(dir, "snapshot_snap-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("snapshot file:\n%s\nwant:\n%s", b, want)
	}

	// A Python-written file (no tags key order guarantees, extra spacing)
	// is read; an unreadable one is skipped by List and is an error for
	// Load.
	py := `{"snapshot_id": "py", "run_id": "run-9", "step_id": null, "name": "from python", "description": "d",
 "tags": [], "created_at": "2026-11-30T00:00:00+00:00", "updated_at": "2026-11-30T00:00:00+00:00",
 "run_state": {"run_id": "run-9", "status": "completed"}}`
	if err := os.WriteFile(filepath.Join(dir, "snapshot_py.json"), []byte(py), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshot_broken.json"), []byte(`{"snapshot_id": `), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(t.Context(), snapshot.ListParams{})
	if err != nil || len(list) != 2 || list[0].SnapshotID != "py" || list[1].SnapshotID != "snap-1" {
		t.Errorf("List = %v, %v; want [py snap-1]", list, err)
	}
	if _, err := s.Load(t.Context(), "broken"); err == nil || errors.Is(err, store.ErrNotFound) ||
		!strings.Contains(err.Error(), "snapshot_broken.json") {
		t.Errorf("Load(broken) err = %v, want a decode error naming the file", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	if err := s.Save(t.Context(), &durable.Snapshot{SnapshotID: "a/b"}); err == nil {
		t.Errorf("Save with a path separator in the id succeeded")
	}
}
