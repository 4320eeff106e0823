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
