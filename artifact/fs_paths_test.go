package artifact_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// A .meta file's blob_id names a file under blobs/, so it is validated as
// Python's _blob_path validates it: one holding a path ("../refs/<id>")
// is refused with ErrInvalidID, never read. If blobPath stopped checking,
// Get would hand out whatever file the metadata points at (here the
// artifact's own .meta file).
func TestFSRefusesBlobIDNamingAPathOutsideBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupFS(t)
	m := b.put(t, artifact.PutParams{Content: []byte("body"), RunID: "r1"})
	ref := filepath.Join(b.dir, "artifacts", "refs", m.ArtifactID+".meta")
	raw, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	evil := "../refs/" + m.ArtifactID
	raw = []byte(strings.Replace(string(raw), `"`+m.BlobID+`"`, `"`+evil+`"`, 1))
	if err := os.WriteFile(ref, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, content, err := b.st.Get(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrInvalidID) {
		t.Errorf("Get with blob_id %q = %q, %v; want ErrInvalidID", evil, content, err)
	}
	if p, err := b.st.ContentPath(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrInvalidID) {
		t.Errorf("ContentPath with blob_id %q = %q, %v; want ErrInvalidID", evil, p, err)
	}
}

// When an artifact has both a refs/<id>.meta and a legacy <id>.meta, the
// refs file is the artifact, for single reads and for the lists alike
// (Python's _metadata_path and _scan_metadata_files: refs first, first
// file of an id wins). Reading the legacy file first, or letting it
// replace the refs one in the index, would show the stale tags.
func TestFSRefsMetaWinsOverLegacyCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupFS(t)
	m := b.put(t, artifact.PutParams{Content: []byte("body"), RunID: "r1", Tags: map[string]string{"v": "refs"}})
	root := filepath.Join(b.dir, "artifacts")
	legacy := `{"artifact_id": "` + m.ArtifactID + `", "content_type": "text/plain", "size_bytes": 4,
		"created_at": "2025-01-01T00:00:00+00:00", "run_id": "r1", "tags": {"v": "legacy"}}`
	if err := os.WriteFile(filepath.Join(root, m.ArtifactID+".meta"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, m.ArtifactID+".bin"), []byte("old!"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := b.st.Metadata(ctx, m.ArtifactID)
	if err != nil || got.Tags["v"] != "refs" {
		t.Errorf("Metadata = %+v, %v; want the refs file (tag v=refs)", got, err)
	}
	// Settled times (over a second old): a store that opened on them
	// trusts its index and does not read the refs directory again.
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(root, "refs", m.ArtifactID+".meta"), filepath.Join(root, "refs")} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	reopened := openFS(t, b.dir)
	found, err := reopened.Search(ctx, artifact.SearchParams{RunID: "r1"})
	if err != nil || len(found) != 1 || found[0].Tags["v"] != "refs" {
		t.Fatalf("Search after reopening = %v, %v; want the one artifact, from its refs file", found, err)
	}
	if n, err := reopened.Count(ctx, artifact.SearchParams{Tags: map[string]string{"v": "legacy"}}); err != nil || n != 0 {
		t.Errorf("Count of the legacy copy's tag = %d, %v; the refs file shadows it (want 0)", n, err)
	}
}

// Every "not found" names the artifact asked for, whichever part is
// missing (its metadata, or its content file): callers log these errors,
// and an operator must be able to tell which id is gone.
func TestFSNotFoundErrorsNameTheArtifact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupFS(t)
	const missing = "no-such-artifact"
	if _, err := b.st.Metadata(ctx, missing); !errors.Is(err, artifact.ErrNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Metadata(%s): err = %v; want ErrNotFound naming the id", missing, err)
	}
	m := b.put(t, artifact.PutParams{Content: []byte("body"), RunID: "r1"})
	if err := os.Remove(filepath.Join(b.dir, "artifacts", "blobs", m.BlobID+".bin")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ContentPath(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrNotFound) || !strings.Contains(err.Error(), m.ArtifactID) {
		t.Errorf("ContentPath without its blob: err = %v; want ErrNotFound naming %s", err, m.ArtifactID)
	}
	if _, _, err := b.st.Get(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrNotFound) || !strings.Contains(err.Error(), m.ArtifactID) {
		t.Errorf("Get without its blob: err = %v; want ErrNotFound naming %s", err, m.ArtifactID)
	}
}

// Open compares the content file's size with size_bytes whenever the
// metadata has one (> 0): a 1-byte artifact whose blob a power loss left
// empty is damaged, not an empty artifact. A check starting at 2 bytes
// would pass the torn blob off as the content.
func TestFSOpenRefusesEmptyBlobOfOneByteArtifact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupFS(t)
	m := b.put(t, artifact.PutParams{Content: []byte("x"), RunID: "r1"})
	if err := os.Truncate(filepath.Join(b.dir, "artifacts", "blobs", m.BlobID+".bin"), 0); err != nil {
		t.Fatal(err)
	}
	if _, content, err := b.st.Get(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrDamaged) {
		t.Errorf("Get of a 1-byte artifact with an empty blob = %q, %v; want ErrDamaged", content, err)
	}
}
