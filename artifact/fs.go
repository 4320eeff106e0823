package artifact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// FS is the file-backed Store, with the layout of the Python
// FileArtifactStore:
//
//	<dir>/artifacts/blobs/<blob_id>.bin       content, written once per blob
//	<dir>/artifacts/refs/<artifact_id>.meta   Metadata JSON (indent 2, non-ASCII raw)
//	<dir>/artifacts/<artifact_id>.bin/.meta   legacy v0 layout, read only
//
// The .meta files are the source of truth: Get, Metadata, Exists and the
// read-modify-write of UpdateMetadata and RecordAccess read them from
// disk. Search, Count, FacetCounts, Stats and the listings answer from an
// in-process index instead of Python's artifact_catalog.sqlite3: the index
// is built from the .meta files at open (and by Reindex), kept up to date
// by this process's writes, and, when the refs directory changed since it
// last looked, brought up to date with what other processes wrote there
// (new, rewritten and removed .meta files).
//
// When Python's catalog (artifacts/artifact_catalog.sqlite3, see
// CatalogFile) exists, every .meta write upserts the artifact's row in it
// and every delete removes the row, as Python does; NewFS, and the first
// write to a catalog that appeared since, add the missing rows of the
// artifacts on disk (all processes' .meta files, not only those this one
// has indexed) and rewrite those that differ from their .meta file:
// Python lists and garbage-collects from the catalog. FS never creates
// the catalog. Call Close to release its connection.
//
// Writes are serialised by a mutex; each file is written to a temporary
// file, synced and renamed into place, and its directory is synced before
// the write returns: a run state saved afterwards may refer to the
// artifact, so its files must survive a power loss first.
type FS struct {
	root  string // <dir>/artifacts
	blobs string
	refs  string

	mu    sync.RWMutex
	now   func() time.Time
	index map[string]*Metadata
	// refsMTime is the refs directory's modification time when the index
	// last matched it (zero: look again); refsFiles holds the modification
	// time of each indexed refs/<id>.meta file as read (zero: read it
	// again). Times less than a second old are kept as zero: a change in
	// the same clock tick would not move them.
	refsMTime time.Time
	refsFiles map[string]time.Time
	// legacy holds the indexed ids read from the legacy layout alone:
	// refresh checks that their .meta files still exist, which the refs
	// directory's time does not tell.
	legacy  map[string]bool
	catalog catalog
	// syncDir makes a directory's entries durable (atomicfile.SyncDir;
	// tests watch it).
	syncDir func(dir string) error
}

var _ Store = (*FS)(nil)

// filePerm is the mode FS creates files with, under the umask: Python's
// open() gives 0666 there too.
const filePerm = 0o666

// NewFS opens (creating the directories if needed) the artifact store
// under dir and builds its search index from the .meta files found there.
func NewFS(dir string) (*FS, error) {
	root := filepath.Join(dir, "artifacts")
	s := &FS{
		root:    root,
		blobs:   filepath.Join(root, "blobs"),
		refs:    filepath.Join(root, "refs"),
		now:     time.Now,
		syncDir: atomicfile.SyncDir,
	}
	s.catalog.path = filepath.Join(root, CatalogFile)
	s.catalog.fill = s.syncCatalog
	// 0777 here and filePerm for files, under the umask, as Python's mkdir
	// and open give: a group-shared data dir stays writable by the group.
	for _, d := range []string{s.blobs, s.refs} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return nil, fmt.Errorf("opening artifact store %s: %w", dir, err)
		}
	}
	// A Put killed before its renames left its temps: content no artifact
	// names, which GC (it reads *.bin) never collects.
	atomicfile.RemoveStaleTemps(s.blobs, []string{"?*.bin"}, nil)
	atomicfile.RemoveStaleTemps(s.refs, []string{"?*.meta"}, nil)
	if _, err := s.Reindex(context.Background()); err != nil {
		return nil, fmt.Errorf("opening artifact store %s: %w", dir, err)
	}
	s.mu.Lock()
	err := s.syncCatalog()
	if err != nil {
		err = errors.Join(err, s.catalog.close())
	}
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("opening artifact store %s: %w", dir, err)
	}
	return s, nil
}

