package jsonfile

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A LedgerList page read the whole rest of the file after its cursor,
// whatever its Limit (an ~8 MB read for one record); it now reads the
// file a chunk at a time and stops with the page.
func TestLedgerListPageReadsAboutItsRecords(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t, t.TempDir())
	pad := strings.Repeat("x", 2000)
	for i := range 40 {
		recs := make([]*durable.StepRecord, 100)
		for j := range recs {
			recs[j] = &durable.StepRecord{RunID: "r", StepID: fmt.Sprint(i, "-", j), NodeID: "n",
				Status: durable.StepCompleted, Result: map[string]any{"pad": pad}}
		}
		if err := s.LedgerAppend(ctx, "r", recs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.LedgerCount(ctx, "r"); err != nil { // ledger index built, file scanned once
		t.Fatal(err)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	got, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r", After: 0, Limit: 1})
	runtime.ReadMemStats(&m1)
	if err != nil || len(got) != 1 || got[0].Seq != 1 {
		t.Fatalf("LedgerList = %v, %v", got, err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 1<<20 {
		t.Errorf("LedgerList(after 0, limit 1) of an ~8 MB ledger allocated %d bytes; want well under 1 MB (a page should cost about its records)", alloc)
	}
}

// Pages read in chunks list exactly what one full read lists, across
// chunk boundaries, a line longer than a chunk, and a torn final line;
// look-ups find early and late records.
func TestLedgerPagesAcrossChunks(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	var recs []*durable.StepRecord
	for i := range 600 {
		pad := strings.Repeat("y", 100+i%300)
		if i == 300 {
			pad = strings.Repeat("z", 3*ledgerChunk) // one line spans chunks
		}
		recs = append(recs, &durable.StepRecord{RunID: "r", StepID: fmt.Sprint("s", i), NodeID: "n",
			Status: durable.StepCompleted, IdempotencyKey: fmt.Sprint("k", i), Result: map[string]any{"pad": pad}})
	}
	if err := s.LedgerAppend(ctx, "r", recs); err != nil {
		t.Fatal(err)
	}
	all, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(all) != len(recs) {
		t.Fatalf("full list: %d records, %v", len(all), err)
	}
	for _, limit := range []int{1, 7, 64, 250} {
		var got []*durable.StepRecord
		for after := int64(0); ; {
			page, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r", After: after, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			after = page[len(page)-1].Seq
		}
		if len(got) != len(all) {
			t.Fatalf("pages of %d: %d records, want %d", limit, len(got), len(all))
		}
		for i := range got {
			if got[i].Seq != all[i].Seq || got[i].StepID != all[i].StepID {
				t.Fatalf("pages of %d: record %d is seq %d %s, want seq %d %s", limit, i, got[i].Seq, got[i].StepID, all[i].Seq, all[i].StepID)
			}
		}
	}
	for _, k := range []string{"k0", "k300", "k599"} {
		if r, err := s.LedgerFindCompleted(ctx, "r", k); err != nil || r == nil || r.IdempotencyKey != k {
			t.Errorf("LedgerFindCompleted(%s) = %v, %v", k, r, err)
		}
	}
}
