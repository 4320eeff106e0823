package postgres_test

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/store"
)

// TestRunIndexRootOnlyListsAnEmptyParent: the store writes a run without
// a parent as a NULL parent_run_id, but a row another writer left with an
// empty string names no parent either: RunIndex's RootOnly lists it with
// the other roots, and leaves the children out.
func TestRunIndexRootOnlyListsAnEmptyParent(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := testSchema(t)
	s := openSchema(t, schema)
	for _, id := range []string{"root-null", "root-empty", "child"} {
		r := testRun(id)
		if id == "child" {
			r.ParentRunID = "root-null"
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := plainConn(t).Exec(ctx, `UPDATE `+pgx.Identifier{schema, "runs"}.Sanitize()+
		` SET parent_run_id = '' WHERE run_id = 'root-empty'`); err != nil {
		t.Fatal(err)
	}
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{RootOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.RunID)
	}
	slices.Sort(got)
	if want := []string{"root-empty", "root-null"}; !slices.Equal(got, want) {
		t.Errorf("RunIndex(RootOnly) = %v; want %v", got, want)
	}
}
