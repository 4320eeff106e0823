package artifact_test

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Restore's doc: "Other refs stay, and so does a ref whose artifact is not
// in st (a dangling ref must not block its reader)". A ref-shaped value
// whose "$artifact" is not a valid id names no artifact in any store, but
// Restore returns the store's ErrInvalidID instead of leaving it.
func TestRestoreLeavesRefLookalikeWithInvalidID(t *testing.T) {
	ctx := context.Background()
	st := artifact.NewMemory()
	for _, id := range []string{"", "see attachment #3", "../x"} {
		v := map[string]any{"doc": map[string]any{"$artifact": id}}
		got, err := artifact.Restore(ctx, st, v, func(*artifact.Metadata) bool { return true })
		if err != nil {
			t.Errorf("Restore(%q): %v; want the value left as it is", id, err)
			continue
		}
		if want := map[string]any{"doc": map[string]any{"$artifact": id}}; !reflect.DeepEqual(got, want) {
			t.Errorf("Restore(%q) = %v, want %v", id, got, want)
		}
	}
}

// The same promise for a ref whose metadata survives but whose content
// does not (FS: the blob is gone, so Exists reports false and Get
// ErrNotFound): Restore fails instead of leaving the dangling ref.
func TestRestoreLeavesRefWithoutContent(t *testing.T) {
	ctx := context.Background()
	st, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Put(ctx, artifact.PutParams{Content: []byte("hello"), ContentType: "text/plain", RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.ContentPath(ctx, m.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Exists(ctx, m.ArtifactID); err != nil || ok {
		t.Fatalf("Exists = %v, %v; want false", ok, err)
	}
	v := map[string]any{"doc": artifact.Ref(m.ArtifactID)}
	got, err := artifact.Restore(ctx, st, v, func(*artifact.Metadata) bool { return true })
	if err != nil {
		t.Fatalf("Restore: %v; want the dangling ref left as it is", err)
	}
	if !reflect.DeepEqual(got, map[string]any{"doc": artifact.Ref(m.ArtifactID)}) {
		t.Fatalf("Restore = %v", got)
	}
}
