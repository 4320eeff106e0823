package hashchain_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// The two-record vector of the runtime spec §4.6, verified with Python.
func vectorRecords(t *testing.T) []*durable.StepRecord {
	t.Helper()
	mk := func(step, node string, result any) *durable.StepRecord {
		start, _ := durable.ParseTime("2026-01-01T00:00:00+00:00")
		end, _ := durable.ParseTime("2026-01-01T00:00:01+00:00")
		return &durable.StepRecord{RunID: "run-1", StepID: step, NodeID: node, Status: durable.StepCompleted,
			Result: result, StartedAt: start, EndedAt: end, Attempt: 1}
	}
	return []*durable.StepRecord{
		mk("step-1", "n1", map[string]any{"a": json.Number("1"), "f": json.Number("1.0"), "s": "é"}),
		mk("step-2", "n2", map[string]any{"b": json.Number("2")}),
	}
}

func TestChainMatchesPythonVectors(t *testing.T) {
	t.Parallel()
	st := hashchain.Wrap(memory.New())
	recs := vectorRecords(t)
	if err := st.LedgerAppend(context.Background(), "run-1", recs); err != nil {
		t.Fatal(err)
	}
	if recs[0].RecordHash != "cc9743e483c6fca726cb88113c81606fd1dbbe5393ed5348d9a541d8b11e4f42" {
		t.Fatalf("record 1 hash %s", recs[0].RecordHash)
	}
	if recs[1].PrevHash != recs[0].RecordHash ||
		recs[1].RecordHash != "676bd10cf6f705a01ea3b4c8d4f2f9e65a3c93b6af6f1bc3ac05e4e9aa91edca" {
		t.Fatalf("record 2 prev %s hash %s", recs[1].PrevHash, recs[1].RecordHash)
	}
	stored, _ := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: "run-1"})
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK || rep.Count != 2 {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestChainContinuesAcrossWrappers(t *testing.T) {
	t.Parallel()
	inner := memory.New()
	ctx := context.Background()
	recs := vectorRecords(t)
	if err := hashchain.Wrap(inner).LedgerAppend(ctx, "run-1", recs[:1]); err != nil {
		t.Fatal(err)
	}
	// A new wrapper (a restarted process) finds the head in the store.
	if err := hashchain.Wrap(inner).LedgerAppend(ctx, "run-1", recs[1:]); err != nil {
		t.Fatal(err)
	}
	stored, _ := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	t.Parallel()
	st := hashchain.Wrap(memory.New())
	ctx := context.Background()
	if err := st.LedgerAppend(ctx, "run-1", vectorRecords(t)); err != nil {
		t.Fatal(err)
	}
	stored, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	stored[0].Result = map[string]any{"a": json.Number("2")}
	rep := hashchain.VerifyLedgerChain(stored)
	if rep.OK || rep.FirstBadIndex == nil || *rep.FirstBadIndex != 0 || rep.Errors[0].Type != "record_hash_mismatch" {
		t.Fatalf("tampered result not detected: %+v", rep)
	}
	stored, _ = st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	stored[1].PrevHash = "00"
	rep = hashchain.VerifyLedgerChain(stored)
	if rep.OK || rep.Errors[0].Type != "prev_hash_mismatch" || rep.Errors[0].Index != 1 {
		t.Fatalf("broken link not detected: %+v", rep)
	}
	stored[1].RecordHash = ""
	rep = hashchain.VerifyLedgerChain(stored)
	if rep.OK || rep.Errors[len(rep.Errors)-1].Type != "missing_record_hash" {
		t.Fatalf("missing hash not detected: %+v", rep)
	}
}

// TestChainKeepsCallersSignature: the chain leaves a record's signature
// as its caller set it (Python's decorator does), and since the hash
// excludes it, the record hashes as it would without one.
func TestChainKeepsCallersSignature(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := hashchain.Wrap(memory.New())
	recs := vectorRecords(t)
	recs[0].Signature = "sig-by-caller"
	if err := st.LedgerAppend(ctx, "run-1", recs); err != nil {
		t.Fatal(err)
	}
	stored, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("list: %d records, %v", len(stored), err)
	}
	if stored[0].Signature != "sig-by-caller" || stored[1].Signature != "" {
		t.Fatalf("signatures stored %q and %q; want the caller's and none", stored[0].Signature, stored[1].Signature)
	}
	if stored[0].RecordHash != "cc9743e483c6fca726cb88113c81606fd1dbbe5393ed5348d9a541d8b11e4f42" {
		t.Fatalf("a signed record hashes to %s; want the unsigned vector's hash", stored[0].RecordHash)
	}
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
		t.Fatalf("verify: %+v", rep)
	}
}
