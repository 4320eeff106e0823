package artifact

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	msqlite "modernc.org/sqlite"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// CatalogFile is the name, under <dir>/artifacts, of the Python
// FileArtifactStore's SQLite catalog (table artifact_catalog). Python
// answers list_by_run, list_all, search, count and gc from it.
const CatalogFile = "artifact_catalog.sqlite3"

// catalogBusyTimeoutMS is Python sqlite3.connect's default timeout (5 s):
// both processes wait for each other's write lock as long.
const catalogBusyTimeoutMS = 5000

// catalogStyle is json.dumps(x, ensure_ascii=False, sort_keys=True), the
// text of the catalog's JSON columns (default separators ", " and ": ").
var catalogStyle = pyjson.Style{SortKeys: true}

// catalog keeps the rows of Python's artifact catalog in step with the
// .meta files FS writes and deletes, so that Python's listings see Go's
// artifacts and its gc keeps their blobs. It never creates the catalog:
// without one, Python builds it from the .meta files when it next opens
// the directory. The file is stat'ed on each write (Python may create,
// or a user remove, it while FS runs); one connection, opened on first
// use, is kept while the file stays the same. Callers hold FS.mu.
type catalog struct {
	path string
	conn driver.Conn // nil: not open
	file os.FileInfo // of the file conn has open
	// fill writes the rows of every artifact on disk (FS.syncCatalog);
	// filled records that it did so on the file conn has open. A write
	// to a catalog not yet filled fills it first: Python rebuilds a new
	// catalog from the .meta files only while its table is empty, so a
	// lone row written into a catalog Python just created would leave
	// every other artifact without one, and Python's gc would delete
	// their blobs.
	fill   func() error
	filled bool
}

// catalogColumns are the catalog's columns (Python's schema), in the
// order catalogRow gives their values; artifact_id is the key.
var catalogColumns = []string{
	"artifact_id", "run_id", "blob_id", "content_type", "size_bytes", "created_at",
	"semantic_kind", "render_kind", "modality", "task", "session_id", "workflow_id",
	"node_id", "turn_id", "classification_source", "tags_json", "metadata_json",
	"descriptor_json", "access_json", "raw_json",
}

// catalogUpsert writes a whole row, replacing every column of an existing
// one, as Python's own metadata writes do.
var catalogUpsert = func() string {
	sets := make([]string, 0, len(catalogColumns)-1)
	for _, c := range catalogColumns[1:] {
		sets = append(sets, c+" = excluded."+c)
	}
	return "INSERT INTO artifact_catalog (" + strings.Join(catalogColumns, ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(catalogColumns)), ", ") + ")" +
		" ON CONFLICT(artifact_id) DO UPDATE SET " + strings.Join(sets, ", ")
}()

// catalogRow is the row Python's _index_metadata writes for m, in
// catalogUpsert's parameter order.
func catalogRow(m *Metadata) ([]driver.NamedValue, error) {
	d := m.Descriptor
	tags := make(map[string]any, len(m.Tags))
	for k, v := range m.Tags {
		tags[k] = v
	}
	var texts [5]string
	for i, v := range []any{tags, emptyIfNil(m.Metadata), d.JSONValue(), m.Access.JSONValue(), m.JSONValue()} {
		var err error
		if texts[i], err = catalogText(m, v); err != nil {
			return nil, err
		}
	}
	vals := []any{
		m.ArtifactID, nullString(m.RunID), nullString(m.BlobID), m.ContentType, m.SizeBytes, m.CreatedAt,
		// Python's kinds are str ("" stays ''), its ids Optional[str].
		d.SemanticKind, d.RenderKind, d.Modality, d.Task,
		nullString(d.SessionID), nullString(d.WorkflowID), nullString(d.NodeID), nullString(d.TurnID),
		d.ClassificationSource,
		texts[0], texts[1], texts[2], texts[3], texts[4],
	}
	return namedValues(vals), nil
}

// catalogRawJSON is the raw_json column of m's row.
func catalogRawJSON(m *Metadata) (string, error) { return catalogText(m, m.JSONValue()) }

// catalogText is a JSON column of m's row holding v.
func catalogText(m *Metadata, v any) (string, error) {
	b, err := pyjson.Marshal(v, catalogStyle)
	if err != nil {
		return "", fmt.Errorf("encoding catalog row of artifact %s: %w", m.ArtifactID, err)
	}
	return string(b), nil
}

