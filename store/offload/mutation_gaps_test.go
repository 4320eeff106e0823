package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// TestFindCompletedRestoresAResultReTaggedByALaterPayload: artifact ids
// are content addressed per run, and Python's offloader (as this one did
// before it salted the id of a second source) stores a later record's
// effect payload holding the same large text as an earlier result under
// the result's id, re-tagging that artifact source=ledger_effect_offload
// (offload.Store.restore says so). The completed record's result must
// still be restored from such a ledger, not handed to the replay as a ref.
func TestFindCompletedRestoresAResultReTaggedByALaterPayload(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	inner := memory.New()
	st := offload.Wrap(inner, arts, offload.Config{MaxInlineBytes: 100})
	text := strings.Repeat("z", 1000)
	// As the ledger and artifacts were left: the result's artifact, last
	// written by the next record's payload offload.
	id := artifact.ComputeID("r1", []byte(text))
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte(text), ContentType: "text/plain", RunID: "r1", ArtifactID: id,
		Tags: map[string]string{"source": offload.SourceLedgerEffect, "path": "ledger.effect.payload.prompt", "kind": "text"}}); err != nil {
		t.Fatal(err)
	}
	done := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepCompleted, IdempotencyKey: "k",
		Result: map[string]any{"content": artifact.Ref(id)}}
	next := &durable.StepRecord{RunID: "r1", StepID: "s2", NodeID: "b", Status: durable.StepStarted,
		Effect: &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": artifact.Ref(id)}, ResultKey: "x"}}
	if err := inner.RunCommit(ctx, &store.CommitParams{Create: true,
		Run:     &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}},
		Records: []*durable.StepRecord{done, next}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LedgerFindCompleted(ctx, "r1", "k")
	if err != nil || got == nil {
		t.Fatalf("find completed: %v, %v", got, err)
	}
	if c := got.Result.(map[string]any)["content"]; c != text {
		t.Fatalf("restored result content = %v; want the %d-byte text", c, len(text))
	}
}

// TestCallerRecordsGetTheChainHashes: offload copies back to the
// caller's records what the inner stores set on the copies they stored
// (copySeq: the seq and the hashes a hash-chaining store computed), on
// both write paths.
func TestCallerRecordsGetTheChainHashes(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	st := offload.Wrap(hashchain.Wrap(inner), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r", StepID: step, NodeID: "n", Status: durable.StepCompleted,
			Result: map[string]any{"content": strings.Repeat(step, 1000)}}
	}
	first := rec("a")
	if err := st.RunCommit(ctx, &store.CommitParams{Create: true,
		Run:     &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}},
		Records: []*durable.StepRecord{first}}); err != nil {
		t.Fatal(err)
	}
	second := rec("b")
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{second}); err != nil {
		t.Fatal(err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored %d records (%v)", len(stored), err)
	}
	for i, r := range []*durable.StepRecord{first, second} {
		if r.RecordHash == "" || r.RecordHash != stored[i].RecordHash || r.PrevHash != stored[i].PrevHash {
			t.Errorf("caller's record %d: prev %q hash %q; stored prev %q hash %q", i, r.PrevHash, r.RecordHash,
				stored[i].PrevHash, stored[i].RecordHash)
		}
	}
}

// TestMemorySpanEntriesStayInline: the memory span index of a terminal
// run, the list and each of its entries, is never offloaded (a note
// appends to the list it reads back: a ref in place of an entry would be
// read as no span).
func TestMemorySpanEntriesStayInline(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	st := offload.Wrap(inner, artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	span := map[string]any{"artifact_id": "a1", "summary": strings.Repeat("s", 1000)}
	run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunCompleted,
		Vars: map[string]any{"_runtime": map[string]any{"memory_spans": []any{span}}}}
	if err := st.RunCommit(ctx, &store.CommitParams{Create: true, Run: run}); err != nil {
		t.Fatal(err)
	}
	got, err := inner.RunGet(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	spans, _ := got.Vars["_runtime"].(map[string]any)["memory_spans"].([]any)
	if len(spans) != 1 || artifact.IsRef(spans[0]) {
		t.Fatalf("stored memory_spans = %v; want the one span inline", spans)
	}
	if s, _ := spans[0].(map[string]any); s["artifact_id"] != "a1" || s["summary"] != span["summary"] {
		t.Fatalf("stored span = %v; want it as committed", spans[0])
	}
}
