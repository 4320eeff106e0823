package artifact_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// fzIDs lists the ids of metas, sorted.
func fzIDs(ms []*artifact.Metadata) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ArtifactID)
	}
	slices.Sort(out)
	return out
}

// FuzzFSFiles writes arbitrary bytes as refs/x1.meta (a .meta file another
// process left) and as the content blob of a valid artifact "good", then
// opens the store. Properties: the open succeeds; Metadata(x1) either
// returns artifact x1 or fails with an error naming the file; the listings
// hold x1 exactly when Metadata reads it, and never an artifact no
// Metadata call can read; metadata that decodes re-encodes to a form that
// decodes to the same bytes again; good's content is returned only when it
// has the size its metadata records, else ErrDamaged naming the file; a Put
// of good's content again repairs it; a new Put is read back and listed
// beside good, also after a reopen.
func FuzzFSFiles(f *testing.F) {
	ctx := context.Background()
	f.Add([]byte(`{"artifact_id": "x1", "content_type": "text/plain", "size_bytes": 3, "blob_id": null, "created_at": "2026-01-01T00:00:00+00:00", "run_id": "r1", "tags": {"a": "b"}}`), []byte("hello"))
	f.Add([]byte(`{"artifact_id": "x1", "content_type": "text/plain"}`), []byte("hell"))
	f.Add([]byte(`{"artifact_id": "other", "content_type": "text/plain"}`), []byte(""))
	f.Add([]byte(`{"artifact_id": "good", "content_type": "application/json", "size_bytes": 99}`), []byte("hello!"))
	f.Add([]byte(`{"artifact_id": "../x", "content_type": "a"}`), []byte("hello"))
	f.Add([]byte(`{"artifact_id": "x1", "content_type": "a", "tags": {"n": 1, "f": 1.5, "z": null, "l": [1]}, "size_bytes": "7", "access": {"access_count": 2.0, "actions": {"get": 1e3}}, "descriptor": {"schema_version": "x", "links": 3}}`), []byte("hello"))
	f.Add([]byte(`{"artifact_id": "x1"`), []byte("hello"))
	f.Add([]byte(`[]`), []byte("hello"))
	f.Fuzz(func(t *testing.T, meta, blob []byte) {
		dir := t.TempDir()
		st, err := artifact.NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		good, err := st.Put(ctx, artifact.PutParams{Content: []byte("hello"), ContentType: "text/plain", RunID: "r1", ArtifactID: "good", Tags: map[string]string{"k": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		metaPath := filepath.Join(dir, "artifacts", "refs", "x1.meta")
		if err := os.WriteFile(metaPath, meta, 0o644); err != nil {
			t.Fatal(err)
		}
		blobPath := filepath.Join(dir, "artifacts", "blobs", good.BlobID+".bin")
		if err := os.WriteFile(blobPath, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err = artifact.NewFS(dir)
		if err != nil {
			t.Fatalf("NewFS over a damaged file: %v", err)
		}
		t.Cleanup(func() { _ = st.Close() })

		m, metaErr := st.Metadata(ctx, "x1")
		switch {
		case metaErr == nil && m.ArtifactID != "x1":
			t.Fatalf("Metadata(x1) returned artifact %q", m.ArtifactID)
		case metaErr != nil && !strings.Contains(metaErr.Error(), metaPath):
			t.Fatalf("Metadata(x1) = %v; want an error naming %s", metaErr, metaPath)
		}
		if metaErr == nil {
			b1, err := m.MarshalJSON()
			if err != nil {
				t.Fatalf("metadata read does not encode: %v", err)
			}
			m2, err := artifact.ParseMetadata(b1)
			if err != nil {
				t.Fatalf("re-encoded metadata does not decode: %v\n%s", err, b1)
			}
			if b2, _ := m2.MarshalJSON(); !bytes.Equal(b1, b2) {
				t.Fatalf("metadata re-encoding is not stable:\n%s\n---\n%s", b1, b2)
			}
		}
		all, err := st.ListAll(ctx, 0)
		if err != nil {
			t.Fatalf("ListAll: %v", err)
		}
		want := []string{"good"}
		if metaErr == nil {
			want = []string{"good", "x1"}
		}
		if got := fzIDs(all); !slices.Equal(got, want) {
			t.Fatalf("ListAll lists %v, want %v (Metadata(x1) err %v)", got, want, metaErr)
		}
		for _, l := range all {
			if _, err := st.Metadata(ctx, l.ArtifactID); err != nil {
				t.Fatalf("listed artifact %q cannot be read: %v", l.ArtifactID, err)
			}
		}
		byRun, err := st.Search(ctx, artifact.SearchParams{RunID: "r1"})
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		if !slices.Contains(fzIDs(byRun), "good") {
			t.Fatalf("Search(run r1) lists %v, want good among them", fzIDs(byRun))
		}
		gm, content, err := st.Get(ctx, "good")
		switch {
		case len(blob) == 5:
			if err != nil || !bytes.Equal(content, blob) || gm.ArtifactID != "good" {
				t.Fatalf("Get(good) over a blob of the right size = %q, %v; want the file's bytes", content, err)
			}
		default:
			if !errors.Is(err, artifact.ErrDamaged) || !strings.Contains(err.Error(), blobPath) {
				t.Fatalf("Get(good) over a blob of %d bytes (metadata: 5) = %q, %v; want ErrDamaged naming %s", len(blob), content, err, blobPath)
			}
		}
		// Storing the same content again repairs a damaged blob.
		if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("hello"), ContentType: "text/plain", RunID: "r1", ArtifactID: "good", Tags: map[string]string{"k": "v"}}); err != nil {
			t.Fatalf("Put(good) again: %v", err)
		}
		if len(blob) != 5 {
			if _, content, err := st.Get(ctx, "good"); err != nil || string(content) != "hello" {
				t.Fatalf("Get(good) after a new Put = %q, %v; want the content repaired", content, err)
			}
		}
		if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("new content"), ArtifactID: "fresh", RunID: "r2"}); err != nil {
			t.Fatalf("Put(fresh): %v", err)
		}
		check := func(st *artifact.FS) {
			t.Helper()
			if _, content, err := st.Get(ctx, "fresh"); err != nil || string(content) != "new content" {
				t.Fatalf("Get(fresh) = %q, %v", content, err)
			}
			all, err := st.ListAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := fzIDs(all); !slices.Contains(got, "good") || !slices.Contains(got, "fresh") || slices.Contains(got, "x1") != (metaErr == nil) {
				t.Fatalf("ListAll after the puts lists %v", got)
			}
		}
		check(st)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		st2, err := artifact.NewFS(dir)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer st2.Close()
		check(st2)
	})
}

// TestMetaFileNamingAnotherArtifactIsNotIndexed: refs/x1.meta whose
// artifact_id is "other" is not indexed at open, so ListAll and Search
// never return an artifact that Metadata, Get and Exists do not find
// (readMeta refuses such a file and refresh skips it; the open's scan
// did not, until a fuzz target's property check showed it). The fuzz
// target only sees it once the refs directory's time has settled (a
// second old), so the test ages it.
func TestMetaFileNamingAnotherArtifactIsNotIndexed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	refs := filepath.Join(dir, "artifacts", "refs")
	meta := filepath.Join(refs, "x1.meta")
	if err := os.WriteFile(meta, []byte(`{"artifact_id": "other", "content_type": "text/plain"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{meta, refs} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st, err = artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.ListAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if _, err := st.Metadata(ctx, m.ArtifactID); err != nil {
			t.Errorf("ListAll lists %q, which Metadata cannot read: %v", m.ArtifactID, err)
		}
	}
	if n, err := st.Count(ctx, artifact.SearchParams{}); err != nil || n != 0 {
		t.Errorf("Count = %d, %v; want 0", n, err)
	}
}
