package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

var ledgerTests = []subtest{
	{"Seq", testLedgerSeq},
	{"Cursor", testLedgerCursor},
	{"Count", testLedgerCount},
	{"Delete", testLedgerDelete},
	{"PrivateCopies", testLedgerPrivateCopies},
	{"Validation", testLedgerValidation},
	{"CallerSeqOverwritten", testLedgerCallerSeq},
	{"CommitAfterLedgerDelete", testCommitAfterLedgerDelete},
	{"Listener", testLedgerListener},
}

// seedLedger creates run-1 and gives it five records: two with the
// create, one with a commit, two appended outside a commit.
func seedLedger(t *testing.T, s store.Store) []*durable.StepRecord {
	t.Helper()
	recs := []*durable.StepRecord{
		newRecord("run-1", "a", durable.StepStarted),
		newRecord("run-1", "a", durable.StepCompleted),
		newRecord("run-1", "b", durable.StepStarted),
		newRecord("run-1", "b", durable.StepWaiting),
		newRecord("run-1", "b", durable.StepCompleted),
	}
	r := newRun("run-1", runOpts{})
	create(t, s, r, recs[0], recs[1])
	commit(t, s, r, recs[2])
	if err := s.LedgerAppend(t.Context(), "run-1", recs[3:]); err != nil {
		t.Fatalf("LedgerAppend: %v", err)
	}
	return recs
}

func stepIDs(recs []*durable.StepRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.StepID)
	}
	return out
}

func testLedgerSeq(t *testing.T, s store.Store) {
	recs := seedLedger(t, s)
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Errorf("caller's record %d: Seq = %d, want %d", i, r.Seq, i+1)
		}
	}
	got := ledger(t, s, "run-1")
	if g, w := stepIDs(got), stepIDs(recs); !slices.Equal(g, w) {
		t.Fatalf("ledger order = %v, want %v", g, w)
	}
	for i, r := range got {
		if r.Seq != int64(i+1) {
			t.Errorf("listed record %d: Seq = %d, want %d", i, r.Seq, i+1)
		}
	}
	// Seqs are per run.
	other := newRecord("run-2", "x", durable.StepStarted)
	create(t, s, newRun("run-2", runOpts{}), other)
	if other.Seq != 1 {
		t.Errorf("first record of another run: Seq = %d, want 1", other.Seq)
	}
	if err := s.LedgerAppend(t.Context(), "run-1", nil); err != nil {
		t.Errorf("LedgerAppend of no records: %v", err)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 5 {
		t.Errorf("LedgerCount = %d, want 5", n)
	}
	// Many records in one call (a backend may write them in chunks), by
	// append and by commit.
	var many []*durable.StepRecord
	for i := range 9 {
		many = append(many, newRecord("run-1", fmt.Sprintf("m%d", i), durable.StepCompleted))
	}
	if err := s.LedgerAppend(t.Context(), "run-1", many[:5]); err != nil {
		t.Fatalf("LedgerAppend of 5 records: %v", err)
	}
	commit(t, s, get(t, s, "run-1"), many[5:]...)
	all := append(append([]*durable.StepRecord{}, recs...), many...)
	got = ledger(t, s, "run-1")
	if g, w := stepIDs(got), stepIDs(all); !slices.Equal(g, w) {
		t.Fatalf("ledger order after batches = %v, want %v", g, w)
	}
	for i, r := range got {
		if r.Seq != int64(i+1) || all[i].Seq != int64(i+1) || r.NodeID != all[i].NodeID {
			t.Errorf("record %d after batches: listed Seq %d node %s, caller's Seq %d; want seq %d node %s",
				i, r.Seq, r.NodeID, all[i].Seq, i+1, all[i].NodeID)
		}
	}
}

