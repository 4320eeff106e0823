package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

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

// GC collects the blobs referenced by the .meta files, deduplicated by the
// artifact id the file *names* (scan: "the first file naming an id
// wins"). A refs/<a>.meta whose artifact_id is "b" (a copied file; Get
// refuses it as naming another artifact) sorts before refs/b.meta, so the
// real b's file is skipped and b's blob is collected as unreferenced:
// b's content is destroyed although refs/b.meta, the file Get reads for
// b, still points at it. GC's own rule is that a file whose references
// are uncertain must never cost an artifact its content.
func TestGCKeepsBlobOfArtifactShadowedByMisnamedMeta(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.Put(ctx, artifact.PutParams{Content: []byte("other content"), ArtifactID: "x_other"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Put(ctx, artifact.PutParams{Content: []byte("b content"), ArtifactID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	// refs/a.meta names artifact "b" but points at the other blob.
	misnamed, err := os.ReadFile(filepath.Join(dir, "artifacts", "refs", other.ArtifactID+".meta"))
	if err != nil {
		t.Fatal(err)
	}
	misnamed = []byte(strings.Replace(string(misnamed), `"artifact_id": "x_other"`, `"artifact_id": "b"`, 1))
	if err := os.WriteFile(filepath.Join(dir, "artifacts", "refs", "a.meta"), misnamed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, false); err != nil {
		t.Logf("GC refused: %v", err) // refusing is a fine answer too
	}
	if _, content, err := st.Get(ctx, b.ArtifactID); err != nil || string(content) != "b content" {
		t.Fatalf("Get(b) after GC = %q, %v; its refs/b.meta still points at blob %s, which GC deleted",
			content, err, b.BlobID)
	}
}
