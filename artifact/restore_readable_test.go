package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// RestoreReadable leaves the ref of an artifact it cannot read back (a
// torn blob: ErrDamaged; JSON content that does not decode) and restores
// the others, where Restore fails the whole value.
func TestRestoreReadableLeavesUnreadableRefs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openFS(t, dir)
	put := func(content, ct string) string {
		m, err := st.Put(ctx, artifact.PutParams{Content: []byte(content), ContentType: ct, RunID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		return m.ArtifactID
	}
	good := put(`{"ok": true}`, "application/json")
	torn := put("a text the blob loses half of", "text/plain")
	bad := put(`{"answer": "torn`, "application/json")
	blob := filepath.Join(dir, "artifacts", "blobs", artifact.BlobID([]byte("a text the blob loses half of"))+".bin")
	if err := os.WriteFile(blob, []byte("a text"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := func(*artifact.Metadata) bool { return true }
	value := func() map[string]any {
		return map[string]any{"good": artifact.Ref(good), "torn": artifact.Ref(torn), "bad": artifact.Ref(bad)}
	}
	for _, id := range []string{"torn", "bad"} {
		if _, err := artifact.Restore(ctx, st, map[string]any{id: value()[id]}, all); err == nil {
			t.Errorf("Restore of the %s ref succeeded; want an error", id)
		}
	}
	got, err := artifact.RestoreReadable(ctx, st, value(), all)
	if err != nil {
		t.Fatalf("RestoreReadable: %v", err)
	}
	want := map[string]any{"good": map[string]any{"ok": true}, "torn": artifact.Ref(torn), "bad": artifact.Ref(bad)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RestoreReadable = %v, want %v", got, want)
	}
}