// SetClock replaces the clock that stamps created_at and access times
// (time.Now by default).
func (s *FS) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Reindex rebuilds the search index from the .meta files (refs first, then
// the legacy layout; unreadable files are skipped) and returns how many
// artifacts it holds.
func (s *FS) Reindex(ctx context.Context) (int, error) {
	// Writes wait for the scan: one that landed between the scan and the
	// swap would be lost from the index (or a deleted artifact come back).
	s.mu.Lock()
	defer s.mu.Unlock()
	dirTime := s.refsDirTime()
	metas, _, err := s.scan(ctx, false)
	if err != nil {
		return 0, err
	}
	index := make(map[string]*Metadata, len(metas))
	files := map[string]time.Time{}
	legacy := map[string]bool{}
	for _, m := range metas {
		index[m.ArtifactID] = m.Metadata
		if m.inRefs {
			files[m.ArtifactID] = m.modTime
		} else {
			legacy[m.ArtifactID] = true
		}
	}
	s.index, s.refsFiles, s.refsMTime, s.legacy = index, files, dirTime, legacy
	return len(index), nil
}

// dropDeletedLegacy drops from the index the legacy-layout artifacts whose
// .meta file is gone (another process deleted them).
func (s *FS) dropDeletedLegacy() {
	s.mu.RLock()
	n := len(s.legacy)
	s.mu.RUnlock()
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropDeletedLegacyLocked()
}

// dropDeletedLegacyLocked is dropDeletedLegacy for callers holding s.mu.
func (s *FS) dropDeletedLegacyLocked() {
	for id := range s.legacy {
		if _, err := os.Lstat(s.legacyMetaPath(id)); errors.Is(err, fs.ErrNotExist) {
			delete(s.legacy, id)
			if _, inRefs := s.refsFiles[id]; !inRefs {
				delete(s.index, id)
			}
		}
	}
}

// refsDirTime is the refs directory's settled modification time.
func (s *FS) refsDirTime() time.Time {
	fi, err := os.Stat(s.refs)
	if err != nil {
		return time.Time{}
	}
	return settled(fi.ModTime())
}

// settled returns t, or zero when t is recent enough that a change in the
// same clock tick would leave it unchanged.
func settled(t time.Time) time.Time {
	if time.Since(t) < time.Second {
		return time.Time{}
	}
	return t
}

// refresh brings the index up to date with the refs directory when it
// changed since the index last matched it: another process wrote, rewrote
// or deleted metadata there. Lists and searches call it first.
func (s *FS) refresh(ctx context.Context) error {
	s.dropDeletedLegacy()
	if fi, err := os.Stat(s.refs); err == nil {
		s.mu.RLock()
		same := !s.refsMTime.IsZero() && fi.ModTime().Equal(s.refsMTime)
		s.mu.RUnlock()
		if same {
			return nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked(ctx)
}

// refreshLocked reads the refs directory and brings the index up to date
// with it, re-reading the .meta files that changed since they were
// indexed. Callers hold s.mu.
func (s *FS) refreshLocked(ctx context.Context) error {
	dirTime := s.refsDirTime()
	entries, err := os.ReadDir(s.refs)
	if err != nil {
		return fmt.Errorf("scanning artifact metadata: %w", err)
	}
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		id, ok := strings.CutSuffix(e.Name(), ".meta")
		if !ok || e.IsDir() || !ValidID(id) {
			continue
		}
		present[id] = true
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if t, ok := s.refsFiles[id]; ok && !t.IsZero() && t.Equal(info.ModTime()) {
			continue
		}
		m, err := readMetaFile(filepath.Join(s.refs, e.Name()))
		if err != nil || m.ArtifactID != id {
			// Unreadable, or naming another artifact: Metadata and Get
			// refuse it, so lists skip it, as a store opened now does.
			// Left out of refsFiles, it is read again next time.
			delete(s.index, id)
			delete(s.refsFiles, id)
			continue
		}
		s.index[id], s.refsFiles[id] = m, settled(info.ModTime())
	}
	for id := range s.refsFiles {
		if !present[id] {
			delete(s.refsFiles, id)
			delete(s.index, id)
		}
	}
	s.refsMTime = dirTime
	return nil
}

// scannedMeta is a metadata file scan read.
type scannedMeta struct {
	*Metadata
	inRefs  bool      // refs/<id>.meta, not the legacy layout
	modTime time.Time // of the file, as read
}

// scan reads every .meta file; unless every is set, the first file naming
// an id wins. It also returns the files it could not read, which callers
// skip (lists) or must not take for absent (GC).
func (s *FS) scan(ctx context.Context, every bool) (_ []scannedMeta, unreadable []string, _ error) {
	var out []scannedMeta
	seen := map[string]bool{}
	for _, dir := range []string{s.refs, s.root} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("scanning artifact metadata: %w", err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".meta") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			info, ierr := e.Info() // before the read: a rewrite after it is seen again
			m, err := readMetaFile(path)
			if ierr != nil || err != nil || !ValidID(m.ArtifactID) {
				unreadable = append(unreadable, path)
				continue
			}
			if !every && m.ArtifactID != strings.TrimSuffix(e.Name(), ".meta") {
				// A file naming another artifact: readMeta refuses it and
				// refresh skips it, so the index must not list it (GC, with
				// every, still counts the blob it references).
				continue
			}
			if seen[m.ArtifactID] && !every {
				continue
			}
			seen[m.ArtifactID] = true
			out = append(out, scannedMeta{Metadata: m, inRefs: dir == s.refs, modTime: settled(info.ModTime())})
		}
	}
	return out, unreadable, nil
}

