package artifact_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// A modality tag "code" is the semantic kind, as Python's
// _semantic_kind_from_tags gives it (not the render kind "text").
func TestModalityCodeTagIsTheSemanticKind(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x = 1"), ContentType: "text/plain",
		Tags: map[string]string{"modality": "code"}})
	if m.Descriptor.SemanticKind != "code" {
		t.Errorf("semantic_kind = %q, want code", m.Descriptor.SemanticKind)
	}
}

// A descriptor update enriches the stored descriptor: members it does not
// give (or gives empty) keep their values (Python
// _merge_descriptor_payload ignores empty values).
func TestDescriptorUpdateKeepsMembersItDoesNotGive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := artifact.NewMemory()
	m := mustPut(t, st, artifact.PutParams{Content: []byte("x"),
		Descriptor: map[string]any{"session_id": "s1", "task": "t1"}})
	got, err := st.UpdateMetadata(ctx, artifact.UpdateParams{ID: m.ArtifactID,
		Descriptor: map[string]any{"workflow_id": "w1", "node_id": ""}})
	if err != nil {
		t.Fatal(err)
	}
	d := got.Descriptor
	if d.SessionID != "s1" || d.Task != "t1" || d.WorkflowID != "w1" {
		t.Errorf("session_id/task/workflow_id = %q/%q/%q, want s1/t1/w1", d.SessionID, d.Task, d.WorkflowID)
	}
}

// Lists of exactly the bound (120 items) are kept whole; one more item
// and the rest is counted.
func TestSafeMetadataValueListAtTheBoundIsWhole(t *testing.T) {
	t.Parallel()
	for n, wantLen := range map[int]int{120: 120, 121: 121} {
		in := make([]any, n)
		for i := range in {
			in[i] = i
		}
		got := artifact.SafeMetadataValue(in).([]any)
		if len(got) != wantLen {
			t.Fatalf("%d items: got %d, want %d", n, len(got), wantLen)
		}
		last, isMarker := got[len(got)-1].(map[string]any)
		if wantMarker := n > 120; isMarker != wantMarker || isMarker && last["truncated_items"] != n-120 {
			t.Errorf("%d items: last = %v, want a truncated_items marker: %v", n, got[len(got)-1], wantMarker)
		}
	}
}

// Numbers in .meta files read as Python reads them: a non-zero run_id is
// its text (str(7 or "")), and a size past 2**53 is exact.
func TestParseMetadataNumbersAsPython(t *testing.T) {
	t.Parallel()
	m, err := artifact.ParseMetadata([]byte(`{"artifact_id": "a1", "content_type": "text/plain",
		"size_bytes": 9007199254740993, "run_id": 7, "created_at": "2026-01-01T00:00:00+00:00"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.RunID != "7" {
		t.Errorf("run_id = %q, want \"7\"", m.RunID)
	}
	if m.SizeBytes != 9007199254740993 {
		t.Errorf("size_bytes = %d, want 9007199254740993", m.SizeBytes)
	}
}

// A declared provenance source is kept: the source tag fills it only when
// it is missing (as the run id does).
func TestDeclaredProvenanceSourceKept(t *testing.T) {
	t.Parallel()
	m := mustPut(t, artifact.NewMemory(), artifact.PutParams{Content: []byte("x"), Tags: map[string]string{"source": "tag"},
		Descriptor: map[string]any{"provenance": map[string]any{"source": "origin"}}})
	if got := m.Descriptor.Provenance["source"]; got != "origin" {
		t.Errorf("provenance source = %v, want origin", got)
	}
}

// Content types naming a document render as documents (spec §1.11:
// pdf/document → document), not as binary.
func TestRenderKindOfDocumentTypes(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{"application/pdf", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"} {
		if got := artifact.RenderKind(ct); got != "document" {
			t.Errorf("RenderKind(%q) = %q, want document", ct, got)
		}
	}
}

// A .meta document with an empty artifact_id is refused, as one without.
func TestParseMetadataRefusesEmptyArtifactID(t *testing.T) {
	t.Parallel()
	if m, err := artifact.ParseMetadata([]byte(`{"artifact_id": "", "content_type": "text/plain"}`)); err == nil {
		t.Errorf("ParseMetadata with an empty artifact_id = %+v, want an error", m)
	}
}
