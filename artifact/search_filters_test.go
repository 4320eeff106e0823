package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// The id filters of a search (run_id, content_type, session_id,
// workflow_id, node_id) are compared stripped, as Python's search strips
// them with str.strip() (which also removes U+001C..U+001F): a padded
// filter finds the artifact its stripped value names, in every store.
func TestSearchIDFiltersAreStripped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, st := range map[string]artifact.Store{"memory": artifact.NewMemory(), "fs": newTestFS(t)} {
		want := mustPut(t, st, artifact.PutParams{Content: []byte("a"), ContentType: "text/plain", RunID: "r1",
			Tags: map[string]string{"session_id": "s1", "workflow_id": "wf1", "node_id": "n1"}})
		mustPut(t, st, artifact.PutParams{Content: []byte("b"), ContentType: "image/png", RunID: "r2",
			Tags: map[string]string{"session_id": "s2", "workflow_id": "wf2", "node_id": "n2"}})
		cases := []struct {
			filter string
			p      artifact.SearchParams
		}{
			{"run_id", artifact.SearchParams{RunID: " r1\x1f"}},
			{"content_type", artifact.SearchParams{ContentType: "\ttext/plain "}},
			{"session_id", artifact.SearchParams{SessionID: " s1 "}},
			{"workflow_id", artifact.SearchParams{WorkflowID: "\x1cwf1\n"}},
			{"node_id", artifact.SearchParams{NodeID: " n1"}},
		}
		for _, c := range cases {
			got, err := st.Search(ctx, c.p)
			if err != nil {
				t.Fatalf("%s: Search(%s): %v", name, c.filter, err)
			}
			if ids := idsOf(got); !slices.Equal(ids, []string{want.ArtifactID}) {
				t.Errorf("%s: Search with a padded %s filter = %v; want only %s (the filter is stripped)", name, c.filter, ids, want.ArtifactID)
			}
		}
	}
}

// FacetValue maps every descriptor field to its own member: a facet on
// turn_id counts turns, not actors.
func TestFacetValueDescriptorFields(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x"), ContentType: "text/plain",
		Tags: map[string]string{"task": "tts", "session_id": "s1", "workflow_id": "wf1", "node_id": "n1",
			"turn_id": "t1", "actor_id": "a1"}})
	cases := []struct{ field, want string }{
		{"semantic_kind", "voice"},
		{"render_kind", "text"},
		{"modality", "voice"},
		{"task", "tts"},
		{"classification_source", "runtime_tags"},
		{"session_id", "s1"},
		{"workflow_id", "wf1"},
		{"node_id", "n1"},
		{"turn_id", "t1"},
		{"actor_id", "a1"},
	}
	for _, c := range cases {
		if got := artifact.FacetValue(m, c.field); got != c.want {
			t.Errorf("FacetValue(%s) = %q, want %q", c.field, got, c.want)
		}
	}
}

// Stats' total_bytes adds the sizes of the matching artifacts, passing
// over a negative size_bytes (a foreign or damaged .meta): the total is
// never lowered by one.
func TestStatsTotalBytesSkipsNegativeSizes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	refs := filepath.Join(dir, "artifacts", "refs")
	if err := os.MkdirAll(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"artifact_id": "neg1", "blob_id": null, "content_type": "text/plain", "size_bytes": -100,
 "created_at": "2026-01-01T00:00:00+00:00", "run_id": "r1", "tags": {}, "metadata": {}, "access": {}}`
	if err := os.WriteFile(filepath.Join(refs, "neg1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openFS(t, dir)
	mustPut(t, st, artifact.PutParams{Content: []byte("12345"), RunID: "r1"})
	s, err := st.Stats(ctx, nil, artifact.SearchParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != 2 || s.TotalBytes != 5 {
		t.Errorf("Stats total/total_bytes = %d/%d; want 2/5 (the size_bytes -100 is not counted)", s.Total, s.TotalBytes)
	}
}

// A negative offset counts from the first artifact, as Python's
// max(0, int(offset)) does: the search must not fail (or panic on a
// negative slice bound) and must return what offset 0 returns.
func TestSearchNegativeOffsetStartsAtTheFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, st := range map[string]artifact.Store{"memory": artifact.NewMemory(), "fs": newTestFS(t)} {
		for _, c := range []string{"a", "b", "c"} {
			mustPut(t, st, artifact.PutParams{Content: []byte(c), RunID: "r1"})
		}
		want, err := st.Search(ctx, artifact.SearchParams{RunID: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Search(ctx, artifact.SearchParams{RunID: "r1", Offset: -2})
		if err != nil || !slices.Equal(idsOf(got), idsOf(want)) {
			t.Errorf("%s: Search(offset -2) = %v, %v; want %v (offset 0)", name, idsOf(got), err, idsOf(want))
		}
	}
}

// Stats reports a tag filter among its filters, under "tags", as Python's
// stats returns the filters it was given: a caller showing what the
// numbers count must see the tag filter that narrowed them.
func TestStatsFiltersIncludeTags(t *testing.T) {
	t.Parallel()
	s, err := artifact.NewMemory().Stats(context.Background(), nil, artifact.SearchParams{
		RunID: "r1", Tags: map[string]string{"kind": "json"}})
	if err != nil {
		t.Fatal(err)
	}
	tags, ok := s.Filters["tags"].(map[string]any)
	if !ok || tags["kind"] != "json" || s.Filters["run_id"] != "r1" {
		t.Errorf("Stats.Filters = %v; want run_id r1 and tags {kind: json}", s.Filters)
	}
}
