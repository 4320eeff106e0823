package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// TestOffloadedInvalidUTF8ReadsBackLikeInline: a Go string that is not
// valid UTF-8 is stored by every store with U+FFFD for each invalid byte
// (pyjson.AppendString, docs/compatibility.md "a store writes U+FFFD for
// each invalid byte"). Offloaded as a text artifact, it was cleaned with
// strings.ToValidUTF8, which puts one U+FFFD for a whole run of invalid
// bytes: the same value read back (FindCompleted's restore) differed
// depending on whether it was over the threshold. Found by
// FuzzDecoratedRoundTrip.
func TestOffloadedInvalidUTF8ReadsBackLikeInline(t *testing.T) {
	ctx := context.Background()
	val := "a\xff\xfe\xe2\x80" + strings.Repeat("b", 64) // two invalid bytes, then a cut 3-byte sequence
	want, _ := pyjson.Marshal(val, pyjson.Canonical)     // what an inline store writes
	st := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 16})
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "k", Result: map[string]any{"v": val}}
	if err := st.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	got, err := store.FindCompleted(ctx, st, "r", "k")
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	if b, _ := pyjson.Marshal(got.Result.(map[string]any)["v"], pyjson.Canonical); string(b) != string(want) {
		t.Errorf("offloaded value read back as %s, an inline one as %s", b, want)
	}
}
