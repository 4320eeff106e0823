package offload_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// artifact.Restore (offload.go) promises that refs it does not own stay
// as they are, "and so does a ref whose artifact is not in st (a dangling
// ref must not block its reader)". A result value that merely looks like a
// ref but whose "$artifact" member is not a valid id (user data: "", a
// path, a sentence) names no artifact at all, yet Store.Metadata refuses it
// with ErrInvalidID, which Restore returns as a failure: the completed
// record can no longer be found, so a replay on a store without atomic
// commits fails instead of reusing the result.
func TestFindCompletedKeepsRefLookalikeWithInvalidID(t *testing.T) {
	ctx := context.Background()
	st := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	result := map[string]any{
		"doc": map[string]any{"$artifact": "see attachment #3"}, // not an id
		"ok":  true,
	}
	rec := &durable.StepRecord{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k1", Result: result}
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r", "k1")
	if err != nil {
		t.Fatalf("LedgerFindCompleted: %v; a ref-shaped value naming no artifact should be left as it is", err)
	}
	if got == nil || !reflect.DeepEqual(got.Result, result) {
		t.Fatalf("LedgerFindCompleted = %+v, want the result as stored", got)
	}
}

// Store.restore's doc (offload.go): "Refs the effect itself returned
// stay." An effect that stores a document as an artifact of its run
// (text/plain, tagged with its file name) and returns both a ref to it
// and its text inline (for the model) has its text offloaded into the
// same content-addressed id: Put overwrites the effect's artifact, tags
// included, with source=ledger_result_offload, so the replay restores
// the effect's own ref into the text, and the artifact has lost its
// "filename" tag. The offloader treats an existing artifact it did not
// make as its own.
func TestFindCompletedKeepsEffectRefWhenItsTextIsAlsoInline(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	text := strings.Repeat("report line\n", 50) // > 100 bytes
	own, err := arts.Put(ctx, artifact.PutParams{Content: []byte(text), ContentType: "text/plain", RunID: "r1",
		Tags: map[string]string{"filename": "report.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 100})
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k",
		Result: map[string]any{"file": artifact.Ref(own.ArtifactID), "content": text}}
	if err := st.RunCommit(ctx, &store.CommitParams{Create: true,
		Run:     &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}},
		Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r1", "k")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v", got, err)
	}
	res, _ := got.Result.(map[string]any)
	if id, ok := artifact.RefID(res["file"]); !ok || id != own.ArtifactID {
		t.Errorf("file = %.60q, want the effect's own ref {\"$artifact\": %q} left as it is", res["file"], own.ArtifactID)
	}
	if m, err := arts.Metadata(ctx, own.ArtifactID); err != nil || m.Tags["filename"] != "report.txt" {
		t.Errorf("the effect's artifact after offloading: tags %v, %v; want its filename tag kept", m.Tags, err)
	}
}
