package artifact_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/artifact/artifacttest"
)

// MediaRefID does not take {"artifact_id": ""} for a ref: an empty id names
// no artifact.
func TestMediaRefIDRefusesEmptyArtifactID(t *testing.T) {
	t.Parallel()
	if id, ok := artifact.MediaRefID(map[string]any{"artifact_id": ""}); ok {
		t.Errorf("MediaRefID({artifact_id: \"\"}) = %q, true; want not a ref", id)
	}
}

// Open does not check the content size of metadata whose size_bytes is 0
// (older metadata may lack it): the content is read as it is.
func TestFSSizeZeroMetadataIsNotDamaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"artifact_id": "old1", "content_type": "text/plain", "created_at": "2024-01-01T00:00:00+00:00"}`
	if err := os.WriteFile(filepath.Join(root, "old1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "old1.bin"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openFS(t, dir)
	_, b, err := st.Get(ctx, "old1")
	if err != nil || string(b) != "hello" {
		t.Fatalf("Get = %q, %v; want hello", b, err)
	}
}

// FS.Stats reports the catalog as its source unless a tag filter is given,
// and a single tag pair is a tag filter (Python scans for any tags).
func TestFSStatsSourceWithOneTag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openFS(t, t.TempDir())
	if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("x"), Tags: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	s, err := st.Stats(ctx, nil, artifact.SearchParams{})
	if err != nil || s.Source != artifact.SourceCatalog {
		t.Errorf("Stats() source = %v, %v; want %s", s, err, artifact.SourceCatalog)
	}
	s, err = st.Stats(ctx, nil, artifact.SearchParams{Tags: map[string]string{"k": "v"}})
	if err != nil || s.Source != artifact.SourceScan || s.Total != 1 {
		t.Errorf("Stats(tag) = %+v, %v; want source %s, total 1", s, err, artifact.SourceScan)
	}
}

// Search reads Order as Python does, str(order).strip().lower(): " ASC "
// is oldest first.
func TestSearchOrderIsCaseAndSpaceInsensitive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	st.SetClock(func() time.Time { n++; return base.Add(time.Duration(n) * time.Second) })
	first := mustPut(t, st, artifact.PutParams{Content: []byte("old")})
	if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Search(ctx, artifact.SearchParams{Order: " ASC "})
	if err != nil || len(got) != 2 || got[0].ArtifactID != first.ArtifactID {
		t.Fatalf("Search(order \" ASC \") = %v, %v; want the oldest first", got, err)
	}
}

// Stats.Filters names each applied filter by its Python keyword, among
// them created_after and created_before.
func TestStatsFiltersUsePythonNames(t *testing.T) {
	t.Parallel()
	s, err := artifact.NewMemory().Stats(context.Background(), nil, artifact.SearchParams{
		CreatedAfter: "2026-01-01T00:00:00+00:00", CreatedBefore: "2026-12-31T00:00:00+00:00"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Filters["created_after"] != "2026-01-01T00:00:00+00:00" || s.Filters["created_before"] != "2026-12-31T00:00:00+00:00" {
		t.Errorf("Stats.Filters = %v; want created_after and created_before", s.Filters)
	}
}

// FacetValue strips the field name, as Python's _artifact_facet_value
// does, and knows the blob_id field.
func TestFacetValueFieldNames(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x"), RunID: "r1"})
	if got := artifact.FacetValue(m, " run_id "); got != "r1" {
		t.Errorf("FacetValue(\" run_id \") = %q, want r1", got)
	}
	if got := artifact.FacetValue(m, "blob_id"); got != m.BlobID || got == "" {
		t.Errorf("FacetValue(blob_id) = %q, want %q", got, m.BlobID)
	}
}

// RecordAccess strips the run id it records, as Python's _str_or_none.
func TestRecordAccessStripsRunID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("x")})
	got, err := st.RecordAccess(ctx, artifact.AccessParams{ID: m.ArtifactID, RunID: " r1 "})
	if err != nil || got.Access.LastRunID != "r1" {
		t.Fatalf("LastRunID = %q, %v; want r1", got.Access.LastRunID, err)
	}
}

// ParseMetadata reads metadata as Python's from_dict does: negative access
// counts become 0 and null tag values are dropped (other values are
// stringified).
func TestParseMetadataLenientFields(t *testing.T) {
	t.Parallel()
	m, err := artifact.ParseMetadata([]byte(`{"artifact_id": "a1", "content_type": "text/plain", "size_bytes": 1,
		"created_at": "2026-01-01T00:00:00+00:00", "tags": {"gone": null, "n": 1},
		"access": {"access_count": -3, "download_count": -1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Access.AccessCount != 0 || m.Access.DownloadCount != 0 {
		t.Errorf("access counts = %d/%d, want 0/0", m.Access.AccessCount, m.Access.DownloadCount)
	}
	if _, ok := m.Tags["gone"]; ok || m.Tags["n"] != "1" || len(m.Tags) != 1 {
		t.Errorf("tags = %v, want {n: 1}", m.Tags)
	}
}

// A task tag alone classifies an artifact by its tags (runtime_tags), as
// in Python's _normalize_descriptor.
func TestTaskTagClassifiesByTags(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x"), Tags: map[string]string{"task": "tts"}})
	if m.Descriptor.ClassificationSource != "runtime_tags" {
		t.Errorf("classification_source = %q, want runtime_tags", m.Descriptor.ClassificationSource)
	}
}

// A declared provenance run_id is kept: the artifact's run id fills it
// only when it is missing.
func TestDeclaredProvenanceRunIDKept(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x"), RunID: "r1",
		Descriptor: map[string]any{"provenance": map[string]any{"run_id": "origin"}}})
	if got := m.Descriptor.Provenance["run_id"]; got != "origin" {
		t.Errorf("provenance run_id = %v, want origin", got)
	}
}

