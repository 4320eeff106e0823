package artifact

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFSPutSyncsDirectoriesBeforeReturning: Put makes the blob's and the
// metadata's directory entries durable, each after its file is in place
// and before Put returns, also when the blob was already there.
func TestFSPutSyncsDirectoriesBeforeReturning(t *testing.T) {
	s, err := NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var synced []string
	s.syncDir = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		synced = append(synced, filepath.Base(dir)+":"+filepath.Ext(names[len(names)-1]))
		return nil
	}
	ctx := context.Background()
	for _, runID := range []string{"run-a", "run-b"} { // the second finds the blob there
		synced = nil
		m, err := s.Put(ctx, PutParams{Content: []byte("same bytes"), ContentType: "text/plain", RunID: runID})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"blobs:.bin", "refs:.meta"}; !slices.Equal(synced, want) {
			t.Fatalf("Put of %s synced %v; want %v (each directory once its file is in place)", m.ArtifactID, synced, want)
		}
	}
}
