package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// TestFindCompletedKeepsRefsToAnotherRunsLedgerArtifacts checks the
// promise of Store.restore (store/offload/offload.go): it puts back "the
// refs this decorator made of a result" and "Refs the effect itself
// returned stay"; LedgerFindCompleted's doc: the runtime must write "what
// the effect returned into the vars".
//
// restore expands every ref whose artifact is tagged with a ledger
// offload source, whatever run the artifact belongs to. An effect of run
// B whose result carries a ref to run A's offloaded ledger value (a tool
// returning A's ledger records as stored, a history bundle) is replayed
// with A's whole value in place of the ref it returned. Offloading tags
// each artifact with the record's run (Python _offload_step_record:
// run_id=record.run_id), so the refs this decorator made for run B are
// exactly those whose artifact's run id is B.
func TestFindCompletedKeepsRefsToAnotherRunsLedgerArtifacts(t *testing.T) {
	ctx := context.Background()
	st := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	big := strings.Repeat("Q", 500)
	a := &durable.StepRecord{RunID: "A", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "ka", Result: map[string]any{"content": big}}
	if err := st.LedgerAppend(ctx, "A", []*durable.StepRecord{a}); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Inner().LedgerList(ctx, &store.LedgerListParams{RunID: "A"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("ledger of A: %v, %v", stored, err)
	}
	refA := stored[0].Result.(map[string]any)["content"]
	if !artifact.IsRef(refA) {
		t.Fatalf("run A's content was not offloaded: %.60v", refA)
	}
	// Run B's effect returned run A's stored record: a small result that
	// holds a ref, stored as it is.
	b := &durable.StepRecord{RunID: "B", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "kb", Result: map[string]any{"records": []any{map[string]any{"content": refA}}}}
	if err := st.LedgerAppend(ctx, "B", []*durable.StepRecord{b}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "B", "kb")
	if err != nil || got == nil {
		t.Fatalf("LedgerFindCompleted = %v, %v", got, err)
	}
	content := got.Result.(map[string]any)["records"].([]any)[0].(map[string]any)["content"]
	if id, ok := artifact.RefID(content); !ok || id != refAID(refA) {
		t.Errorf("run B's replayed result holds %.40v… (%T) where its effect returned the ref %v to run A's artifact", content, content, refA)
	}
}

func refAID(v any) string { id, _ := artifact.RefID(v); return id }
