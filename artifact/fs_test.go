package artifact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/artifact/artifacttest"
)

func TestFS(t *testing.T) {
	t.Parallel()
	artifacttest.Run(t, func(t *testing.T) artifact.Store {
		st, err := artifact.NewFS(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

type fsBundle struct {
	dir string
	st  *artifact.FS
}

func setupFS(t *testing.T) fsBundle {
	t.Helper()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fsBundle{dir: dir, st: st}
}

func (b fsBundle) put(t *testing.T, p artifact.PutParams) *artifact.Metadata {
	t.Helper()
	m, err := b.st.Put(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFS_Layout(t *testing.T) {
	t.Parallel()
	b := setupFS(t)
	m := b.put(t, artifact.PutParams{Content: []byte("body"), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"label": "café"}})
	blob, err := os.ReadFile(filepath.Join(b.dir, "artifacts", "blobs", m.BlobID+".bin"))
	if err != nil || string(blob) != "body" {
		t.Fatalf("blob file = %q, %v", blob, err)
	}
	meta, err := os.ReadFile(filepath.Join(b.dir, "artifacts", "refs", m.ArtifactID+".meta"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(meta), "{\n  \"artifact_id\": \""+m.ArtifactID+"\",\n  \"blob_id\": ") {
		t.Errorf("meta file does not start in Python key order with indent 2:\n%s", meta)
	}
	if !strings.Contains(string(meta), `"label": "café"`) {
		t.Errorf("non-ASCII not written raw:\n%s", meta)
	}
	order := []string{`"artifact_id"`, `"blob_id"`, `"content_type"`, `"size_bytes"`, `"created_at"`, `"run_id"`,
		`"tags"`, `"metadata"`, `"descriptor"`, `"access"`}
	last := -1
	for _, k := range order {
		i := strings.Index(string(meta), "\n  "+k)
		if i <= last {
			t.Errorf("key %s out of order", k)
		}
		last = i
	}
	var decoded map[string]any
	if err := json.Unmarshal(meta, &decoded); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.ParseMetadata(meta); err != nil {
		t.Errorf("ParseMetadata: %v", err)
	}
	for _, dir := range []string{"blobs", "refs"} {
		entries, _ := os.ReadDir(filepath.Join(b.dir, "artifacts", dir))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("temporary file left: %s", e.Name())
			}
		}
	}
	p, err := b.st.ContentPath(context.Background(), m.ArtifactID)
	if err != nil || p != filepath.Join(b.dir, "artifacts", "blobs", m.BlobID+".bin") {
		t.Errorf("ContentPath = %q, %v", p, err)
	}
	if _, err := b.st.ContentPath(context.Background(), "../x"); !errors.Is(err, artifact.ErrInvalidID) {
		t.Errorf("ContentPath(../x) = %v", err)
	}
	if _, err := b.st.ContentPath(context.Background(), "missing"); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("ContentPath(missing) = %v", err)
	}
}

func TestFS_BlobWrittenOnce(t *testing.T) {
	t.Parallel()
	b := setupFS(t)
	a := b.put(t, artifact.PutParams{Content: []byte("dup"), RunID: "r1"})
	path := filepath.Join(b.dir, "artifacts", "blobs", a.BlobID+".bin")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c := b.put(t, artifact.PutParams{Content: []byte("dup"), RunID: "r2"})
	b.put(t, artifact.PutParams{Content: []byte("dup"), RunID: "r1"})
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.BlobID != a.BlobID || !os.SameFile(before, after) {
		t.Error("blob rewritten")
	}
	entries, _ := os.ReadDir(filepath.Join(b.dir, "artifacts", "blobs"))
	if len(entries) != 1 {
		t.Errorf("blobs = %d, want 1", len(entries))
	}
}

func TestFS_PathTraversal(t *testing.T) {
	t.Parallel()
	b := setupFS(t)
	for _, id := range []string{"../x", "../../etc/passwd", "a/../../b"} {
		_, err := b.st.Put(context.Background(), artifact.PutParams{Content: []byte("x"), ArtifactID: id})
		if !errors.Is(err, artifact.ErrInvalidID) {
			t.Errorf("Put(%q) = %v", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, "x.meta")); !os.IsNotExist(err) {
		t.Error("file written outside the store")
	}
}

func TestFS_ReopenRebuildsIndex(t *testing.T) {
	t.Parallel()
	b := setupFS(t)
	ctx := context.Background()
	m := b.put(t, artifact.PutParams{Content: []byte("persist"), RunID: "r1", Tags: map[string]string{"session_id": "s1"}})
	if _, err := b.st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, Action: "download"}); err != nil {
		t.Fatal(err)
	}
	// A corrupt .meta file is skipped, not fatal.
	if err := os.WriteFile(filepath.Join(b.dir, "artifacts", "refs", "broken.meta"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	st2, err := artifact.NewFS(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	found, err := st2.Search(ctx, artifact.SearchParams{SessionID: "s1"})
	if err != nil || len(found) != 1 || found[0].ArtifactID != m.ArtifactID || found[0].Access.DownloadCount != 1 {
		t.Fatalf("Search after reopen = %+v, %v", found, err)
	}
	s, err := st2.Stats(ctx, nil, artifact.SearchParams{})
	if err != nil || s.Total != 1 || s.Source != artifact.SourceCatalog {
		t.Errorf("Stats = %+v, %v", s, err)
	}
	// Writes by another store on the directory show up (see
	// fs_multiprocess_test.go).
	b.put(t, artifact.PutParams{Content: []byte("other"), RunID: "r1"})
	if n, _ := st2.Count(ctx, artifact.SearchParams{RunID: "r1"}); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
	if n, err := st2.Reindex(ctx); err != nil || n != 2 {
		t.Errorf("Reindex = %d, %v", n, err)
	}
}

func TestFS_LegacyLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	legacy := `{"artifact_id": "legacy1", "content_type": "text/markdown", "size_bytes": 5,
		"created_at": "2025-01-01T00:00:00+00:00", "run_id": "old", "tags": {"workflow": "wf", "n": 3}}`
	if err := os.WriteFile(filepath.Join(root, "legacy1.meta"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "legacy1.bin"), []byte("# hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, content, err := st.Get(ctx, "legacy1")
	if err != nil || string(content) != "# hi\n" {
		t.Fatalf("Get legacy = %q, %v", content, err)
	}
	if m.Descriptor.RenderKind != "markdown" || m.Descriptor.WorkflowID != "wf" || m.Tags["n"] != "3" || m.BlobID != "" {
		t.Errorf("legacy metadata = %+v", m)
	}
	found, _ := st.Search(ctx, artifact.SearchParams{RunID: "old", WorkflowID: "wf"})
	if len(found) != 1 {
		t.Errorf("Search legacy = %d", len(found))
	}
	if _, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: "legacy1", Tags: map[string]string{"x": "y"}}); err != nil {
		t.Fatal(err)
	}
	if s, err := artifact.LoadText(ctx, st, "legacy1"); err != nil || s != "# hi\n" {
		t.Errorf("content after update = %q, %v", s, err)
	}
	if ok, err := st.Delete(ctx, "legacy1"); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	for _, p := range []string{filepath.Join(root, "legacy1.meta"), filepath.Join(root, "legacy1.bin"), filepath.Join(root, "refs", "legacy1.meta")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not deleted", p)
		}
	}
}

func TestFS_GC(t *testing.T) {
	t.Parallel()
	b := setupFS(t)
	ctx := context.Background()
	gone := b.put(t, artifact.PutParams{Content: []byte("garbage!"), RunID: "r1"})
	kept := b.put(t, artifact.PutParams{Content: []byte("kept"), RunID: "r1"})
	shared1 := b.put(t, artifact.PutParams{Content: []byte("shared"), RunID: "r1"})
	b.put(t, artifact.PutParams{Content: []byte("shared"), RunID: "r2"})
	for _, id := range []string{gone.ArtifactID, shared1.ArtifactID} {
		if _, err := b.st.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	blob := filepath.Join(b.dir, "artifacts", "blobs", gone.BlobID+".bin")
	// Past the grace period in which GC keeps unreferenced blobs.
	old := time.Now().Add(-artifact.BlobGracePeriod - time.Minute)
	if err := os.Chtimes(blob, old, old); err != nil {
		t.Fatal(err)
	}

	r, err := b.st.GC(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	want := artifact.GCReport{DryRun: true, BlobsTotal: 3, BlobsReferenced: 2, BlobsDeleted: 1, BytesReclaimed: 8, Errors: []artifact.GCError{}}
	if !equalReport(*r, want) {
		t.Errorf("dry run = %+v, want %+v", r, want)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("dry run deleted the blob: %v", err)
	}
	js, _ := json.Marshal(r)
	if string(js) != `{"dry_run":true,"blobs_total":3,"blobs_referenced":2,"blobs_deleted":1,"bytes_reclaimed":8,"errors":[]}` {
		t.Errorf("report JSON = %s", js)
	}

	r, err = b.st.GC(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	want.DryRun = false
	if !equalReport(*r, want) {
		t.Errorf("gc = %+v, want %+v", r, want)
	}
	if _, err := os.Stat(blob); !os.IsNotExist(err) {
		t.Errorf("blob not deleted: %v", err)
	}
	if s, err := artifact.LoadText(ctx, b.st, kept.ArtifactID); err != nil || s != "kept" {
		t.Errorf("kept = %q, %v", s, err)
	}
	ms, _ := b.st.ListByRun(ctx, "r2")
	if len(ms) != 1 {
		t.Fatalf("r2 artifacts = %d", len(ms))
	}
	if _, c, err := b.st.Get(ctx, ms[0].ArtifactID); err != nil || !bytes.Equal(c, []byte("shared")) {
		t.Errorf("shared blob lost: %q, %v", c, err)
	}
}

func equalReport(a, b artifact.GCReport) bool {
	return a.DryRun == b.DryRun && a.BlobsTotal == b.BlobsTotal && a.BlobsReferenced == b.BlobsReferenced &&
		a.BlobsDeleted == b.BlobsDeleted && a.BytesReclaimed == b.BytesReclaimed && len(a.Errors) == len(b.Errors)
}
