package artifact

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeMetaNaming copies the .meta file of artifact from to path, renamed
// to name artifact id inside.
func writeMetaNaming(t *testing.T, dir string, from *Metadata, id, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "artifacts", "refs", from.ArtifactID+".meta"))
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), fmt.Sprintf("%q", from.ArtifactID), fmt.Sprintf("%q", id), 1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// blobExists reports whether blob id's file is under dir.
func blobExists(t *testing.T, dir, id string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, "artifacts", "blobs", id+".bin"))
	return err == nil
}

// A .meta file naming another artifact than its file name (a copied
// file) still references its blob: GC counts the blob of every file it
// reads, since whose content such a file holds is uncertain. If GC
// skipped misnamed files as the index does, the blob only they name
// would be deleted.
func TestGCKeepsBlobOnlyAMisnamedMetaReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := openTwoFS(t, dir)
	only, err := st.Put(ctx, PutParams{Content: []byte("named only by a.meta"), ArtifactID: "tmp"})
	if err != nil {
		t.Fatal(err)
	}
	writeMetaNaming(t, dir, only, "b", filepath.Join(dir, "artifacts", "refs", "a.meta"))
	if _, err := st.Delete(ctx, "tmp"); err != nil {
		t.Fatal(err)
	}
	backdateBlobs(t, dir)
	rep, err := st.GC(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !blobExists(t, dir, only.BlobID) {
		t.Errorf("GC (report %+v) deleted the blob refs/a.meta references", rep)
	}
}

// The first file naming an id wins in the index, not in GC: a
// refs/a.meta naming "b" sorts before refs/b.meta, and GC must still
// count b's own blob (the one Get(b) reads). The blobs are old, so only
// being referenced keeps them.
func TestGCCountsEveryFileNamingAnID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := openTwoFS(t, dir)
	other, err := st.Put(ctx, PutParams{Content: []byte("other content"), ArtifactID: "x_other"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Put(ctx, PutParams{Content: []byte("b content"), ArtifactID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	writeMetaNaming(t, dir, other, "b", filepath.Join(dir, "artifacts", "refs", "a.meta"))
	backdateBlobs(t, dir)
	rep, err := st.GC(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, content, err := st.Get(ctx, "b"); err != nil || string(content) != "b content" {
		t.Fatalf("Get(b) after GC (report %+v) = %q, %v; GC deleted blob %s", rep, content, err, b.BlobID)
	}
}

// A .meta file whose blob_id has surrounding whitespace references the
// stripped blob, as Get reads it (Python: blob_id.strip()); GC must not
// take the blob for unreferenced.
func TestGCStripsBlobIDAsGetDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := openTwoFS(t, dir)
	m, err := st.Put(ctx, PutParams{Content: []byte("hi"), ArtifactID: "pad1"})
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"artifact_id": "pad1", "blob_id": " %s\n", "content_type": "text/plain", "size_bytes": 2, "created_at": "2024-01-01T00:00:00+00:00"}`, m.BlobID)
	if err := os.WriteFile(filepath.Join(dir, "artifacts", "refs", "pad1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	backdateBlobs(t, dir)
	if _, err := st.GC(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, b, err := st.Get(ctx, "pad1"); err != nil || string(b) != "hi" {
		t.Errorf("Get after GC = %q, %v; GC deleted the blob of a padded blob_id", b, err)
	}
}

// blobs_referenced counts distinct blobs, as Python's set does: two
// artifacts of the same content (two runs) share one blob.
func TestGCReportCountsDistinctReferencedBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := openTwoFS(t, t.TempDir())
	for _, run := range []string{"r1", "r2"} {
		if _, err := st.Put(ctx, PutParams{Content: []byte("same"), RunID: run}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := st.GC(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if rep.BlobsReferenced != 1 || rep.BlobsTotal != 1 {
		t.Errorf("report %+v; want blobs_referenced 1 and blobs_total 1 (one shared blob)", rep)
	}
}

// A directory named like a blob is not a blob: GC neither counts nor
// removes it (os.Remove would delete an empty one).
func TestGCIgnoresDirectoriesInBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := openTwoFS(t, dir)
	sub := filepath.Join(dir, "artifacts", "blobs", "notablob.bin")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	backdateBlobs(t, dir)
	rep, err := st.GC(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.BlobsTotal != 0 || rep.BlobsDeleted != 0 {
		t.Errorf("report %+v; want no blob counted", rep)
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Errorf("GC removed the directory %s: %v", sub, err)
	}
}

// An artifact this store wrote and another store deleted before this one
// listed anything is gone from this store's lists too: the write records
// the file in refsFiles, which refresh checks for removed files.
func TestFSForgetsOwnArtifactAnotherStoreDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	writer, deleter := openTwoFS(t, t.TempDir())
	m, err := writer.Put(ctx, PutParams{Content: []byte("short-lived"), RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := deleter.Delete(ctx, m.ArtifactID); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if n, err := writer.Count(ctx, SearchParams{RunID: "r"}); err != nil || n != 0 {
		t.Errorf("Count after another store's Delete = %d, %v; want 0", n, err)
	}
}

// Once the refs directory's time has settled, refresh skips the scan
// only while that time is unchanged: another store's write moves it, and
// the index must then take the new file in.
func TestFSSeesOtherStoresWriteAfterRefsDirSettled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := NewFS(dir); err != nil { // creates the directories
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "artifacts", "refs"), old, old); err != nil {
		t.Fatal(err)
	}
	reader, writer := openTwoFS(t, dir) // reader indexed a settled, unchanged directory
	if _, err := writer.Put(ctx, PutParams{Content: []byte("new"), RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if n, err := reader.Count(ctx, SearchParams{RunID: "r"}); err != nil || n != 1 {
		t.Errorf("Count after another store's Put = %d, %v; want 1", n, err)
	}
}

// A .meta file naming an id FS refuses (a dot in it) is never listed:
// neither when the index is built at open (the refs directory then
// unchanged, so no refresh rereads it) nor when refresh meets it later.
func TestFSNeverListsMetaFilesOfInvalidIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, PutParams{Content: []byte("valid")}); err != nil {
		t.Fatal(err)
	}
	refs := filepath.Join(dir, "artifacts", "refs")
	writeBad := func(id string) {
		meta := fmt.Sprintf(`{"artifact_id": %q, "content_type": "text/plain", "created_at": "2024-01-01T00:00:00+00:00"}`, id)
		if err := os.WriteFile(filepath.Join(refs, id+".meta"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeBad("bad.one")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(refs, old, old); err != nil {
		t.Fatal(err)
	}
	reader, _ := openTwoFS(t, dir)
	if n, err := reader.Count(ctx, SearchParams{}); err != nil || n != 1 {
		t.Errorf("Count after open = %d, %v; want 1 (bad.one not listed)", n, err)
	}
	writeBad("bad.two")
	if n, err := reader.Count(ctx, SearchParams{}); err != nil || n != 1 {
		t.Errorf("Count after refresh = %d, %v; want 1 (bad.two not listed)", n, err)
	}
}
