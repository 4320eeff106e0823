package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// A metadata file is trusted for the path of the content it points to: a
// legacy-layout .meta (no blob_id) whose artifact_id is not a valid id makes
// Get read a file outside the store (fs.go contentPath uses m.ArtifactID,
// which ParseMetadata never validates).
func TestMetaFileCannotNameAnotherArtifact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "outside.bin") // <dir>/artifacts/../outside.bin
	if err := os.WriteFile(secret, []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := `{"artifact_id": "../outside", "content_type": "text/plain", "size_bytes": 6}`
	if err := os.WriteFile(filepath.Join(dir, "artifacts", "x1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	_, content, err := st.Get(context.Background(), "x1")
	if err == nil {
		t.Fatalf("Get(x1) read %q from a file outside the artifact directory", content)
	}
}

// hookCtx runs fn on the n-th call of Err (Reindex's scan calls Err once per
// directory entry, outside the store's lock).
type hookCtx struct {
	context.Context
	calls, n int
	fn       func()
}

func (c *hookCtx) Err() error {
	c.calls++
	if c.calls == c.n {
		c.fn()
	}
	return c.Context.Err()
}

// Reindex scanned the .meta files without the store's lock and then swapped
// the whole index in: a Put or Delete made by this process during the scan
// was undone in the index (the new artifact vanished from searches and the
// deleted one came back). Writes now wait for the scan.
func TestReindexKeepsConcurrentWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a1", "c1"} {
		if _, err := st.Put(ctx, artifact.PutParams{Content: []byte(id), ArtifactID: id}); err != nil {
			t.Fatal(err)
		}
	}
	writes := make(chan struct{})
	hc := &hookCtx{Context: ctx, n: 2, fn: func() { // after a1.meta was read
		go func() { // a write from another goroutine, while the scan runs
			defer close(writes)
			if _, err := st.Delete(ctx, "a1"); err != nil {
				t.Error(err)
			}
			if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("b1"), ArtifactID: "b1"}); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(20 * time.Millisecond) // give the writes their chance to land mid-scan
	}}
	if _, err := st.Reindex(hc); err != nil {
		t.Fatal(err)
	}
	<-writes
	all, err := st.ListAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range all {
		got[m.ArtifactID] = true
	}
	if got["a1"] || !got["b1"] || !got["c1"] {
		t.Fatalf("ListAll after Reindex = %v; want b1 and c1 (a1 was deleted, b1 put)", got)
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