func readMetaFile(path string) (*Metadata, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseMetadata(b)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return m, nil
}

func (s *FS) refPath(id string) string        { return filepath.Join(s.refs, id+".meta") }
func (s *FS) legacyMetaPath(id string) string { return filepath.Join(s.root, id+".meta") }
func (s *FS) legacyBinPath(id string) string  { return filepath.Join(s.root, id+".bin") }

// blobPath validates blobID (it reaches the file system too).
func (s *FS) blobPath(blobID string) (string, error) {
	if !ValidID(blobID) {
		return "", fmt.Errorf("blob id %q: %w", blobID, ErrInvalidID)
	}
	return filepath.Join(s.blobs, blobID+".bin"), nil
}

// readMeta reads an artifact's metadata from disk: refs first, then the
// legacy layout.
//
// A .meta file that exists but does not decode reads as ErrNotFound, its
// cause kept in the error text: Python's _read_metadata_path returns None
// for it (get_metadata and load give None, exists False), and the lists
// skip it, so a single read must not find an artifact the lists do not.
// The legacy file is not tried then (Python's refs path wins when it
// exists), and the damaged file is left as it is. Failing to read the file
// (permissions, I/O) stays an error: a transient fault is not an absence.
func (s *FS) readMeta(ctx context.Context, id string) (*Metadata, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, p := range []string{s.refPath(id), s.legacyMetaPath(id)} {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("artifact %s: %w", id, err)
		}
		m, err := ParseMetadata(b)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: metadata file %s unreadable (%v): %w", id, p, err, ErrNotFound)
		}
		if m.ArtifactID != id {
			// The id names the files read and written from here on (a
			// legacy .bin, the ref a metadata update rewrites): one the
			// file chose could reach outside the store or another artifact.
			return nil, fmt.Errorf("artifact %s: %s names artifact %q", id, p, m.ArtifactID)
		}
		return m, nil
	}
	return nil, fmt.Errorf("artifact %s: %w", id, ErrNotFound)
}

// contentPath is the blob of m, or the legacy .bin when m has no blob id.
func (s *FS) contentPath(m *Metadata) (string, error) {
	if b := pyval.Strip(m.BlobID); b != "" { // Python: blob_id.strip()
		return s.blobPath(b)
	}
	return s.legacyBinPath(m.ArtifactID), nil
}

// ContentPath returns the local file holding an artifact's content, or
// ErrNotFound when the artifact or its content file does not exist.
func (s *FS) ContentPath(ctx context.Context, id string) (string, error) {
	m, err := s.readMeta(ctx, id)
	if err != nil {
		return "", err
	}
	p, err := s.contentPath(m)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("content of artifact %s: %w", id, ErrNotFound)
		}
		return "", fmt.Errorf("content of artifact %s: %w", id, err)
	}
	return p, nil
}

// Put implements Store. The blob is written only if no file with its id
// and the content's size exists yet (one of another size is damaged, and
// rewritten); the metadata file is always (re)written.
func (s *FS) Put(ctx context.Context, p PutParams) (*Metadata, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := newMetadata(p, s.now())
	if err != nil {
		return nil, fmt.Errorf("storing artifact: %w", err)
	}
	if err := s.writeBlob(m.BlobID, p.Content); err != nil {
		return nil, fmt.Errorf("storing artifact %s: %w", m.ArtifactID, err)
	}
	if err := s.writeMeta(m); err != nil {
		return nil, fmt.Errorf("storing artifact %s: %w", m.ArtifactID, err)
	}
	return m.Clone(), nil
}

