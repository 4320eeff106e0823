package artifact

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
)

// openTwoFS opens two stores on one directory, standing for two processes.
func openTwoFS(t *testing.T, dir string) (*FS, *FS) {
	t.Helper()
	var out [2]*FS
	for i := range out {
		st, err := NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		out[i] = st
	}
	return out[0], out[1]
}

// backdateBlobs makes every blob under dir older than BlobGracePeriod.
func backdateBlobs(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-BlobGracePeriod - time.Hour)
	paths, err := filepath.Glob(filepath.Join(dir, "artifacts", "blobs", "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// A Put that finds its blob on disk (the content of a deleted artifact,
// not yet collected) keeps it; a GC of another process that runs before
// the Put's .meta file is written must not delete it, even when the kept
// blob is old.
func TestGCKeepsExistingBlobAPutInAnotherStoreIsReusing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writer, collector := openTwoFS(t, dir)
	content := []byte("bytes stored, deleted, stored again")
	if _, err := writer.Put(ctx, PutParams{Content: content, ArtifactID: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Delete(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	backdateBlobs(t, dir) // deleted long ago: GC would collect it now

	// The blob directory's sync falls between keeping the blob and
	// writing the .meta file: the other store's GC runs there.
	var once sync.Once
	var rep *GCReport
	var gcErr error
	writer.syncDir = func(d string) error {
		if d == writer.blobs {
			once.Do(func() { rep, gcErr = collector.GC(ctx, false) })
		}
		return atomicfile.SyncDir(d)
	}
	m, err := writer.Put(ctx, PutParams{Content: content, ArtifactID: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if gcErr != nil {
		t.Fatal(gcErr)
	}
	if rep.BlobsDeleted != 0 || rep.BlobsTooRecent != 1 {
		t.Errorf("GC during the Put = %+v, want the kept blob passed over as recent", *rep)
	}
	if _, got, err := writer.Get(ctx, m.ArtifactID); err != nil || string(got) != string(content) {
		t.Fatalf("Get after a Put that succeeded = %q, %v: GC deleted the blob it kept", got, err)
	}
}

// scanHookCtx runs hook the first time Err is called: GC calls it for
// each .meta file, after listing the refs directory and before listing
// the blobs.
type scanHookCtx struct {
	context.Context
	once sync.Once
	hook func()
}

func (c *scanHookCtx) Err() error {
	c.once.Do(c.hook)
	return c.Context.Err()
}

// A Put of new content by another store while GC reads the metadata
// writes a blob GC lists and a .meta file GC did not read: the blob is
// recent, so GC keeps it.
func TestGCKeepsNewBlobStoredWhileItReadsMetadata(t *testing.T) {
	bg := context.Background()
	dir := t.TempDir()
	writer, collector := openTwoFS(t, dir)
	if _, err := writer.Put(bg, PutParams{Content: []byte("already there"), RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	var m *Metadata
	var putErr error
	ctx := &scanHookCtx{Context: bg, hook: func() {
		m, putErr = writer.Put(bg, PutParams{Content: []byte("new content, stored during the scan"), RunID: "r"})
	}}
	rep, err := collector.GC(ctx, false)
	if err != nil || putErr != nil {
		t.Fatal(err, putErr)
	}
	if _, _, err := writer.Get(bg, m.ArtifactID); err != nil {
		t.Fatalf("artifact stored during GC (report %+v): Get = %v", *rep, err)
	}
	if rep.BlobsDeleted != 0 || rep.BlobsTooRecent != 1 {
		t.Errorf("report %+v, want the new blob passed over as recent", *rep)
	}
}

// An unreferenced blob is collected once older than BlobGracePeriod and
// kept (counted in BlobsTooRecent, a dry run too) before; the report's
// JSON keeps Python's keys only.
func TestGCCollectsUnreferencedBlobsOnlyPastGracePeriod(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old, err := st.Put(ctx, PutParams{Content: []byte("old garbage")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, old.ArtifactID); err != nil {
		t.Fatal(err)
	}
	backdateBlobs(t, dir)
	young, err := st.Put(ctx, PutParams{Content: []byte("young garbage")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, young.ArtifactID); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		rep, err := st.GC(ctx, dry)
		if err != nil {
			t.Fatal(err)
		}
		want := GCReport{DryRun: dry, BlobsTotal: 2, BlobsDeleted: 1, BytesReclaimed: int64(len("old garbage")), Errors: []GCError{}, BlobsTooRecent: 1}
		if rep.DryRun != want.DryRun || rep.BlobsTotal != want.BlobsTotal || rep.BlobsReferenced != 0 ||
			rep.BlobsDeleted != want.BlobsDeleted || rep.BytesReclaimed != want.BytesReclaimed ||
			len(rep.Errors) != 0 || rep.BlobsTooRecent != want.BlobsTooRecent {
			t.Errorf("GC(dryRun=%v) = %+v, want %+v", dry, *rep, want)
		}
		if dry {
			js, _ := json.Marshal(rep)
			if string(js) != `{"dry_run":true,"blobs_total":2,"blobs_referenced":0,"blobs_deleted":1,"bytes_reclaimed":11,"errors":[]}` {
				t.Errorf("report JSON = %s", js)
			}
		}
	}
	for blob, wantThere := range map[string]bool{old.BlobID: false, young.BlobID: true} {
		_, err := os.Stat(filepath.Join(dir, "artifacts", "blobs", blob+".bin"))
		if there := err == nil; there != wantThere {
			t.Errorf("blob %s there after GC = %v, want %v (stat: %v)", blob, there, wantThere, err)
		}
	}
}

// An unreferenced blob modified a little less than BlobGracePeriod ago
// is still recent: GC keeps it (a Put in another process may be about to
// write its .meta file).
func TestGCKeepsBlobJustInsideGracePeriod(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := openTwoFS(t, dir)
	m, err := st.Put(ctx, PutParams{Content: []byte("recent garbage")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, m.ArtifactID); err != nil {
		t.Fatal(err)
	}
	recent := time.Now().Add(-BlobGracePeriod + time.Minute)
	blob := filepath.Join(dir, "artifacts", "blobs", m.BlobID+".bin")
	if err := os.Chtimes(blob, recent, recent); err != nil {
		t.Fatal(err)
	}
	rep, err := st.GC(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.BlobsDeleted != 0 || rep.BlobsTooRecent != 1 {
		t.Errorf("GC = %+v; want the blob kept as too recent", *rep)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("blob deleted: %v", err)
	}
}
