package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// The descriptor's kinds are Python's str(x).strip().lower()
// (_semantic_kind_from_tags, ArtifactDescriptor.from_dict, search's
// filters), and tag keys str(k).strip() (_str_dict). The package uses
// strings.ToLower and strings.TrimSpace, which are not those: Python's
// lower() applies the final-sigma rule ("ΟΔΟΣ" → "οδος", Go "οδοσ") and
// lowers "İ" to "i̇" (two code points, Go "i"), and strip() also removes
// U+001C..U+001F. pyval.Lower/pyval.Strip exist for exactly this (the
// snapshot tag filter was fixed the same way). So the .meta files Go
// writes classify such artifacts differently from Python, and Go's
// searches miss what Python wrote.
func TestDescriptorCaseAsPython(t *testing.T) {
	ctx := context.Background()
	st := artifact.NewMemory()

	// Python: _semantic_kind_from_tags → "ΟΔΟΣ".strip().lower() == "οδος".
	m, err := st.Put(ctx, artifact.PutParams{Content: []byte("a"), Tags: map[string]string{"semantic_kind": "ΟΔΟΣ"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Descriptor.SemanticKind != "οδος" {
		t.Errorf("semantic_kind = %q, Python's lower() gives %q", m.Descriptor.SemanticKind, "οδος")
	}

	// Python: modality "İMAGE".lower() == "i̇mage", which is not "image":
	// the semantic kind falls back to the render kind ("binary" for
	// application/octet-stream) and the modality is kept as "i̇mage".
	m, err = st.Put(ctx, artifact.PutParams{Content: []byte("b"), Tags: map[string]string{"modality": "İMAGE"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Descriptor.SemanticKind != "binary" || m.Descriptor.Modality != "i\u0307mage" {
		t.Errorf("semantic_kind %q modality %q; Python: %q and %q", m.Descriptor.SemanticKind, m.Descriptor.Modality, "binary", "i\u0307mage")
	}

	// Python: _str_dict strips the key "kind\x1f" to "kind".
	m, err = st.Put(ctx, artifact.PutParams{Content: []byte("c"), Tags: map[string]string{"kind\x1f": "evidence"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Tags["kind"]; !ok || m.Descriptor.SemanticKind != "evidence" {
		t.Errorf("tags %q semantic_kind %q; Python strips the key to \"kind\" and classifies it \"evidence\"", m.Tags, m.Descriptor.SemanticKind)
	}
}

// The search side: a .meta file Python wrote holds semantic_kind "οδος";
// Python's search(semantic_kind="ΟΔΟΣ") compares "ΟΔΟΣ".strip().lower()
// == "οδος" and finds it, Go's lowerTrim gives "οδοσ" and does not.
func TestSearchKindLowersAsPython(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	refs := filepath.Join(dir, "artifacts", "refs")
	if err := os.MkdirAll(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"artifact_id": "py1", "blob_id": null, "content_type": "text/plain", "size_bytes": 1,
 "created_at": "2026-01-01T00:00:00+00:00", "run_id": null, "tags": {"semantic_kind": "ΟΔΟΣ"}, "metadata": {},
 "descriptor": {"semantic_kind": "οδος", "render_kind": "text", "modality": "text", "classification_source": "runtime_tags"},
 "access": {}}`
	if err := os.WriteFile(filepath.Join(refs, "py1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Search(ctx, artifact.SearchParams{SemanticKind: "ΟΔΟΣ"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("search semantic_kind %q found %d artifacts; Python finds the one whose kind is %q", "ΟΔΟΣ", len(got), "οδος")
	}
}

// Python strips descriptor ids with str.strip() (_str_or_none in
// _normalize_descriptor and ArtifactDescriptor.from_dict, the same in
// ArtifactAccessStats.from_dict/record), and str.strip() treats the
// information separators U+001C..U+001F as whitespace. normalizeDescriptor's
// tag() and descriptorFromJSON must strip them too: a session_id tag
// "s1\x1f" gives Python descriptor session_id "s1", found by
// search(session_id="s1") and faceted as "s1".
func TestDescriptorIDsStripAsPython(t *testing.T) {
	ctx := context.Background()
	for name, st := range map[string]artifact.Store{"memory": artifact.NewMemory(), "fs": newTestFS(t)} {
		m, err := st.Put(ctx, artifact.PutParams{
			Content:     []byte("x"),
			ContentType: "text/plain",
			RunID:       "r1",
			Tags:        map[string]string{"session_id": "s1\x1f", "workflow_id": "\x1cwf"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if m.Descriptor.SessionID != "s1" || m.Descriptor.WorkflowID != "wf" {
			t.Errorf("%s: descriptor session_id/workflow_id = %q/%q; Python _str_or_none gives \"s1\"/\"wf\"",
				name, m.Descriptor.SessionID, m.Descriptor.WorkflowID)
		}
		found, err := st.Search(ctx, artifact.SearchParams{SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 {
			t.Errorf("%s: Search(session_id=s1) found %d artifacts; Python finds the one tagged \"s1\\x1f\"", name, len(found))
		}
		d, err := st.Put(ctx, artifact.PutParams{
			Content:    []byte("y"),
			RunID:      "r1",
			Descriptor: map[string]any{"node_id": "n1\x1e", "classification_source": "producer\x1d"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if d.Descriptor.NodeID != "n1" || d.Descriptor.ClassificationSource != "producer" {
			t.Errorf("%s: declared descriptor node_id/classification_source = %q/%q; Python from_dict strips them to \"n1\"/\"producer\"",
				name, d.Descriptor.NodeID, d.Descriptor.ClassificationSource)
		}
		a, err := st.RecordAccess(ctx, artifact.AccessParams{ID: d.ArtifactID, ActorID: "u1\x1f"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Access.LastActorID != "u1" {
			t.Errorf("%s: access last_actor_id = %q; Python record() stores _str_or_none(actor_id) = \"u1\"", name, a.Access.LastActorID)
		}
	}
}
