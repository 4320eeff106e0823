package offload_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A []byte past the threshold is offloaded as the text an undecorated
// store keeps for it inline (standard base64, the alphabet with '+' and
// '/'), so the ref reads back as the value a store without offloading
// gives. Bytes whose base64 is all letters would not tell the alphabets
// apart; these encode as "++//" repeated.
func TestOffloadedBytesAreTheInlineBase64Text(t *testing.T) {
	ctx := context.Background()
	blob := bytes.Repeat([]byte{0xfb, 0xef, 0xff}, 40) // 160 base64 bytes > limit
	rec := func() *durable.StepRecord {
		return &durable.StepRecord{RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
			Result: map[string]any{"blob": blob}}
	}

	plain := memory.New()
	if err := plain.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec()}); err != nil {
		t.Fatal(err)
	}
	kept, err := plain.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(kept) != 1 {
		t.Fatalf("undecorated store: %v, %v", kept, err)
	}
	inline, ok := kept[0].Result.(map[string]any)["blob"].(string)
	if !ok || !strings.Contains(inline, "+") || !strings.Contains(inline, "/") {
		t.Fatalf("undecorated store keeps the bytes as %#v; want base64 text using '+' and '/'", kept[0].Result)
	}

	b := setup(t)
	if err := b.st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec()}); err != nil {
		t.Fatal(err)
	}
	stored, err := b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	tags := refTags(t, b, stored[0].Result.(map[string]any)["blob"], inline)
	if tags["path"] != "ledger.result.blob" || tags["kind"] != "text" {
		t.Errorf("bytes artifact tags = %v", tags)
	}
}
