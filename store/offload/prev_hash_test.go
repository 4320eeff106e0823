package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// TestCallerRecordGetsTheStoredEmptyPrevHash: a record read with prev_hash
// "" and appended through offload holds, once appended, the prev_hash the
// inner stores wrote: null when a hash-chaining store set the link (its
// record hash covers null), "" as read when none did.
func TestCallerRecordGetsTheStoredEmptyPrevHash(t *testing.T) {
	line := `{"run_id": "r", "step_id": "s1", "node_id": "n", "status": "completed", "effect": null, "result": {"content": "` +
		strings.Repeat("x", 1000) + `"}, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "", "record_hash": null, "signature": null}`
	for _, c := range []struct {
		name  string
		inner func(store.Store) store.Store
		want  string
	}{
		{"chained", func(s store.Store) store.Store { return hashchain.Wrap(s) }, `"prev_hash": null`},
		{"unchained", func(s store.Store) store.Store { return s }, `"prev_hash": ""`},
	} {
		rec, err := durable.UnmarshalRecord([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		inner := memory.New()
		st := offload.Wrap(c.inner(inner), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
		if err := st.LedgerAppend(context.Background(), "r", []*durable.StepRecord{rec}); err != nil {
			t.Fatal(err)
		}
		stored, err := inner.LedgerList(context.Background(), &store.LedgerListParams{RunID: "r"})
		if err != nil || len(stored) != 1 {
			t.Fatalf("%s: stored %d records (%v)", c.name, len(stored), err)
		}
		for who, r := range map[string]*durable.StepRecord{"caller's": rec, "stored": stored[0]} {
			b, err := durable.MarshalRecord(r, pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), c.want) {
				t.Errorf("%s: %s record written %s, want %s", c.name, who, b, c.want)
			}
		}
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
