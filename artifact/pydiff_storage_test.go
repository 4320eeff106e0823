package artifact_test

// Differential tests: the artifact stores against Python's
// InMemoryArtifactStore / FileArtifactStore (abstractruntime 0.4.28),
// called directly with the same inputs. Expected values are what the
// Python calls returned (see the comment on each).

import (
	"context"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

func putThree(t *testing.T, st artifact.Store) []string {
	t.Helper()
	var ids []string
	for _, p := range []artifact.PutParams{
		{Content: []byte("one"), ContentType: "text/plain", RunID: "r1",
			Metadata: map[string]any{"k": []any{"x", "y"}, "d": map[string]any{"a": 1}}},
		{Content: []byte("two"), ContentType: "text/plain", RunID: "r1", Metadata: map[string]any{"k": "x"}},
		{Content: []byte("three"), ContentType: "text/plain", RunID: "r1"},
	} {
		m, err := st.Put(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ArtifactID)
	}
	return ids
}

// Python facet_counts("metadata:<key>") uses str(value): a list facet is
// "['x', 'y']" and a dict facet "{'a': 1}" (both stores). With the three
// artifacts above, facet_counts("metadata:k") returned
// {'(none)': 1, "['x', 'y']": 1, 'x': 1} and facet_counts("metadata:d")
// {'(none)': 2, "{'a': 1}": 1}.
func TestDiffStoreFacetOfStructuredMetadataIsPythonStr(t *testing.T) {
	for name, st := range map[string]artifact.Store{"memory": artifact.NewMemory(), "fs": newTestFS(t)} {
		putThree(t, st)
		k, err := st.FacetCounts(context.Background(), "metadata:k", artifact.SearchParams{})
		if err != nil {
			t.Fatal(err)
		}
		// Python: facet_counts("metadata:k") -> {'(none)': 1, "['x', 'y']": 1, 'x': 1}
		wantK := []artifact.FacetCount{{Value: "(none)", Count: 1}, {Value: "['x', 'y']", Count: 1}, {Value: "x", Count: 1}}
		if !slices.Equal(k, wantK) {
			t.Errorf("%s FacetCounts(metadata:k): got %v, Python gives %v", name, k, wantK)
		}
		d, err := st.FacetCounts(context.Background(), "metadata:d", artifact.SearchParams{})
		if err != nil {
			t.Fatal(err)
		}
		// Python: facet_counts("metadata:d") -> {'(none)': 2, "{'a': 1}": 1}
		wantD := []artifact.FacetCount{{Value: "(none)", Count: 2}, {Value: "{'a': 1}", Count: 1}}
		if !slices.Equal(d, wantD) {
			t.Errorf("%s FacetCounts(metadata:d): got %v, Python gives %v", name, d, wantD)
		}
	}
}

func newTestFS(t *testing.T) *artifact.FS {
	t.Helper()
	st, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}
