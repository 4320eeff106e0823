package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

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

// GC skipped .meta files it could not parse, so the blob of an artifact
// whose metadata file is damaged was deleted as unreferenced: the content
// lost for good although the artifact was never deleted. GC now refuses.
func TestGCKeepsBlobsWhenMetadataIsUnreadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Put(ctx, artifact.PutParams{Content: []byte("precious"), ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "artifacts", "refs", m.ArtifactID+".meta")
	b, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ref, b[:len(b)/2], 0o644); err != nil { // torn / damaged
		t.Fatal(err)
	}
	rep, err := st.GC(ctx, false)
	blob := filepath.Join(dir, "artifacts", "blobs", m.BlobID+".bin")
	if _, serr := os.Stat(blob); serr != nil {
		t.Fatalf("GC (report %+v, err %v) deleted the blob of artifact %s whose .meta it could not read", rep, err, m.ArtifactID)
	}
}
