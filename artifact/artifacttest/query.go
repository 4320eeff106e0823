package artifacttest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/png"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
)

// TinyPNG returns a w×h PNG image.
func TinyPNG(w, h int) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// TinyWAV returns a PCM WAV file of frames silent frames.
func TinyWAV(rate, channels, bits, frames int) []byte {
	frameSize := channels * bits / 8
	data := frames * frameSize
	b := make([]byte, 44+data)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], uint16(channels))
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*frameSize))
	binary.LittleEndian.PutUint16(b[32:], uint16(frameSize))
	binary.LittleEndian.PutUint16(b[34:], uint16(bits))
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// at is the created_at of the n-th clock reading.
func at(n int) string { return durable.FormatTime(base.Add(time.Duration(n) * time.Second)) }

// fixture stores six artifacts with created_at at(1)..at(6) and returns
// their ids in that order. It skips the test for stores without a clock.
func fixture(t *testing.T, st artifact.Store) []string {
	t.Helper()
	c, ok := st.(Clocked)
	if !ok {
		t.Skip("store has no SetClock")
	}
	c.SetClock(tickClock(base))
	puts := []artifact.PutParams{
		{Content: []byte("1"), ContentType: "text/plain", RunID: "ra", Tags: map[string]string{"kind": "evidence", "session_id": "s1"}},
		{Content: []byte("2"), ContentType: "application/json", RunID: "ra", Tags: map[string]string{"workflow_id": "wf", "node_id": "n1"}},
		{Content: []byte("3"), ContentType: "image/png", RunID: "rb", Tags: map[string]string{"session_id": "s1", "x": "1"}},
		{Content: []byte("4"), ContentType: "text/plain", RunID: "rb", Tags: map[string]string{"x": "1", "y": "2"}},
		{Content: []byte("55"), ContentType: "audio/wav", Tags: map[string]string{"task": "tts", "x": "2"}},
		{Content: []byte("666"), ContentType: "text/plain", RunID: "ra", Tags: map[string]string{"workflow": "wf", "node": "n2"}},
	}
	ids := make([]string, len(puts))
	for i, p := range puts {
		ids[i] = mustPut(t, st, p).ArtifactID
	}
	return ids
}

func idsOf(ms []*artifact.Metadata) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ArtifactID
	}
	return out
}

func pick(ids []string, idx ...int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = ids[j-1]
	}
	return out
}