// Declared media members that are null do not erase the facts inspected
// from the content (Python merges only the non-None ones).
func TestNullDeclaredMediaKeepsInspectedFacts(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: artifacttest.TinyPNG(3, 2), ContentType: "image/png",
		Descriptor: map[string]any{"media": map[string]any{"width": nil, "note": "n"}}})
	if w := m.Descriptor.Media["width"]; fmt.Sprint(w) != "3" || m.Descriptor.Media["note"] != "n" {
		t.Errorf("media = %v, want width 3 and note n", m.Descriptor.Media)
	}
}

// A descriptor update without source_refs keeps the stored ones (Python's
// _merge_descriptor_payload ignores an empty list).
func TestDescriptorUpdateKeepsSourceRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("x"),
		Descriptor: map[string]any{"source_refs": []any{map[string]any{"artifact_id": "src"}}}})
	got, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID, Descriptor: map[string]any{"task": "summary"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Descriptor.SourceRefs) != 1 || got.Descriptor.Task != "summary" {
		t.Errorf("after update: source_refs %v, task %q; want the one ref kept and task summary", got.Descriptor.SourceRefs, got.Descriptor.Task)
	}
}

// MaxInlineBytes returns a negative configured threshold as it is (the
// caller disabled offloading), not the environment's or the default.
func TestMaxInlineBytesNegativeKept(t *testing.T) {
	t.Setenv(artifact.EnvMaxInlineBytes, "10")
	if got := artifact.MaxInlineBytes(-1); got != -1 {
		t.Errorf("MaxInlineBytes(-1) = %d, want -1", got)
	}
}

// Offload does not take over an artifact of the same bytes that another
// source stored in the run: its offloaded copy gets an id of its own, and
// the existing artifact keeps its tags.
func TestOffloadOtherSourceGetsOwnID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	text := strings.Repeat("t", 50)
	mine := mustPut(t, st, artifact.PutParams{Content: []byte(text), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"source": "effect"}})
	out := offloadRunOutput(t, st, text)
	if id, ok := artifact.RefID(out); !ok || id == mine.ArtifactID {
		t.Errorf("offloaded ref = %v; want a ref to an artifact other than %s", out, mine.ArtifactID)
	}
	if m, err := st.Metadata(ctx, mine.ArtifactID); err != nil || m.Tags["source"] != "effect" {
		t.Errorf("existing artifact tags = %v, %v; want source effect kept", m, err)
	}
}

// Content types are compared without case when Offload looks for an
// artifact of the same bytes: one stored as "Text/Plain" by the same
// source is reused, not duplicated.
func TestOffloadContentTypeCaseInsensitive(t *testing.T) {
	t.Parallel()
	st := artifact.NewMemory()
	text := strings.Repeat("u", 50)
	prev := mustPut(t, st, artifact.PutParams{Content: []byte(text), ContentType: "Text/Plain", RunID: "r1",
		Tags: map[string]string{"source": artifact.SourceRunOutput}})
	out := offloadRunOutput(t, st, text)
	if id, _ := artifact.RefID(out); id != prev.ArtifactID {
		t.Errorf("offloaded ref = %v; want the existing artifact %s", out, prev.ArtifactID)
	}
}

// Restore replaces only exact refs ({"$artifact": id}); an object that
// carries other members beside "$artifact" is the caller's data and stays.
func TestRestoreLeavesRefLookalikesWithMembers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	m, err := artifact.PutText(ctx, st, "content", artifact.PutParams{})
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"x": map[string]any{artifact.RefKey: m.ArtifactID, "note": "mine"}}
	got, err := artifact.Restore(ctx, st, v, func(*artifact.Metadata) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if x, ok := got.(map[string]any)["x"].(map[string]any); !ok || x["note"] != "mine" {
		t.Errorf("Restore = %v; want the object with its note kept", got)
	}
}