func namedValues(vals []any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vals))
	for i, v := range vals {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

// upsert writes m's row, if the catalog exists.
func (c *catalog) upsert(m *Metadata) error {
	args, err := catalogRow(m)
	if err != nil {
		return err
	}
	if err := c.exec(catalogUpsert, args); err != nil {
		return fmt.Errorf("updating the row in %s (the metadata file is written): %w", c.path, err)
	}
	return nil
}

// remove deletes id's row, if the catalog exists.
func (c *catalog) remove(id string) error {
	if err := c.exec("DELETE FROM artifact_catalog WHERE artifact_id = ?", namedValues([]any{id})); err != nil {
		return fmt.Errorf("removing the row from %s: %w", c.path, err)
	}
	return nil
}

// exec runs one autocommit statement on the catalog, after filling it if
// it is not yet (see catalog.fill); it does nothing when there is no
// catalog (or no table yet, see below).
func (c *catalog) exec(query string, args []driver.NamedValue) error {
	ok, err := c.ensureOpen()
	if err != nil || !ok {
		return err
	}
	if !c.filled && c.fill != nil {
		if err := c.fill(); err != nil {
			return err
		}
	}
	err = c.run(query, args)
	if isNoTable(err) {
		// Python is creating the catalog (file made, table not yet): it
		// fills the new, empty table from the .meta files after this, and
		// this change is already on disk.
		return nil
	}
	return err
}

// run executes a statement on the open connection.
func (c *catalog) run(query string, args []driver.NamedValue) error {
	ex, ok := c.conn.(driver.ExecerContext)
	if !ok {
		return errors.New("sqlite driver connection cannot execute statements")
	}
	// Not the caller's context: the .meta file is already written, and a
	// cancelled row write would leave it out of Python's listings. The
	// busy timeout bounds the wait.
	_, err := ex.ExecContext(context.Background(), query, args)
	return err
}

func isNoTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

// ensureOpen opens the catalog when its file exists, reopening it when the
// file was replaced and closing it when the file went away. It reports
// whether the catalog is open.
func (c *catalog) ensureOpen() (bool, error) {
	fi, err := os.Stat(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, c.close()
	}
	if err != nil {
		return false, err
	}
	if c.conn != nil && os.SameFile(c.file, fi) {
		return true, nil
	}
	if err := c.close(); err != nil {
		return false, err
	}
	conn, err := openCatalog(c.path)
	if err != nil {
		if _, serr := os.Stat(c.path); errors.Is(serr, fs.ErrNotExist) {
			return false, nil // removed since the Stat
		}
		return false, err
	}
	c.conn, c.file = conn, fi
	return true, nil
}

// openCatalog opens an existing catalog read-write. mode=rw keeps SQLite
// from creating the file; the journal mode is left as Python set it.
func openCatalog(path string) (driver.Conn, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=rw"}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // file:///C:/… on Windows
	}
	conn, err := (&msqlite.Driver{}).Open(u.String())
	if err != nil {
		return nil, err
	}
	if ex, ok := conn.(driver.ExecerContext); ok {
		_, err = ex.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout=%d", catalogBusyTimeoutMS), nil)
	} else {
		err = errors.New("sqlite driver connection cannot execute statements")
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// catalogEntry is what syncCatalog compares of a row with the .meta file.
type catalogEntry struct {
	blobID, rawJSON string
}

// entries returns the blob_id and raw_json of every row, by artifact id;
// ok is false when there is no catalog (or no table yet).
func (c *catalog) entries() (_ map[string]catalogEntry, ok bool, _ error) {
	open, err := c.ensureOpen()
	if err != nil || !open {
		return nil, false, err
	}
	q, isQueryer := c.conn.(driver.QueryerContext)
	if !isQueryer {
		return nil, false, errors.New("sqlite driver connection cannot run queries")
	}
	rows, err := q.QueryContext(context.Background(), "SELECT artifact_id, blob_id, raw_json FROM artifact_catalog", nil)
	if err != nil {
		if isNoTable(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer rows.Close()
	out := map[string]catalogEntry{}
	dest := make([]driver.Value, 3)
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			return out, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		if id, ok := dest[0].(string); ok {
			out[id] = catalogEntry{blobID: sqlText(dest[1]), rawJSON: sqlText(dest[2])}
		}
	}
}

// sqlText is a TEXT column's value; NULL (and any other type) is "".
func sqlText(v driver.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// close releases the connection, if open.
func (c *catalog) close() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn, c.file, c.filled = nil, nil, false
	if err != nil {
		return fmt.Errorf("closing %s: %w", c.path, err)
	}
	return nil
}

// syncCatalog brings an existing catalog's rows in step with the .meta
// files on disk (the index, refreshed first): it adds the rows missing
// (artifacts stored before a process kept the catalog, or whose row
// write failed) and rewrites those whose blob_id or raw_json differs
// from the .meta file (a kill or a failed write between the .meta rename
// and the row). Python's gc
// deletes the blob of an artifact without a row, or whose row names an
// old blob. It also removes the rows of artifacts with no .meta file
// in either layout (a Delete killed between removing the file and the
// row): Python answers its listings from the catalog and never rebuilds
// a non-empty one, so it would list such an artifact for ever. Callers
// hold s.mu.
func (s *FS) syncCatalog() error {
	have, ok, err := s.catalog.entries()
	if err != nil || !ok {
		return err
	}
	// The rows are those of the .meta files on disk, not of an index that
	// may not have seen what other processes stored since it last looked:
	// a catalog filled without them is not empty, so Python would not
	// rebuild it, and its gc would delete their blobs.
	s.dropDeletedLegacyLocked()
	if err := s.refreshLocked(context.Background()); err != nil {
		return fmt.Errorf("indexing artifacts in %s: %w", s.catalog.path, err)
	}
	var stale, orphans []string
	for id, m := range s.index {
		if ok, err := catalogRowMatches(have, m); err != nil {
			return err
		} else if !ok {
			stale = append(stale, id)
		}
	}
	for id := range have {
		// Ids FS cannot name a file by are another writer's: left alone.
		if _, indexed := s.index[id]; !indexed && ValidID(id) {
			orphans = append(orphans, id)
		}
	}
	if len(stale) > 0 || len(orphans) > 0 {
		if err := s.rewriteCatalogRows(stale, orphans); err != nil {
			return err
		}
	}
	s.catalog.filled = true
	return nil
}

// catalogRowMatches reports whether have holds m's row with m's blob_id
// and raw_json, the columns a stale row differs in.
func catalogRowMatches(have map[string]catalogEntry, m *Metadata) (bool, error) {
	e, ok := have[m.ArtifactID]
	if !ok || e.blobID != m.BlobID {
		return false, nil
	}
	raw, err := catalogRawJSON(m)
	return raw == e.rawJSON, err
}

// rewriteCatalogRows writes the rows of ids from their .meta files, read
// again inside the write transaction: another process that rewrote one
// since the index was read has its new .meta file on disk before its row
// write, which waits for this transaction, so an older row never
// replaces its newer one. An id whose .meta file is gone or unreadable
// is skipped. It removes the rows of orphans whose .meta files (refs and
// legacy) are still absent inside the transaction: a Put of that id
// since writes its row after this transaction, so no live row goes. A
// .meta file that exists but does not read keeps its row. Callers hold
// s.mu.
func (s *FS) rewriteCatalogRows(ids, orphans []string) error {
	// One transaction: a commit per row would sync the file per row.
	if err := s.catalog.run("BEGIN IMMEDIATE", nil); err != nil {
		return fmt.Errorf("indexing artifacts in %s: %w", s.catalog.path, err)
	}
	for _, id := range ids {
		m, err := s.readMeta(context.Background(), id)
		if err != nil {
			continue
		}
		args, err := catalogRow(m)
		if err == nil {
			err = s.catalog.run(catalogUpsert, args)
		}
		if err != nil {
			_ = s.catalog.run("ROLLBACK", nil)
			return fmt.Errorf("indexing artifact %s in %s: %w", id, s.catalog.path, err)
		}
	}
	for _, id := range orphans {
		if !s.metaFilesAbsent(id) {
			continue
		}
		if err := s.catalog.run("DELETE FROM artifact_catalog WHERE artifact_id = ?", namedValues([]any{id})); err != nil {
			_ = s.catalog.run("ROLLBACK", nil)
			return fmt.Errorf("removing the row of deleted artifact %s from %s: %w", id, s.catalog.path, err)
		}
	}
	if err := s.catalog.run("COMMIT", nil); err != nil {
		_ = s.catalog.run("ROLLBACK", nil)
		return fmt.Errorf("indexing artifacts in %s: %w", s.catalog.path, err)
	}
	return nil
}

// metaFilesAbsent reports whether id has no .meta file in either layout;
// a file it cannot tell about (permissions, I/O) counts as present.
func (s *FS) metaFilesAbsent(id string) bool {
	for _, p := range []string{s.refPath(id), s.legacyMetaPath(id)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// Close releases the connection to Python's artifact catalog, if FS opened
// one. The FS stays usable: a later write opens the catalog again.
func (s *FS) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.catalog.close()
}