func testSearch(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	ids := fixture(t, st)
	cases := []struct {
		name string
		p    artifact.SearchParams
		want []int // 1-based fixture positions, in expected order
	}{
		{"All", artifact.SearchParams{}, []int{6, 5, 4, 3, 2, 1}},
		{"Asc", artifact.SearchParams{Order: "asc"}, []int{1, 2, 3, 4, 5, 6}},
		{"RunID", artifact.SearchParams{RunID: "ra"}, []int{6, 2, 1}},
		{"ContentType", artifact.SearchParams{ContentType: "text/plain"}, []int{6, 4, 1}},
		{"TagsAllMatch", artifact.SearchParams{Tags: map[string]string{"x": "1", "y": "2"}}, []int{4}},
		{"TagValue", artifact.SearchParams{Tags: map[string]string{"x": "1"}}, []int{4, 3}},
		// Filter keys as Python's _str_dict takes them: stripped, and a
		// blank one dropped (it filters nothing, as no stored tag has one).
		{"TagKeyStripped", artifact.SearchParams{Tags: map[string]string{" x ": "1"}}, []int{4, 3}},
		{"TagBlankKeyIgnored", artifact.SearchParams{Tags: map[string]string{" ": "x", "y": "2"}}, []int{4}},
		{"TagOnlyBlankKey", artifact.SearchParams{Tags: map[string]string{"": "x"}}, []int{6, 5, 4, 3, 2, 1}},
		{"SemanticKind", artifact.SearchParams{SemanticKind: " EVIDENCE "}, []int{1}},
		{"RenderKind", artifact.SearchParams{RenderKind: "text"}, []int{6, 4, 1}},
		{"Modality", artifact.SearchParams{Modality: "voice"}, []int{5}},
		{"SessionID", artifact.SearchParams{SessionID: "s1"}, []int{3, 1}},
		{"WorkflowID", artifact.SearchParams{WorkflowID: "wf"}, []int{6, 2}},
		{"NodeID", artifact.SearchParams{NodeID: "n2"}, []int{6}},
		{"CreatedRangeInclusive", artifact.SearchParams{CreatedAfter: at(2), CreatedBefore: at(4)}, []int{4, 3, 2}},
		{"OffsetLimit", artifact.SearchParams{Offset: 1, Limit: 2}, []int{5, 4}},
		{"OffsetPastEnd", artifact.SearchParams{Offset: 10}, []int{}},
		{"Combined", artifact.SearchParams{RunID: "ra", RenderKind: "text", Order: "asc"}, []int{1, 6}},
	}
	for _, c := range cases {
		got, err := st.Search(ctx, c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := pick(ids, c.want...); !slices.Equal(idsOf(got), want) {
			t.Errorf("%s: got %v, want %v", c.name, idsOf(got), want)
		}
	}
	all, err := st.ListAll(ctx, 2)
	if err != nil || !slices.Equal(idsOf(all), pick(ids, 6, 5)) {
		t.Errorf("ListAll(2) = %v, %v", idsOf(all), err)
	}
	all, err = st.ListAll(ctx, 0)
	if err != nil || len(all) != 6 {
		t.Errorf("ListAll(0) = %d items, %v", len(all), err)
	}
	byRun, err := st.ListByRun(ctx, "rb")
	if err != nil || !slices.Equal(idsOf(byRun), pick(ids, 4, 3)) {
		t.Errorf("ListByRun = %v, %v", idsOf(byRun), err)
	}
}

func testCountFacetsStats(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	fixture(t, st)
	if n, err := st.Count(ctx, artifact.SearchParams{RunID: "ra", Limit: 1, Offset: 1}); err != nil || n != 3 {
		t.Errorf("Count = %d, %v", n, err)
	}
	if n, err := st.Count(ctx, artifact.SearchParams{Tags: map[string]string{" ": "x"}}); err != nil || n != 6 {
		t.Errorf("Count with a blank tag key = %d, %v; want 6 (the key is dropped)", n, err)
	}
	got, err := st.FacetCounts(ctx, "render_kind", artifact.SearchParams{})
	want := []artifact.FacetCount{fc("text", 3), fc("audio", 1), fc("image", 1), fc("json", 1)}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("FacetCounts(render_kind) = %v, %v", got, err)
	}
	got, _ = st.FacetCounts(ctx, "run_id", artifact.SearchParams{})
	want = []artifact.FacetCount{fc("ra", 3), fc("rb", 2), fc(artifact.FacetNone, 1)}
	if !slices.Equal(got, want) {
		t.Errorf("FacetCounts(run_id) = %v", got)
	}
	got, _ = st.FacetCounts(ctx, "tag:x", artifact.SearchParams{RunID: "rb"})
	want = []artifact.FacetCount{fc("1", 2)}
	if !slices.Equal(got, want) {
		t.Errorf("FacetCounts(tag:x) = %v", got)
	}
	s, err := st.Stats(ctx, []string{"semantic_kind", "content_type"}, artifact.SearchParams{RunID: "ra", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != 3 || s.TotalBytes != 5 || !s.Exact || s.Filters["run_id"] != "ra" || len(s.Filters) != 1 {
		t.Errorf("Stats = %+v", s)
	}
	if len(s.Facets) != 2 || s.Facets[0].Field != "semantic_kind" {
		t.Errorf("Stats facets = %+v", s.Facets)
	}
	if ct := s.Facet("content_type"); !slices.Equal(ct, []artifact.FacetCount{fc("text/plain", 2), fc("application/json", 1)}) {
		t.Errorf("Stats content_type facet = %v", ct)
	}
	if s.Source != artifact.SourceScan && s.Source != artifact.SourceCatalog {
		t.Errorf("Stats source = %q", s.Source)
	}
}

func testAccess(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("a")})
	if _, _, err := st.Get(ctx, m.ArtifactID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Metadata(ctx, m.ArtifactID); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Metadata(ctx, m.ArtifactID)
	if got.Access.AccessCount != 0 || got.Access.LastAccessedAt != "" {
		t.Errorf("reads changed access stats: %+v", got.Access)
	}
	for _, action := range []string{"metadata", "content", "load", "read", "open", "preview", "download", "Share", ""} {
		if _, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, Action: action}); err != nil {
			t.Fatal(err)
		}
	}
	last, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, Action: "preview",
		ActorID: "u1", SessionID: "s1", RunID: "r9", At: "2026-05-06T07:08:09+00:00"})
	if err != nil {
		t.Fatal(err)
	}
	a := last.Access
	if a.AccessCount != 10 || a.MetadataAccessCount != 1 || a.ContentAccessCount != 4 || a.PreviewCount != 2 ||
		a.DownloadCount != 1 || a.Actions["share"] != 1 || a.Actions["access"] != 1 || a.Actions["preview"] != 2 {
		t.Errorf("access counts = %+v", a)
	}
	if a.LastAction != "preview" || a.LastActorID != "u1" || a.LastSessionID != "s1" || a.LastRunID != "r9" ||
		a.LastAccessedAt != "2026-05-06T07:08:09+00:00" {
		t.Errorf("access last = %+v", a)
	}
	stored, _ := st.Metadata(ctx, m.ArtifactID)
	if stored.Access.AccessCount != 10 || stored.Access.Actions["preview"] != 2 {
		t.Errorf("stored access = %+v", stored.Access)
	}
	// Storing the same id again resets the stats (a new metadata record).
	again := mustPut(t, st, artifact.PutParams{Content: []byte("a")})
	if again.Access.AccessCount != 0 {
		t.Errorf("access after re-put = %+v", again.Access)
	}
}