// WAV frames are counted as Python's wave module counts them: the sample
// width of 12-bit samples is 2 bytes.
func TestWAVTwelveBitFrames(t *testing.T) {
	t.Parallel()
	b := artifacttest.TinyWAV(8000, 1, 16, 4) // 8 data bytes
	binary.LittleEndian.PutUint16(b[34:], 12)
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: b, ContentType: "audio/wav"})
	if got := fmt.Sprint(m.Descriptor.Media["frames"]); got != "4" {
		t.Errorf("frames = %s (media %v), want 4", got, m.Descriptor.Media)
	}
}

// Restore leaves the refs whose artifact mine refuses.
func TestRestoreKeepsRefsNotMine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	m, err := artifact.PutText(ctx, st, "content", artifact.PutParams{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := artifact.Restore(ctx, st, []any{artifact.Ref(m.ArtifactID)}, func(*artifact.Metadata) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if !artifact.IsRef(got.([]any)[0]) {
		t.Errorf("Restore = %v; want the ref kept", got)
	}
}

// Search's Limit caps the result at exactly Limit artifacts.
func TestSearchLimitIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	for _, c := range []string{"a", "b"} {
		if _, err := st.Put(ctx, artifact.PutParams{Content: []byte(c)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := st.Search(ctx, artifact.SearchParams{Limit: 1}); err != nil || len(got) != 1 {
		t.Errorf("Search(limit 1) = %d artifacts, %v; want 1", len(got), err)
	}
}

// Content typed audio/wave is inspected as WAV, as Python does.
func TestAudioWaveIsInspected(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: artifacttest.TinyWAV(8000, 1, 16, 4), ContentType: "audio/wave"})
	if got := fmt.Sprint(m.Descriptor.Media["frames"]); got != "4" || m.Descriptor.Media["inspection_source"] != "wave" {
		t.Errorf("media = %v; want frames 4 from the wave inspector", m.Descriptor.Media)
	}
}

// The catalog row of an artifact without a run (or without a session) has
// NULL there, as Python's Optional[str] None writes it, not an empty string.
func TestCatalogRowNullRunID(t *testing.T) {
	dir := t.TempDir()
	st := openFS(t, dir)
	createPythonCatalog(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("no run")})
	row := catalogRows(t, dir)[m.ArtifactID]
	if row == nil || row["run_id"] != nil || row["session_id"] != nil {
		t.Errorf("catalog row = %v; want run_id and session_id NULL", row)
	}
}

// An artifact that has both a refs .meta file and a legacy one stays
// listed when another process removes the legacy file: the refs file
// still holds it.
func TestLegacyRemovalKeepsRefsArtifact(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	legacy := `{"artifact_id": "both1", "content_type": "text/plain", "size_bytes": 2, "created_at": "2024-01-01T00:00:00+00:00"}`
	if err := os.WriteFile(filepath.Join(root, "both1.meta"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "both1.bin"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openFS(t, dir)
	mustPut(t, st, artifact.PutParams{Content: []byte("hi"), ArtifactID: "both1"})
	// Settle the refs directory's time, so that a refresh trusts it.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "refs"), old, old); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, artifact.SearchParams{}); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v; want 1", n, err)
	}
	if err := os.Remove(filepath.Join(root, "both1.meta")); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, artifact.SearchParams{}); err != nil || n != 1 {
		t.Errorf("Count after the legacy .meta went = %d, %v; want 1 (refs/both1.meta remains)", n, err)
	}
}

// A "sound" semantic kind is also the modality when none is given, as for
// voice and music (Python's _normalize_descriptor).
func TestSoundKindIsTheModality(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x"), ContentType: "audio/mpeg",
		Tags: map[string]string{"semantic_kind": "sound"}})
	if m.Descriptor.Modality != "sound" {
		t.Errorf("modality = %q, want sound", m.Descriptor.Modality)
	}
}

// A blob_id with surrounding whitespace in a .meta file names the blob
// once stripped, as Python's blob_id.strip() reads it.
func TestBlobIDIsStrippedOnRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := openFS(t, dir)
	m := mustPut(t, st, artifact.PutParams{Content: []byte("hi"), ArtifactID: "pad1"})
	meta := fmt.Sprintf(`{"artifact_id": "pad1", "blob_id": " %s\n", "content_type": "text/plain", "size_bytes": 2, "created_at": "2024-01-01T00:00:00+00:00"}`, m.BlobID)
	if err := os.WriteFile(filepath.Join(dir, "artifacts", "refs", "pad1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, b, err := st.Get(ctx, "pad1"); err != nil || string(b) != "hi" {
		t.Errorf("Get = %q, %v; want hi", b, err)
	}
}

// offloadRunOutput offloads text as run r1's output, with an inline limit
// of 10 bytes.
func offloadRunOutput(t *testing.T, st artifact.Store, text string) any {
	t.Helper()
	out, err := artifact.Offload(context.Background(), st, text, artifact.OffloadOptions{RunID: "r1", MaxInlineBytes: 10,
		AllowRootReplace: true, BaseTags: map[string]string{"source": artifact.SourceRunOutput}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
