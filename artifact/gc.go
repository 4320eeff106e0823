package artifact

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// BlobGracePeriod is how recently modified an unreferenced blob may be
// and still be kept by GC: it may belong to a Put in progress, here or in
// another process, whose .meta file GC has not seen yet (a Put writes or
// keeps the blob first and its metadata after, within milliseconds). A
// Put that keeps an existing blob refreshes its modification time first.
// Ten minutes, as for leftover temp files (atomicfile.StaleTempAge).
const BlobGracePeriod = 10 * time.Minute

// GCReport is the result of FS.GC, in the Python report's JSON shape.
type GCReport struct {
	DryRun          bool      `json:"dry_run"`
	BlobsTotal      int       `json:"blobs_total"`
	BlobsReferenced int       `json:"blobs_referenced"`
	BlobsDeleted    int       `json:"blobs_deleted"`
	BytesReclaimed  int64     `json:"bytes_reclaimed"`
	Errors          []GCError `json:"errors"` // never nil
	// BlobsTooRecent counts the unreferenced blobs kept because they were
	// modified less than BlobGracePeriod ago (a later GC collects them).
	// Go only: Python's report has no such key, so it is not in the JSON.
	BlobsTooRecent int `json:"-"`
}

// GCError is a blob GC could not delete.
type GCError struct {
	BlobID string `json:"blob_id"`
	Error  string `json:"error"`
}

// GC deletes the blobs no artifact references (with dryRun, only reports
// them). The referenced set comes from the .meta files on disk, not from
// the index, so artifacts written by another process are respected.
// Blobs modified less than BlobGracePeriod ago are kept: a Put in another
// process (or another FS on the directory) may have written or kept its
// blob and not yet its .meta file, so GC can run while other processes
// write (what remains is a Put keeping a blob between GC's look at its
// age and its removal, microseconds apart). Deleted counts and bytes are
// reported for dry runs too (what would be deleted).
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
	// Wall-clock time, as the file system stamps modification times (not
	// s.now, which stamps metadata and tests may fix).
	cutoff := time.Now().Add(-BlobGracePeriod)
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
		// Stat'ed now, after the metadata scan: a Put whose .meta the scan
		// missed wrote or touched its blob before, so it reads as recent.
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			// Its age is unknown: it may be a Put's in progress.
			r.Errors = append(r.Errors, GCError{BlobID: blobID, Error: err.Error()})
			continue
		}
		if info.ModTime().After(cutoff) {
			r.BlobsTooRecent++
			continue
		}
		size := info.Size()
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
