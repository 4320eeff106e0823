package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// A store trusts its index only while the refs directory (and each .meta
// file) keeps a modification time at least a second old when it looked: a
// change within the same clock tick of a coarse file system leaves the
// time as it was. Here another store adds an artifact and rewrites one,
// and the times are put back to what the first store saw (the same tick);
// it must still list both and the new tags. If settled() kept recent
// times, the first store would take the directory and the file for
// unchanged and miss both writes.
func TestFSSeesWritesMadeInTheClockTickOfItsLastLook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openFS(t, dir), openFS(t, dir)
	refs := filepath.Join(dir, "artifacts", "refs")
	m := mustPut(t, b, artifact.PutParams{Content: []byte("one"), RunID: "r1", Tags: map[string]string{"v": "1"}})
	file := filepath.Join(refs, m.ArtifactID+".meta")
	dirInfo, err := os.Stat(refs)
	if err != nil {
		t.Fatal(err)
	}
	fileInfo, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.Search(ctx, artifact.SearchParams{RunID: "r1"}); err != nil || len(got) != 1 {
		t.Fatalf("first Search = %d artifacts, %v; want 1", len(got), err)
	}
	if _, err := b.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID, Tags: map[string]string{"v": "2"}}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, b, artifact.PutParams{Content: []byte("two"), RunID: "r1"})
	for p, fi := range map[string]os.FileInfo{file: fileInfo, refs: dirInfo} {
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	if time.Since(dirInfo.ModTime()) > 900*time.Millisecond {
		t.Skip("too slow: the times the first store saw are settled now")
	}
	got, err := a.Search(ctx, artifact.SearchParams{RunID: "r1"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Search after writes in the same tick = %d artifacts, %v; want 2", len(got), err)
	}
	for _, g := range got {
		if g.ArtifactID == m.ArtifactID && g.Tags["v"] != "2" {
			t.Errorf("rewritten artifact listed with tags %v; want v=2", g.Tags)
		}
	}
}