func testLedgerCursor(t *testing.T, s store.Store) {
	recs := seedLedger(t, s)
	cases := []struct {
		after int64
		limit int
		want  []*durable.StepRecord
	}{
		{0, 0, recs},
		{2, 0, recs[2:]},
		{2, 2, recs[2:4]},
		{0, 1, recs[:1]},
		{4, 10, recs[4:]},
		{5, 0, nil},
		{100, 0, nil},
		{-1, 0, recs},
	}
	for _, c := range cases {
		got, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", After: c.after, Limit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := stepIDs(got), stepIDs(c.want); !slices.Equal(g, w) {
			t.Errorf("LedgerList(after %d, limit %d) = %v, want %v", c.after, c.limit, g, w)
		}
		for _, r := range got {
			if r.Seq <= c.after {
				t.Errorf("LedgerList(after %d) returned Seq %d", c.after, r.Seq)
			}
		}
	}
	// Paging with the last Seq seen reads every record once. The pages are
	// bounded and the cursor must move, so a store that does not set Seq
	// or pages backwards fails here instead of looping until the timeout.
	var seen []string
	var cursor int64
	for pages := 0; ; pages++ {
		if pages > len(recs) {
			t.Fatalf("paging by 2 took more than %d pages (read %v)", len(recs), seen)
		}
		page, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", After: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		seen = append(seen, stepIDs(page)...)
		if next := page[len(page)-1].Seq; next <= cursor {
			t.Fatalf("paging: the page after seq %d ends at seq %d (read %v)", cursor, next, seen)
		} else {
			cursor = next
		}
	}
	if !slices.Equal(seen, stepIDs(recs)) {
		t.Errorf("paged ledger = %v, want %v", seen, stepIDs(recs))
	}
	if got := ledger(t, s, "unknown"); len(got) != 0 {
		t.Errorf("ledger of an unknown run = %d records", len(got))
	}
}

func testLedgerCount(t *testing.T, s store.Store) {
	if n, err := s.LedgerCount(t.Context(), "unknown"); err != nil || n != 0 {
		t.Errorf("LedgerCount(unknown) = %d, %v; want 0", n, err)
	}
	seedLedger(t, s)
	if n, err := s.LedgerCount(t.Context(), "run-1"); err != nil || n != 5 {
		t.Errorf("LedgerCount = %d, %v; want 5", n, err)
	}
}

func testLedgerDelete(t *testing.T, s store.Store) {
	seedLedger(t, s)
	create(t, s, newRun("run-2", runOpts{}), newRecord("run-2", "x", durable.StepStarted))
	n, err := s.LedgerDelete(t.Context(), "run-1")
	if err != nil || n != 5 {
		t.Fatalf("LedgerDelete = %d, %v; want 5", n, err)
	}
	if got := ledger(t, s, "run-1"); len(got) != 0 {
		t.Errorf("ledger after delete has %d records", len(got))
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 0 {
		t.Errorf("LedgerCount after delete = %d", n)
	}
	if n, err := s.LedgerDelete(t.Context(), "run-1"); err != nil || n != 0 {
		t.Errorf("second LedgerDelete = %d, %v; want 0", n, err)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-2"); n != 1 {
		t.Errorf("LedgerDelete touched another run: count %d", n)
	}
	if _, err := s.RunGet(t.Context(), "run-1"); err != nil {
		t.Errorf("LedgerDelete removed the run: %v", err)
	}
	// A new ledger starts again at 1.
	rec := newRecord("run-1", "z", durable.StepStarted)
	if err := s.LedgerAppend(t.Context(), "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	got := ledger(t, s, "run-1")
	if rec.Seq != 1 || len(got) != 1 || got[0].Seq != 1 || got[0].StepID != rec.StepID {
		t.Errorf("append after delete: Seq %d, ledger %v", rec.Seq, stepIDs(got))
	}
}

func testLedgerPrivateCopies(t *testing.T, s store.Store) {
	recs := seedLedger(t, s)
	want := recordJSON(t, recs[0])
	recs[0].Effect.Payload["prompt"] = "MUTATED"
	recs[0].NodeID = "MUTATED"
	got := ledger(t, s, "run-1")
	if g := recordJSON(t, got[0]); g != want {
		t.Fatalf("mutating an appended record changed the ledger:\n got %s\nwant %s", g, want)
	}
	got[0].Effect.Payload["prompt"] = "MUTATED"
	if g := recordJSON(t, ledger(t, s, "run-1")[0]); g != want {
		t.Fatalf("mutating a listed record changed the ledger:\n got %s\nwant %s", g, want)
	}
}

func testLedgerValidation(t *testing.T, s store.Store) {
	err := s.LedgerAppend(t.Context(), "", []*durable.StepRecord{newRecord("", "x", durable.StepStarted)})
	if err == nil {
		t.Errorf("LedgerAppend with an empty run id succeeded")
	}
}