// writeBlob stores content as blob blobID. An existing blob is kept (spec
// §4.8) only when it holds content, and is then synced: Python writes
// blobs without fsync, so a power loss after its rename can leave the file
// empty, short, or of full size with zeroed blocks (XFS, ext4 writeback),
// and a blob it has just written may not be on disk yet. Kept damaged, it
// would be the content of every artifact of these bytes.
//
// A kept blob may be one no .meta names (its artifact was deleted), which
// a GC in another process would delete before this Put writes its .meta:
// its modification time is set to now first, so GC takes it for recent
// (BlobGracePeriod). When that fails (a blob another user owns) the blob
// is rewritten, which makes it recent too.
func (s *FS) writeBlob(blobID string, content []byte) error {
	path, err := s.blobPath(blobID)
	if err != nil {
		return err
	}
	if !keepBlob(path, content) || !touchBlob(path) {
		if err := atomicfile.Write(path, content, atomicfile.Options{Perm: filePerm}); err != nil {
			return err
		}
	}
	// Synced even when the blob was there: its writer may have been
	// killed between its rename and its sync.
	return s.syncDir(s.blobs)
}

// touchBlob sets the modification time of the blob at path to now and
// reports whether it did.
func touchBlob(path string) bool {
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		slog.Warn("artifact store: rewriting a kept blob whose time cannot be set",
			slog.String("blob", path), slog.Any("error", err))
		return false
	}
	return true
}

// blobChunk is how much of an existing blob keepBlob reads at a time.
const blobChunk = 64 << 10

// keepBlob reports whether the file at path holds exactly content and its
// data has been synced. Any other outcome (missing, unreadable, other
// bytes, a failed sync) means the caller rewrites the blob: the rewrite
// is atomic and synced, so it is the safe answer whenever in doubt.
func keepBlob(path string, content []byte) bool {
	f, err := atomicfile.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	warn := func(why string, attrs ...any) bool {
		slog.Warn("artifact store: rewriting a damaged blob",
			append([]any{slog.String("blob", path), slog.String("reason", why)}, attrs...)...)
		return false
	}
	if err != nil {
		return warn("unreadable", slog.Any("error", err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return warn("unreadable", slog.Any("error", err))
	}
	// The id is the content's hash, so a blob of another size is damaged.
	if fi.Size() != int64(len(content)) {
		return warn("size differs", slog.Int64("size", fi.Size()), slog.Int("want_size", len(content)))
	}
	buf := make([]byte, min(len(content), blobChunk)+1) // +1: sees bytes past the end
	for rest := content; ; {
		n, err := io.ReadFull(f, buf[:min(len(rest)+1, len(buf))])
		if n > len(rest) || !bytes.Equal(buf[:n], rest[:n]) {
			return warn("content differs")
		}
		rest = rest[n:]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if len(rest) > 0 {
				return warn("content differs")
			}
			break
		}
		if err != nil {
			return warn("unreadable", slog.Any("error", err))
		}
	}
	if err := f.Sync(); err != nil {
		return warn("sync failed", slog.Any("error", err))
	}
	return true
}

// writeMeta writes m's ref file, indexes it and upserts its catalog row.
// Callers hold s.mu.
//
// The .meta file is the source of truth and is written first. When the
// row cannot be written the artifact is stored (and listed by FS) but
// writeMeta fails, as Put does when a blob was written but not its
// metadata: without a row Python's gc would delete the blob, so the
// caller must not take the artifact as safely stored. Rewriting the
// metadata (a Put of the same content) retries the row.
func (s *FS) writeMeta(m *Metadata) error {
	if err := checkID(m.ArtifactID); err != nil {
		return err
	}
	b, err := encodeMeta(m)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.refPath(m.ArtifactID), b, atomicfile.Options{Perm: filePerm}); err != nil {
		return err
	}
	if err := s.syncDir(s.refs); err != nil {
		return err
	}
	s.index[m.ArtifactID] = m
	s.refsFiles[m.ArtifactID] = time.Time{} // its time settles by the next refresh's read
	return s.catalog.upsert(m)
}

// Get implements Store: Open, then the whole content read.
func (s *FS) Get(ctx context.Context, id string) (*Metadata, []byte, error) {
	m, f, err := s.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("reading artifact %s: %w", id, err)
	}
	return m, b, nil
}

