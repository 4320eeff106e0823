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

// A blob of the right size is not taken on trust either: on XFS (and ext4
// with data=writeback) a power loss after Python's unsynced rename leaves
// the file at full size with zero-filled blocks (docs/compatibility.md, "A
// damaged artifact blob"). Put compares the existing bytes with the
// content (in chunks, so a difference past the first chunk counts) and
// rewrites a blob that differs; a blob that holds the content is kept
// (spec §4.8: existing blob not rewritten).
func TestFSPutChecksTheBytesOfASameSizeBlob(t *testing.T) {
	small := []byte(`{"answer":"a value the offloading store moved out of a ledger record"}`)
	large := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // several chunks
	lateFlip := bytes.Clone(large)
	lateFlip[len(lateFlip)-3] ^= 1
	for _, c := range []struct {
		name          string
		content, disk []byte
	}{
		{"Zeroed", small, make([]byte, len(small))},
		{"LargeDiffersInLastChunk", large, lateFlip},
		{"Intact", large, large},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			s := openFS(t, dir)
			blob := filepath.Join(dir, "artifacts", "blobs", artifact.BlobID(c.content)+".bin")
			if err := os.WriteFile(blob, c.disk, 0o644); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(blob)
			if err != nil {
				t.Fatal(err)
			}
			m, err := s.Put(ctx, artifact.PutParams{Content: c.content, ContentType: "application/json", RunID: "run-1"})
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := s.Get(ctx, m.ArtifactID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.content) {
				t.Fatalf("artifact %s reads back %q…, not the %d bytes put", m.ArtifactID, got[:8], len(c.content))
			}
			after, err := os.Stat(blob)
			if err != nil {
				t.Fatal(err)
			}
			if kept, intact := os.SameFile(before, after), bytes.Equal(c.disk, c.content); kept != intact {
				t.Errorf("blob kept = %v, want %v (kept exactly when it holds the content)", kept, intact)
			}
		})
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
	if _, r, err := s.Open(ctx, m.ArtifactID); !errors.Is(err, artifact.ErrDamaged) || r != nil {
		t.Fatalf("Open of a torn blob = %v, %v; want no reader and an ErrDamaged", r, err)
	}
	// Put of the same content repairs it.
	if _, err := s.Put(ctx, artifact.PutParams{Content: content, ContentType: "text/plain", RunID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	if _, got, err = s.Get(ctx, m.ArtifactID); err != nil || string(got) != string(content) {
		t.Fatalf("Get after the repairing Put = %q, %v", got, err)
	}
}
