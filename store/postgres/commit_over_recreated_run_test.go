package postgres_test

import (
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// TestCommitOverRecreatedRunIsAConflict pins staleVersion's "changed
// and changed back" case (runs.go): a commit at version v whose UPDATE
// found no row, because the run was deleted while the commit waited on the
// row, and which then reads the run recreated at the same version v, wrote
// nothing and must say so (ErrConflict), not report success.
func TestCommitOverRecreatedRunIsAConflict(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	s := openSchema(t, schema)
	ctx := t.Context()
	r := testRun("run-1")
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	stale, err := s.RunGet(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	want := stale.Version

	// Another session deletes the run (holding its row) ...
	conn, tx := lockingTx(t, schema)
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE saved ON COMMIT DROP AS SELECT * FROM runs WHERE run_id = 'run-1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM runs WHERE run_id = 'run-1'`); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	stale.Status = "completed"
	go func() { errc <- s.RunCommit(ctx, &store.CommitParams{Run: stale}) }()
	// ... the commit waits on the deleted row ...
	waitForBlocked(t, conn, 1)
	// ... and the run is recreated at the same version before it goes on.
	if _, err := tx.Exec(ctx, `INSERT INTO runs SELECT * FROM saved`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit whose UPDATE wrote no row: err = %v, want ErrConflict", err)
	}
	if stale.Version != want {
		t.Errorf("failed commit changed p.Run.Version to %d, want %d", stale.Version, want)
	}
	got, err := s.RunGet(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != want || got.Status == "completed" {
		t.Errorf("stored run: version %d status %s, want version %d unchanged", got.Version, got.Status, want)
	}
}
