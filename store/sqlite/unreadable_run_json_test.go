package sqlite

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Lists skip a row whose run_json cannot be decoded (queryRuns: "skipping
// unreadable ones"), as RunGet counts it absent: one bad row does not
// make every list of runs fail.
func TestListsSkipUnreadableRunJSON(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path})
	for _, id := range []string{"r1", "r2", "r3"} {
		r := redoRun(id)
		r.ParentRunID = "p"
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET run_json = 'not json' WHERE run_id = 'r2'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, Config{Path: path})
	ids := func(runs []*durable.RunState) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.RunID)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"r1", "r3"}
	for name, p := range map[string]*store.RunListParams{
		"unfiltered": {}, "by status": {Status: durable.RunRunning}, "by workflow": {WorkflowID: "wf"},
		"by parent": {ParentID: "p"},
	} {
		got, err := s.RunList(ctx, p)
		if err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("RunList(%s) = %v, %v; want %v, the unreadable run skipped", name, ids(got), err, want)
		}
	}
	got, err := s.RunListChildren(ctx, "p", "")
	if err != nil || !slices.Equal(ids(got), want) {
		t.Errorf("RunListChildren = %v, %v; want %v, the unreadable run skipped", ids(got), err, want)
	}
}

// A row whose run_json cannot be decoded counts as absent, as in the
// Python store: RunGet's error wraps store.ErrNotFound.
func TestRunGetUnreadableRunJSONIsNotFound(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path})
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: redoRun("gggg"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET run_json = '{not json' WHERE run_id = 'gggg'`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for _, cfg := range []Config{{Path: path}, {Path: path, Shared: true}} {
		s := openStore(t, cfg)
		_, err := s.RunGet(t.Context(), "gggg")
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RunGet of an unreadable row (shared %v): %v, want store.ErrNotFound", cfg.Shared, err)
		}
		_ = s.Close()
	}
}
