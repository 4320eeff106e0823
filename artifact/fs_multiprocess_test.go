package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Spec §4.8: the FileArtifactStore's list/search calls answer from
// artifact_catalog.sqlite3, "upserted on every metadata write", with the
// .meta files the source of truth, so every store value (process) opened on
// the same base_dir lists what any of them stored; compatibility.md says the
// artifact layout is kept. FS answers ListByRun/Search/Count from an
// in-process map, and writes no catalog: an artifact stored through
// another FS on the same directory (a second process: gateway and runner)
// was found by Get but missing from ListByRun, Search and Count until
// someone called Reindex. The index now follows the refs directory.
func TestFSListsArtifactsOtherStoresWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	reader, err := artifact.NewFS(dir) // opened first, e.g. by the gateway
	if err != nil {
		t.Fatal(err)
	}
	writer, err := artifact.NewFS(dir) // e.g. the runner process
	if err != nil {
		t.Fatal(err)
	}
	m, err := writer.Put(ctx, artifact.PutParams{Content: []byte("report"), ContentType: "text/plain", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reader.Get(ctx, m.ArtifactID); err != nil {
		t.Fatalf("Get through the other store: %v", err)
	}
	byRun, err := reader.ListByRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	found, err := reader.Search(ctx, artifact.SearchParams{RunID: "run-1", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n, err := reader.Count(ctx, artifact.SearchParams{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(byRun) != 1 || len(found) != 1 || n != 1 {
		t.Fatalf("artifact %s stored in the same directory: ListByRun=%d Search=%d Count=%d, want 1 each",
			m.ArtifactID, len(byRun), len(found), n)
	}
}

// Another store's metadata updates and deletes reach the index too.
func TestFSFollowsOtherStoresUpdatesAndDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	reader, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	writer, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := writer.Put(ctx, artifact.PutParams{Content: []byte("a"), ContentType: "text/plain", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := writer.Put(ctx, artifact.PutParams{Content: []byte("b"), ContentType: "text/plain", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := reader.Count(ctx, artifact.SearchParams{RunID: "run-1"}); err != nil || n != 2 {
		t.Fatalf("Count = %d, %v; want 2", n, err)
	}
	if _, err := writer.UpdateMetadata(ctx, artifact.UpdateParams{ID: a.ArtifactID, Tags: map[string]string{"stage": "final"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Delete(ctx, b.ArtifactID); err != nil {
		t.Fatal(err)
	}
	found, err := reader.Search(ctx, artifact.SearchParams{RunID: "run-1", Tags: map[string]string{"stage": "final"}})
	if err != nil || len(found) != 1 || found[0].ArtifactID != a.ArtifactID {
		t.Fatalf("Search by the tag another store set = %+v, %v", found, err)
	}
	if n, err := reader.Count(ctx, artifact.SearchParams{RunID: "run-1"}); err != nil || n != 1 {
		t.Fatalf("Count after another store deleted one = %d, %v; want 1", n, err)
	}
}

// FS's doc: lists and searches answer from an in-process index that, when
// the refs directory changed, follows "what other processes wrote there
// (new, rewritten and removed .meta files)"; Python answers them from the
// catalog, whose row any process's delete removes. An artifact of the
// legacy v0 layout (artifacts/<id>.meta + .bin, which Delete supports)
// deleted through another store stays in this store's listings for good:
// its delete touches no file in refs/, and refresh only ever drops ids it
// indexed from refs/.
func TestFSForgetsLegacyArtifactAnotherStoreDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	legacy := `{"artifact_id": "legacy1", "content_type": "text/plain", "size_bytes": 2,
		"created_at": "2025-01-01T00:00:00+00:00", "run_id": "old", "tags": {}}`
	if err := os.WriteFile(filepath.Join(root, "legacy1.meta"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "legacy1.bin"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := artifact.NewFS(dir) // e.g. the gateway
	if err != nil {
		t.Fatal(err)
	}
	writer, err := artifact.NewFS(dir) // e.g. the runner process
	if err != nil {
		t.Fatal(err)
	}
	if n, err := reader.Count(ctx, artifact.SearchParams{RunID: "old"}); err != nil || n != 1 {
		t.Fatalf("Count before the delete = %d, %v; want 1", n, err)
	}
	if ok, err := writer.Delete(ctx, "legacy1"); err != nil || !ok {
		t.Fatalf("Delete through the other store = %v, %v", ok, err)
	}
	if ok, err := reader.Exists(ctx, "legacy1"); err != nil || ok {
		t.Fatalf("Exists after the delete = %v, %v; want false", ok, err)
	}
	byRun, err := reader.ListByRun(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	all, err := reader.ListAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := reader.Count(ctx, artifact.SearchParams{RunID: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if len(byRun) != 0 || len(all) != 0 || n != 0 {
		t.Fatalf("legacy artifact deleted by another store still listed: ListByRun=%d ListAll=%d Count=%d, want 0 each",
			len(byRun), len(all), n)
	}
}
