package artifact_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Two stores on one directory without a catalog (a gateway and a runner).
// The runner stores an artifact the gateway has not listed since; Python
// then creates the empty catalog, and the gateway's next write fills it.
// The fill must hold the runner's artifact, read from its .meta file: the
// table is no longer empty, so Python skips its rebuild, and its gc
// deletes the blob of any artifact without a row.
func TestCatalogFillIncludesArtifactsStoredByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	gateway := openFS(t, dir)
	runner := openFS(t, dir)
	fromRunner := mustPut(t, runner, artifact.PutParams{Content: []byte("stored by the runner"), RunID: "r"})
	createPythonCatalog(t, dir)
	fromGateway := mustPut(t, gateway, artifact.PutParams{Content: []byte("stored by the gateway"), RunID: "r"})
	rows := catalogRows(t, dir)
	for _, m := range []*artifact.Metadata{fromRunner, fromGateway} {
		row, ok := rows[m.ArtifactID]
		if !ok {
			t.Errorf("catalog (%d rows) has none for %s, whose .meta is on disk: Python's gc would delete blob %s", len(rows), m.ArtifactID, m.BlobID)
			continue
		}
		if row["blob_id"] != m.BlobID {
			t.Errorf("row of %s names blob %v, want %s", m.ArtifactID, row["blob_id"], m.BlobID)
		}
	}
}
