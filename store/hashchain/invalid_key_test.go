package hashchain_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A record whose result has object keys that are not valid UTF-8 (a Go
// host's value built from raw bytes) must be hashed as stored, so that the
// chain verifies in Go as in Python's verify_ledger_chain. The bug this
// guards against: such a record was hashed over its in-memory text, where
// the keys sort by their raw bytes, but stored with them written as
// U+FFFD, which sorts elsewhere, so the chain did not verify.
func TestInvalidUTF8KeyChainVerifies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := hashchain.Wrap(memory.New())
	start, _ := durable.ParseTime("2026-01-01T00:00:00+00:00")
	rec := &durable.StepRecord{RunID: "run-1", StepID: "s", NodeID: "n1", Status: durable.StepCompleted,
		Result: map[string]any{"k\xff": "latin-1 byte", "k\U0010FFFF": "astral"}, StartedAt: start, Attempt: 1}
	if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	// Two keys written the same ("a\uFFFD") are refused, not hashed and
	// stored with one value lost, and the chain is left as it was.
	clash := &durable.StepRecord{RunID: "run-1", StepID: "s2", NodeID: "n1", Status: durable.StepCompleted,
		Result: map[string]any{"a\xfe": 1, "a\xff": 2}, StartedAt: start, Attempt: 1}
	if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{clash}); err == nil || !strings.Contains(err.Error(), "same key") {
		t.Fatalf("append of a result whose keys clash once repaired: %v; want a refusal", err)
	}
	stored, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK || rep.Count != 1 {
		t.Errorf("the chain just written does not verify: %+v", rep)
	}
}