// Open implements Store: the content file opened, once its size is
// checked against the metadata's. A blob torn by a power loss (Python
// writes without fsync) must not pass for the artifact's content; a size
// of 0 is not checked (older metadata may lack size_bytes).
func (s *FS) Open(ctx context.Context, id string) (*Metadata, ReadSeekCloser, error) {
	m, err := s.readMeta(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.contentPath(m)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("content of artifact %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening artifact %s: %w", id, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("opening artifact %s: %w", id, err)
	}
	if m.SizeBytes > 0 && fi.Size() != m.SizeBytes {
		f.Close()
		return nil, nil, fmt.Errorf("artifact %s: content file %s holds %d bytes, its metadata %d: %w",
			id, p, fi.Size(), m.SizeBytes, ErrDamaged)
	}
	return m, f, nil
}

// Metadata implements Store.
func (s *FS) Metadata(ctx context.Context, id string) (*Metadata, error) {
	return s.readMeta(ctx, id)
}

// Exists implements Store: the metadata and the content file both exist.
func (s *FS) Exists(ctx context.Context, id string) (bool, error) {
	_, err := s.ContentPath(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete implements Store. It removes the ref file and any legacy files
// but never a blob, which other artifacts may share (see GC).
func (s *FS) Delete(ctx context.Context, id string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(id)
}

func (s *FS) deleteLocked(id string) (bool, error) {
	deleted := false
	for _, p := range []string{s.refPath(id), s.legacyMetaPath(id), s.legacyBinPath(id)} {
		err := os.Remove(p)
		switch {
		case err == nil:
			deleted = true
		case !errors.Is(err, fs.ErrNotExist):
			return deleted, fmt.Errorf("deleting artifact %s: %w", id, err)
		}
	}
	delete(s.index, id)
	delete(s.refsFiles, id)
	delete(s.legacy, id)
	// Like Python, the row goes even when no file did (a stale row).
	if err := s.catalog.remove(id); err != nil {
		return deleted, fmt.Errorf("deleting artifact %s: %w", id, err)
	}
	return deleted, nil
}

// ListByRun implements Store.
func (s *FS) ListByRun(ctx context.Context, runID string) ([]*Metadata, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return cloneAll(byRun(s.all(), runID)), nil
}

// ListAll implements Store.
func (s *FS) ListAll(ctx context.Context, limit int) ([]*Metadata, error) {
	return s.Search(ctx, SearchParams{Limit: limit})
}

// DeleteByRun implements Store.
func (s *FS) DeleteByRun(ctx context.Context, runID string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// What other processes stored for the run is deleted too.
	if err := s.refresh(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range byRun(s.all(), runID) {
		ok, err := s.deleteLocked(m.ArtifactID)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// UpdateMetadata implements Store.
func (s *FS) UpdateMetadata(ctx context.Context, p UpdateParams) (*Metadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readMeta(ctx, p.ID)
	if err != nil {
		return nil, fmt.Errorf("updating artifact metadata: %w", err)
	}
	if m, err = applyUpdate(m, p); err != nil {
		return nil, fmt.Errorf("updating artifact metadata: %w", err)
	}
	if err := s.writeMeta(m); err != nil {
		return nil, fmt.Errorf("updating artifact metadata: %w", err)
	}
	return m.Clone(), nil
}

// RecordAccess implements Store.
func (s *FS) RecordAccess(ctx context.Context, p AccessParams) (*Metadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readMeta(ctx, p.ID)
	if err != nil {
		return nil, fmt.Errorf("recording artifact access: %w", err)
	}
	m.Access.record(p, formatNow(s.now))
	if err := s.writeMeta(m); err != nil {
		return nil, fmt.Errorf("recording artifact access: %w", err)
	}
	return m.Clone(), nil
}

// Search implements Store from the in-process index.
func (s *FS) Search(ctx context.Context, p SearchParams) ([]*Metadata, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return cloneAll(search(s.all(), p)), nil
}

// Count implements Store from the in-process index.
func (s *FS) Count(ctx context.Context, p SearchParams) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.refresh(ctx); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(filterAll(s.all(), p)), nil
}

// FacetCounts implements Store from the in-process index.
func (s *FS) FacetCounts(ctx context.Context, field string, p SearchParams) ([]FacetCount, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return facetCounts(filterAll(s.all(), p), field), nil
}

// Stats implements Store from the in-process index. Like Python, its
// Source is "artifact_catalog" unless a tag filter forces a scan.
func (s *FS) Stats(ctx context.Context, facets []string, p SearchParams) (*Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	source := SourceCatalog
	if len(p.Tags) > 0 {
		source = SourceScan
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return stats(s.all(), facets, p, source), nil
}

func (s *FS) all() []*Metadata {
	out := make([]*Metadata, 0, len(s.index))
	for _, m := range s.index {
		out = append(out, m)
	}
	return out
}
