package artifact_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// A Delete killed between removing refs/<id>.meta and removing the
// catalog row leaves a row without a .meta file, which Python lists and
// counts for ever (it answers from a non-empty catalog without
// rebuilding it). Opening the store removes it.
func TestOpenRemovesCatalogRowOfArtifactWithoutMeta(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "artifacts"), 0o777); err != nil {
		t.Fatal(err)
	}
	createPythonCatalog(t, dir)
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept := mustPut(t, st, artifact.PutParams{Content: []byte("kept"), RunID: "r"})
	ghost := mustPut(t, st, artifact.PutParams{Content: []byte("deleted"), RunID: "r"})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// The killed Delete's first step.
	if err := os.Remove(filepath.Join(dir, "artifacts", "refs", ghost.ArtifactID+".meta")); err != nil {
		t.Fatal(err)
	}
	st = openFS(t, dir) // the restart
	if n, err := st.Count(ctx, artifact.SearchParams{}); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	rows := catalogRows(t, dir)
	if _, ok := rows[ghost.ArtifactID]; ok {
		t.Errorf("catalog still holds the row of %s, whose .meta is gone: Python lists it", ghost.ArtifactID)
	}
	if _, ok := rows[kept.ArtifactID]; !ok {
		t.Errorf("catalog lost the row of %s", kept.ArtifactID)
	}
}

// Rows whose artifact still has a .meta file are kept at open, also when
// FS does not index it: a legacy-layout file, refs or legacy files that
// do not decode (Python may read them later, repaired), and ids FS cannot
// name a file by.
func TestOpenKeepsCatalogRowsOfArtifactsWithMetaFiles(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(filepath.Join(root, "refs"), 0o777); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"legacy_ok.meta":           `{"artifact_id": "legacy_ok", "content_type": "text/plain", "size_bytes": 2, "created_at": "2025-01-01T00:00:00+00:00"}`,
		"legacy_ok.bin":            "hi",
		"legacy_bad.meta":          `{"artifact_id": "legacy_`,
		"refs/refs_bad.meta":       `{"artifact_id": "refs_`,
		"refs/not.a.valid.id.meta": `{"artifact_id": "not.a.valid.id"}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	createPythonCatalog(t, dir)
	want := []string{"legacy_bad", "legacy_ok", "not.a.valid.id", "refs_bad"}
	db, err := sql.Open("sqlite", "file:"+catalogPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range want {
		if _, err := db.Exec(`INSERT INTO artifact_catalog (artifact_id, tags_json, metadata_json, descriptor_json, access_json, raw_json)
			VALUES (?, '{}', '{}', '{}', '{}', '{}')`, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	openFS(t, dir)
	var got []string
	for id := range catalogRows(t, dir) {
		got = append(got, id)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("catalog rows after open = %v, want %v", got, want)
	}
}
