package artifact_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Spec §1.11: ArtifactMetadata carries a descriptor with every
// ArtifactDescriptor key (schema "abstractruntime.artifact_descriptor.v1",
// schema_version 1, ids string or null, objects, source_refs an array) and
// access stats with every ArtifactAccessStats key (counts 0, last_* null,
// actions {}); run_id is null for an artifact of no run.
func TestSpecMetadataDescriptorAndAccessKeys(t *testing.T) {
	st := artifact.NewMemory()
	m, err := st.Put(context.Background(), artifact.PutParams{Content: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pyjson.Marshal(m.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, `"run_id": null, "tags": {}, "metadata": {}, "descriptor": {"schema": "abstractruntime.artifact_descriptor.v1", "schema_version": 1, `) {
		t.Errorf("metadata written as %s; want run_id null, empty tags and metadata, then the descriptor", text)
	}
	want := `"session_id": null, "workflow_id": null, "node_id": null, "step_id": null, "effect_id": null, ` +
		`"turn_id": null, "ledger_cursor": null, "parent_run_id": null, "actor_id": null, "producer": {}, ` +
		`"provenance": {}, "generation": {}, "media": {`
	if !strings.Contains(text, want) {
		t.Errorf("descriptor written as %s; want its id keys null and its objects in order: %s", text, want)
	}
	if !strings.Contains(text, `"source_refs": [], "links": {}, "security": {}, "actions": {}}`) {
		t.Errorf("descriptor written as %s; want source_refs [] then links, security, actions {}", text)
	}
	access := `"access": {"access_count": 0, "metadata_access_count": 0, "content_access_count": 0, "preview_count": 0, ` +
		`"download_count": 0, "last_accessed_at": null, "last_action": null, "last_actor_id": null, ` +
		`"last_session_id": null, "last_run_id": null, "actions": {}}}`
	if !strings.HasSuffix(text, access) {
		t.Errorf("metadata written as %s; want it to end with %s", text, access)
	}
}

// Spec §1.11: created_at is "re-set when the same id is stored again".
func TestSpecCreatedAtResetWhenStoredAgain(t *testing.T) {
	st := artifact.NewMemory()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return now })
	ctx := context.Background()
	first, err := st.Put(ctx, artifact.PutParams{Content: []byte("same"), RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	second, err := st.Put(ctx, artifact.PutParams{Content: []byte("same"), RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if second.ArtifactID != first.ArtifactID || first.CreatedAt != "2026-01-01T00:00:00+00:00" || second.CreatedAt != "2026-01-01T01:00:00+00:00" {
		t.Errorf("created_at %q then %q (ids %s, %s); want the second put's time", first.CreatedAt, second.CreatedAt, first.ArtifactID, second.ArtifactID)
	}
}

// Spec §1.11: descriptor ids fall back to the tags session_id, workflow_id,
// node_id, step_id, effect_id, turn_id, ledger_cursor, parent_run_id and
// actor_id (the primary spellings; the alternates are pinned in
// artifacttest), and semantic_kind is taken from the tag artifact_type too.
func TestSpecDescriptorIDsFromPrimaryTagNames(t *testing.T) {
	st := artifact.NewMemory()
	m, err := st.Put(context.Background(), artifact.PutParams{Content: []byte("x"), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"artifact_type": "Report", "session_id": "s", "workflow_id": "wf", "node_id": "n",
			"step_id": "st", "effect_id": "e", "turn_id": "t", "ledger_cursor": "3", "parent_run_id": "p", "actor_id": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	d := m.Descriptor
	got := []string{d.SemanticKind, d.ClassificationSource, d.SessionID, d.WorkflowID, d.NodeID, d.StepID, d.EffectID,
		d.TurnID, d.LedgerCursor, d.ParentRunID, d.ActorID}
	want := []string{"report", "runtime_tags", "s", "wf", "n", "st", "e", "t", "3", "p", "a"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("descriptor kind, source and ids = %q; want %q", got, want)
	}
}
