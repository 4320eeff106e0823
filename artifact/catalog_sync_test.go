package artifact_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// pythonCatalogDDL is Python FileArtifactStore._init_catalog (spec §4.8).
const pythonCatalogDDL = `CREATE TABLE IF NOT EXISTS artifact_catalog (
  artifact_id TEXT PRIMARY KEY, run_id TEXT, blob_id TEXT, content_type TEXT, size_bytes INTEGER,
  created_at TEXT, semantic_kind TEXT, render_kind TEXT, modality TEXT, task TEXT, session_id TEXT,
  workflow_id TEXT, node_id TEXT, turn_id TEXT, classification_source TEXT,
  tags_json TEXT NOT NULL, metadata_json TEXT NOT NULL, descriptor_json TEXT NOT NULL,
  access_json TEXT NOT NULL, raw_json TEXT NOT NULL
)`

// createPythonCatalog does what Python's _init_catalog does: it creates
// the catalog file under dir and its empty table.
func createPythonCatalog(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+catalogPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(pythonCatalogDDL); err != nil {
		t.Fatal(err)
	}
}

// Python's FileArtifactStore.__init__ runs _init_catalog() (creates the
// file and the empty table) and then _rebuild_catalog_if_empty(), which
// rebuilds from the .meta files only when COUNT(*) == 0. A running FS
// that writes a row into the freshly created table between those two
// steps must write every indexed artifact's row with it: otherwise Python
// skips its rebuild, the artifacts stored before have no row, and
// Python's gc() (referenced set = catalog rows) deletes their blobs.
func TestFSFillsCatalogThatAppearsWhileRunning(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openFS(t, dir)
	before := mustPut(t, st, artifact.PutParams{Content: []byte("stored before the catalog"), RunID: "r"})
	createPythonCatalog(t, dir)
	after, err := st.Put(ctx, artifact.PutParams{Content: []byte("stored after"), RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	// Python's _rebuild_catalog_if_empty now sees a non-empty table and
	// does not rebuild: the rows FS wrote are all the catalog will hold.
	rows := catalogRows(t, dir)
	if _, ok := rows[after.ArtifactID]; !ok {
		t.Fatalf("no row for the artifact just stored: %v", rows)
	}
	if _, ok := rows[before.ArtifactID]; !ok {
		t.Errorf("catalog rows = %d, missing %s (stored before the catalog appeared): Python skips its rebuild on a non-empty table and its gc would delete that blob", len(rows), before.ArtifactID)
	}
}

// The same when FS first meets the catalog file before its table exists
// (sqlite3.connect creates the file, _init_catalog the table after): the
// write that finds no table fills nothing, and the first write that finds
// the table fills it.
func TestFSFillsCatalogWhoseTableAppearsLater(t *testing.T) {
	dir := t.TempDir()
	st := openFS(t, dir)
	before := mustPut(t, st, artifact.PutParams{Content: []byte("stored before the catalog"), RunID: "r"})
	if err := os.WriteFile(catalogPath(dir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	during := mustPut(t, st, artifact.PutParams{Content: []byte("stored with no table"), RunID: "r"})
	createPythonCatalog(t, dir)
	after := mustPut(t, st, artifact.PutParams{Content: []byte("stored after"), RunID: "r"})
	rows := catalogRows(t, dir)
	for _, m := range []*artifact.Metadata{before, during, after} {
		if _, ok := rows[m.ArtifactID]; !ok {
			t.Errorf("catalog has %d rows, none for %s", len(rows), m.ArtifactID)
		}
	}
}

// writeMeta renames the new .meta file into place and only then upserts
// the catalog row: a kill (or a failed upsert) between the two leaves the
// artifact's old row. With a re-Put under an explicit id with new
// content, that row names the old blob: Python's gc (referenced = catalog
// rows) would delete the new blob, the artifact's only content. Opening
// the store brings the rows of the artifacts it indexes in step with
// their .meta files.
func TestNewFSRewritesStaleCatalogRow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	createPythonCatalog(t, dir)
	db, err := sql.Open("sqlite", "file:"+catalogPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("version 1"), ArtifactID: "doc"}); err != nil {
		t.Fatal(err)
	}
	var oldBlob, oldRaw string
	if err := db.QueryRow(`SELECT blob_id, raw_json FROM artifact_catalog WHERE artifact_id = 'doc'`).Scan(&oldBlob, &oldRaw); err != nil {
		t.Fatal(err)
	}
	v2, err := st.Put(ctx, artifact.PutParams{Content: []byte("version 2, longer"), ArtifactID: "doc"})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	// The state a kill between the .meta rename and the row upsert of the
	// second Put leaves: the new .meta file, the old row.
	if _, err := db.Exec(`UPDATE artifact_catalog SET blob_id = ?, raw_json = ? WHERE artifact_id = 'doc'`, oldBlob, oldRaw); err != nil {
		t.Fatal(err)
	}
	openFS(t, dir) // the restart
	var blob, raw string
	if err := db.QueryRow(`SELECT blob_id, raw_json FROM artifact_catalog WHERE artifact_id = 'doc'`).Scan(&blob, &raw); err != nil {
		t.Fatal(err)
	}
	if blob != v2.BlobID {
		t.Errorf("after reopening, the catalog row of doc has blob_id %s (its old content), its .meta %s: Python's gc would delete the artifact's content", blob, v2.BlobID)
	}
	if raw == oldRaw {
		t.Errorf("after reopening, the catalog row of doc keeps its old raw_json %s", raw)
	}
}
