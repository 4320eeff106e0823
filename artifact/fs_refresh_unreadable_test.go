package artifact

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A .meta file that another writer turns into one Metadata refuses (it no
// longer decodes, or it names another artifact) takes the artifact out of
// the running store's lists too, as out of a store opened now: lists hold
// an artifact exactly when Metadata reads it.
func TestRefreshDropsArtifactWhoseMetaBecameUnreadable(t *testing.T) {
	for name, rewrite := range map[string]string{
		"undecodable":            `{"artifact_id": "`,
		"names another artifact": `{"artifact_id": "someone_else", "blob_id": "", "content_type": "text/plain", "size_bytes": 1, "created_at": "2024-01-01T00:00:00+00:00", "run_id": "r1"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st, err := NewFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			m, err := st.Put(ctx, PutParams{Content: []byte("x"), RunID: "r1", ContentType: "text/plain"})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := st.Count(ctx, SearchParams{RunID: "r1"}); err != nil || n != 1 {
				t.Fatalf("Count before = %d, %v", n, err)
			}
			ref := filepath.Join(dir, "artifacts", "refs", m.ArtifactID+".meta")
			// Replaced as writers do (temp and rename), so the refs
			// directory's time moves however long ago it was read.
			if err := os.WriteFile(ref+".new", []byte(rewrite), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(ref+".new", ref); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Metadata(ctx, m.ArtifactID); err == nil {
				t.Fatal("Metadata reads the rewritten file")
			} else if name == "undecodable" && !errors.Is(err, ErrNotFound) {
				t.Fatalf("Metadata = %v, want ErrNotFound", err)
			}
			fresh, err := NewFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			if n, err := fresh.Count(ctx, SearchParams{RunID: "r1"}); err != nil || n != 0 {
				t.Fatalf("a store opened now counts %d, %v", n, err)
			}
			n, err := st.Count(ctx, SearchParams{RunID: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			listed, err := st.ListByRun(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			found, err := st.Search(ctx, SearchParams{})
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 || len(listed) != 0 || len(found) != 0 {
				t.Errorf("running store: Count=%d ListByRun=%d Search=%d, want none (Metadata refuses the artifact)", n, len(listed), len(found))
			}
		})
	}
}
