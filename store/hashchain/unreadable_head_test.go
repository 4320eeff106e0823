package hashchain_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Python's HashChainedLedgerStore._get_head chains to
// inner.list(run_id)[-1], and SqliteLedgerStore.list skips a row
// json.loads refuses (a torn row). The head was read at the last seq only,
// so when that row was the unreadable one the new record got prev_hash
// null and the listed ledger failed verification forever after.
func TestAppendAfterUnreadableLastRowChainsToLastReadable(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "rt.sqlite3")
	cfg := sqlite.Config{Path: path, Shared: true}
	s, err := sqlite.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: step, NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	}
	if err := hashchain.Wrap(s).LedgerAppend(ctx, "r1", []*durable.StepRecord{mk("s1"), mk("s2")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Another process tore its append (a row json.loads refuses).
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, 3, ?)`, "r1", `{"run_id": "r1", "step_id": "to`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	s, err = sqlite.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	hc := hashchain.Wrap(s)
	rec := mk("s4")
	if err := hc.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	recs, err := hc.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil || len(recs) != 3 {
		t.Fatalf("LedgerList = %d records, %v; want 3", len(recs), err)
	}
	if rec.PrevHash != recs[1].RecordHash {
		t.Errorf("prev_hash of the record appended after a torn last row = %q; want the last readable record's hash %q", rec.PrevHash, recs[1].RecordHash)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Errorf("VerifyLedgerChain over the listed ledger: %+v; want ok", rep)
	}
}

// hidingStore lists a run's ledger without the records whose seq is in
// unreadable, as a store skips rows that do not decode.
type hidingStore struct {
	store.Store
	unreadable map[int64]bool
}

func (h hidingStore) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	all, err := h.Store.LedgerList(ctx, &store.LedgerListParams{RunID: p.RunID, After: p.After})
	if err != nil {
		return nil, err
	}
	out := []*durable.StepRecord{}
	for _, r := range all {
		if !h.unreadable[r.Seq] && (p.Limit <= 0 || len(out) < p.Limit) {
			out = append(out, r)
		}
	}
	return out, nil
}

// The head is the last readable record however many rows after it do not
// decode, and there is none when no row does.
func TestAppendChainsPastManyUnreadableRows(t *testing.T) {
	ctx := t.Context()
	for _, readable := range []int64{0, 1, 3, 9} {
		mem := memory.New()
		var recs []*durable.StepRecord
		for i := range 10 {
			recs = append(recs, &durable.StepRecord{RunID: "r1", StepID: fmt.Sprint("s", i), NodeID: "n",
				Status: durable.StepCompleted, Attempt: 1})
		}
		if err := hashchain.Wrap(mem).LedgerAppend(ctx, "r1", recs); err != nil {
			t.Fatal(err)
		}
		hide := map[int64]bool{}
		for seq := readable + 1; seq <= 10; seq++ {
			hide[seq] = true
		}
		want := ""
		if readable > 0 {
			want = recs[readable-1].RecordHash
		}
		rec := &durable.StepRecord{RunID: "r1", StepID: "next", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
		if err := hashchain.Wrap(hidingStore{mem, hide}).LedgerAppend(ctx, "r1", []*durable.StepRecord{rec}); err != nil {
			t.Fatal(err)
		}
		if rec.PrevHash != want {
			t.Errorf("last readable seq %d: prev_hash %q, want %q", readable, rec.PrevHash, want)
		}
	}
}