func testDelete(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	a := mustPut(t, st, artifact.PutParams{Content: []byte("shared"), RunID: "r1"})
	b := mustPut(t, st, artifact.PutParams{Content: []byte("shared"), RunID: "r2"})
	ok, err := st.Delete(ctx, a.ArtifactID)
	if err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, _ := st.Exists(ctx, a.ArtifactID); ok {
		t.Error("deleted artifact exists")
	}
	if _, _, err := st.Get(ctx, a.ArtifactID); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Get deleted = %v", err)
	}
	if s, err := artifact.LoadText(ctx, st, b.ArtifactID); err != nil || s != "shared" {
		t.Errorf("sibling sharing the blob: %q, %v", s, err)
	}
	if n, _ := st.Count(ctx, artifact.SearchParams{}); n != 1 {
		t.Errorf("Count after delete = %d", n)
	}
	if ok, err := st.Delete(ctx, a.ArtifactID); ok || err != nil {
		t.Errorf("second Delete = %v, %v", ok, err)
	}
}

func testDeleteByRun(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	for i := range 3 {
		mustPut(t, st, artifact.PutParams{Content: []byte{byte(i)}, RunID: "gone"})
	}
	keep := mustPut(t, st, artifact.PutParams{Content: []byte("k"), RunID: "kept"})
	n, err := st.DeleteByRun(ctx, "gone")
	if err != nil || n != 3 {
		t.Fatalf("DeleteByRun = %d, %v", n, err)
	}
	if l, _ := st.ListByRun(ctx, "gone"); len(l) != 0 {
		t.Errorf("ListByRun after delete = %d", len(l))
	}
	if ok, _ := st.Exists(ctx, keep.ArtifactID); !ok {
		t.Error("other run's artifact deleted")
	}
	if n, _ := st.DeleteByRun(ctx, "gone"); n != 0 {
		t.Errorf("second DeleteByRun = %d", n)
	}
}

func testUpdateMetadata(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("u"), ContentType: "text/plain", RunID: "r",
		Tags: map[string]string{"a": "1", "b": "2"}, Metadata: map[string]any{"m1": "x", "m2": "y"},
		Descriptor: map[string]any{"producer": map[string]any{"p1": "v1"}}})
	got, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID,
		Tags: map[string]string{"b": "3", "c": "4"}, Metadata: map[string]any{"m2": "z"},
		Descriptor: map[string]any{"semantic_kind": "Evidence", "producer": map[string]any{"p2": "v2"}, "session_id": "s9"}})
	if err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(got.Tags, map[string]string{"a": "1", "b": "3", "c": "4"}) {
		t.Errorf("merged tags = %v", got.Tags)
	}
	if got.Metadata["m1"] != "x" || got.Metadata["m2"] != "z" {
		t.Errorf("merged metadata = %v", got.Metadata)
	}
	d := got.Descriptor
	if d.SemanticKind != "evidence" || d.SessionID != "s9" || d.Producer["p1"] != "v1" || d.Producer["p2"] != "v2" ||
		d.RenderKind != "text" || d.Provenance["run_id"] != "r" {
		t.Errorf("merged descriptor = %+v", d)
	}
	if got.CreatedAt != m.CreatedAt || got.BlobID != m.BlobID {
		t.Errorf("update changed identity fields: %+v", got)
	}
	stored, _ := st.Metadata(ctx, m.ArtifactID)
	if stored.Tags["c"] != "4" || stored.Descriptor.SemanticKind != "evidence" {
		t.Errorf("update not persisted: %+v", stored)
	}
	found, _ := st.Search(ctx, artifact.SearchParams{SemanticKind: "evidence", SessionID: "s9"})
	if len(found) != 1 {
		t.Errorf("search after update = %d", len(found))
	}
	got, err = st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID,
		Tags: map[string]string{"only": "1"}, ReplaceTags: true,
		Metadata: map[string]any{}, ReplaceMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(got.Tags, map[string]string{"only": "1"}) || len(got.Metadata) != 0 {
		t.Errorf("replaced = %v %v", got.Tags, got.Metadata)
	}
	got, _ = st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID})
	if !mapsEqual(got.Tags, map[string]string{"only": "1"}) {
		t.Errorf("nil update changed tags: %v", got.Tags)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func fc(value string, count int) artifact.FacetCount {
	return artifact.FacetCount{Value: value, Count: count}
}

func testListByRunExact(t *testing.T, st artifact.Store) {
	ctx := context.Background()
	mustPut(t, st, artifact.PutParams{Content: []byte("with run"), RunID: "r"})
	none := mustPut(t, st, artifact.PutParams{Content: []byte("no run")})
	l, err := st.ListByRun(ctx, "")
	if err != nil || len(l) != 1 || l[0].ArtifactID != none.ArtifactID {
		t.Errorf("ListByRun(\"\") = %v, %v", idsOf(l), err)
	}
	if n, err := st.DeleteByRun(ctx, ""); err != nil || n != 1 {
		t.Errorf("DeleteByRun(\"\") = %d, %v", n, err)
	}
	if n, _ := st.Count(ctx, artifact.SearchParams{}); n != 1 {
		t.Errorf("Count after DeleteByRun(\"\") = %d, want 1", n)
	}
}
