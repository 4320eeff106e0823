package artifact_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// execCatalog runs statements on the catalog under dir, as another
// writer would.
func execCatalog(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+catalogPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Delete removes the artifact's catalog row (spec §4.8), so that Python,
// which lists from the catalog, no longer lists it.
func TestFSDeleteRemovesCatalogRow(t *testing.T) {
	dir := t.TempDir()
	st := openFS(t, dir)
	createPythonCatalog(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("doomed"), RunID: "r"})
	if _, ok := catalogRows(t, dir)[m.ArtifactID]; !ok {
		t.Fatalf("no row after Put")
	}
	if ok, err := st.Delete(context.Background(), m.ArtifactID); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if _, ok := catalogRows(t, dir)[m.ArtifactID]; ok {
		t.Errorf("the row of the deleted artifact %s is still in the catalog", m.ArtifactID)
	}
}

// A row whose blob_id column names another blob than its .meta file is
// rewritten at open even when its raw_json is right: Python's gc reads
// the blob_id column, and would delete the artifact's blob.
func TestNewFSRewritesRowWithStaleBlobIDColumn(t *testing.T) {
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	createPythonCatalog(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("content"), RunID: "r"})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	execCatalog(t, dir, `UPDATE artifact_catalog SET blob_id = 'stale' WHERE artifact_id = '`+m.ArtifactID+`'`)
	openFS(t, dir)
	if got := catalogRows(t, dir)[m.ArtifactID]["blob_id"]; got != m.BlobID {
		t.Errorf("blob_id column after open = %v, want %s", got, m.BlobID)
	}
}

// A row whose id FS cannot name a file by is another writer's: opening
// FS leaves it, although no .meta file of that name exists.
func TestNewFSLeavesCatalogRowsWithInvalidIDs(t *testing.T) {
	dir := t.TempDir()
	openFS(t, dir) // creates the directories
	createPythonCatalog(t, dir)
	execCatalog(t, dir, `INSERT INTO artifact_catalog (artifact_id, tags_json, metadata_json, descriptor_json, access_json, raw_json)
		VALUES ('not a valid id', '{}', '{}', '{}', '{}', '{}')`)
	openFS(t, dir)
	if _, ok := catalogRows(t, dir)["not a valid id"]; !ok {
		t.Errorf("opening FS removed the row of an id it cannot name a file by")
	}
}

// A catalog replaced while FS runs (removed and created again) gets the
// rows of later writes, and is filled: FS must not keep writing to the
// connection of the removed file.
func TestFSWritesToCatalogReplacedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	st := openFS(t, dir)
	createPythonCatalog(t, dir)
	a := mustPut(t, st, artifact.PutParams{Content: []byte("a"), RunID: "r"})
	if err := os.Remove(catalogPath(dir)); err != nil {
		t.Fatal(err)
	}
	createPythonCatalog(t, dir)
	b := mustPut(t, st, artifact.PutParams{Content: []byte("b"), RunID: "r"})
	rows := catalogRows(t, dir)
	for _, m := range []*artifact.Metadata{a, b} {
		if _, ok := rows[m.ArtifactID]; !ok {
			t.Errorf("the new catalog has no row for %s (rows: %d)", m.ArtifactID, len(rows))
		}
	}
}
