package artifact

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// GCReport is the result of FS.GC, in the Python report's JSON shape.
type GCReport struct {
	DryRun          bool      `json:"dry_run"`
	BlobsTotal      int       `json:"blobs_total"`
	BlobsReferenced int       `json:"blobs_referenced"`
	BlobsDeleted    int       `json:"blobs_deleted"`
	BytesReclaimed  int64     `json:"bytes_reclaimed"`
	Errors          []GCError `json:"errors"` // never nil
}

// GCError is a blob GC could not delete.
type GCError struct {
	BlobID string `json:"blob_id"`
	Error  string `json:"error"`
}

// GC deletes the blobs no artifact references (with dryRun, only reports
// them). The referenced set comes from the .meta files on disk, not from
// the index, so artifacts written by another process are respected; a
// Put racing in another process can still lose its blob, so run GC when
// no other process writes. Deleted counts and bytes are reported for dry
// runs too (what would be deleted).
func (s *FS) GC(ctx context.Context, dryRun bool) (*GCReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Every file's blob counts, also one a file of the same artifact id
	// shadows in the index (a copied or misnamed .meta): the file Get
	// reads for an id may be either.
	metas, unreadable, err := s.scan(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("collecting artifact blobs: %w", err)
	}
	if len(unreadable) > 0 {
		// Which blobs an unreadable metadata file references is unknown:
		// deleting any could destroy an artifact's content for good.
		return nil, fmt.Errorf("collecting artifact blobs: %d metadata files cannot be read (first: %s); repair or remove them first", len(unreadable), unreadable[0])
	}
	referenced := map[string]bool{}
	for _, m := range metas {
		if b := pyval.Strip(m.BlobID); b != "" { // as contentPath reads it
			referenced[b] = true
		}
	}
	entries, err := os.ReadDir(s.blobs)
	if err != nil {
		return nil, fmt.Errorf("collecting artifact blobs: %w", err)
	}
	r := &GCReport{DryRun: dryRun, BlobsReferenced: len(referenced), Errors: []GCError{}}
	for _, e := range entries {
		blobID, ok := strings.CutSuffix(e.Name(), ".bin")
		if !ok || e.IsDir() {
			continue
		}
		r.BlobsTotal++
		if referenced[blobID] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		var size int64
		if info, err := e.Info(); err == nil {
			size = info.Size()
		}
		if !dryRun {
			if err := os.Remove(filepath.Join(s.blobs, e.Name())); err != nil {
				r.Errors = append(r.Errors, GCError{BlobID: blobID, Error: err.Error()})
				continue
			}
		}
		r.BlobsDeleted++
		r.BytesReclaimed += size
	}
	return r, nil
}
