package artifact_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Python FileArtifactStore reads a .meta file through _read_metadata_path,
// which catches json.JSONDecodeError, IOError, KeyError, TypeError and
// ValueError and returns None. So for an artifact whose refs/<id>.meta is
// damaged (truncated, not JSON) get_metadata() and load() return None (the
// artifact is "not found") and exists() returns False; an index built from
// the .meta files skips the file too. Callers that map ErrNotFound to Python's None path (a
// VisualFlow artifact node's "artifact not found", the memory rehydrate's
// "missing_messages") depend on it. The file itself is left alone, its
// cause is in the error text, and GC still refuses to run.
func TestFSDamagedMetaReadsAsNotFound(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Put(ctx, artifact.PutParams{Content: []byte("hello"), ContentType: "text/plain", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	// A .meta file cut short (written in place by a tool, or a disk error).
	ref := filepath.Join(dir, "artifacts", "refs", m.ArtifactID+".meta")
	damaged := []byte(`{"artifact_id": "`)
	if err := os.WriteFile(ref, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = st.Metadata(ctx, m.ArtifactID)
	if !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Metadata: err = %v; Python get_metadata() returns None (want ErrNotFound)", err)
	} else if !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "decoding artifact metadata") {
		t.Errorf("Metadata: err = %q; want the file and the decoding failure named", err)
	}
	if _, _, err := st.Get(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Get: err = %v; Python load() returns None (want ErrNotFound)", err)
	}
	if ok, err := st.Exists(ctx, m.ArtifactID); ok || err != nil {
		t.Errorf("Exists = %v, %v; Python exists() returns False (want false, nil)", ok, err)
	}
	if _, err := artifact.LoadJSON(ctx, st, m.ArtifactID); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("LoadJSON: err = %v; Python load_json() returns None (want ErrNotFound)", err)
	}
	if _, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID, Tags: map[string]string{"k": "v"}}); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("UpdateMetadata: err = %v; Python update_metadata() returns None (want ErrNotFound)", err)
	}
	if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID}); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("RecordAccess: err = %v; Python record_access() returns None (want ErrNotFound)", err)
	}
	// A store opened on the directory lists nothing either: its index,
	// built from the .meta files, skips the damaged one.
	reopened, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := reopened.Search(ctx, artifact.SearchParams{RunID: "r1"}); err != nil || len(found) != 0 {
		t.Errorf("Search after reopening = %d artifacts, %v; the index skips the damaged file (want 0)", len(found), err)
	}
	// Which blob the damaged file referenced is unknown: GC must not run.
	if _, err := st.GC(ctx, false); err == nil {
		t.Error("GC ran with a damaged .meta file; it must refuse")
	}
	if b, err := os.ReadFile(ref); err != nil || !bytes.Equal(b, damaged) {
		t.Errorf("damaged .meta file now %q, %v; it must be left as it was", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "artifacts", "blobs", m.BlobID+".bin")); err != nil {
		t.Errorf("blob of the damaged artifact: %v", err)
	}
}

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
