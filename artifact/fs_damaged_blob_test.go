package artifact_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Spec §4.8: blobs/<blob_id>.bin holds the content, "written once per blob
// (temp + rename; existing blob not rewritten)". The blob id is the
// SHA-256 of the content, so a blob file of that name holding another
// number of bytes is damaged: Python's FileArtifactStore writes blobs
// without fsync, and a power loss after its rename of a new file can leave
// the file empty or short (Go shares the directory with Python). Put knows
// the content and rewrites such a blob; kept, every artifact of that
// content (an offloaded value's ref a run was just committed with) read
// back the damaged bytes with no error.
func TestFSPutRewritesABlobThatDoesNotHoldItsContent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openFS(t, dir)
	content := []byte(`{"answer":"a value the offloading store moved out of a ledger record"}`)
	blob := filepath.Join(dir, "artifacts", "blobs", artifact.BlobID(content)+".bin")
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		t.Fatal(err)
	}
	// A torn write left the blob empty (a new file renamed into place,
	// its data never synced).
	if err := os.WriteFile(blob, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := s.Put(ctx, artifact.PutParams{Content: content, ContentType: "application/json", RunID: "run-1",
		Tags: map[string]string{"source": "ledger_result_offload"}})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := s.Get(ctx, m.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(content) {
		t.Fatalf("Put succeeded but artifact %s reads back %q (%d bytes), want the %d bytes put", m.ArtifactID, got, len(got), len(content))
	}
}

// Get does not hand out a content file whose size is not the metadata's
// size_bytes (a blob torn after it was stored): it names the artifact and
// wraps ErrDamaged.
func TestFSGetRefusesADamagedBlob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openFS(t, dir)
	content := []byte("a value the offloading store moved out of a ledger record")
	m, err := s.Put(ctx, artifact.PutParams{Content: content, ContentType: "text/plain", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "artifacts", "blobs", artifact.BlobID(content)+".bin")
	if err := os.WriteFile(blob, content[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	_, got, err := s.Get(ctx, m.ArtifactID)
	if !errors.Is(err, artifact.ErrDamaged) || !strings.Contains(err.Error(), m.ArtifactID) {
		t.Fatalf("Get of a torn blob = %q, %v; want an ErrDamaged naming %s", got, err, m.ArtifactID)
	}
	// Put of the same content repairs it.
	if _, err := s.Put(ctx, artifact.PutParams{Content: content, ContentType: "text/plain", RunID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	if _, got, err = s.Get(ctx, m.ArtifactID); err != nil || string(got) != string(content) {
		t.Fatalf("Get after the repairing Put = %q, %v", got, err)
	}
}
