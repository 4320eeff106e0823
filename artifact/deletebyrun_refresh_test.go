package artifact_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// FS.DeleteByRun picked the artifacts to delete from the in-process index
// without refreshing it from the refs directory first, unlike every list
// and search (the index follows what other processes write there), so an
// artifact another store (process) wrote for the run survived it.
// Python's delete_by_run lists through search, the shared catalog.
func TestFSDeleteByRunDeletesWhatOtherStoresWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	gateway, err := artifact.NewFS(dir) // opened first
	if err != nil {
		t.Fatal(err)
	}
	runner, err := artifact.NewFS(dir) // another process on the same directory
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Put(ctx, artifact.PutParams{Content: []byte("report"), ContentType: "text/plain", RunID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	n, err := gateway.DeleteByRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	left, err := gateway.ListByRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || len(left) != 0 {
		t.Fatalf("DeleteByRun(run-1) deleted %d, %d artifacts of the run left (listed by the same store); want 1 deleted, none left", n, len(left))
	}
}
