package jsonfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// fzLedgerFingerprint is one listed record as bytes: its seq and its
// line re-encoded, so two listings can be compared exactly.
func fzLedgerFingerprint(t *testing.T, recs []*durable.StepRecord) []string {
	t.Helper()
	out := make([]string, len(recs))
	for i, r := range recs {
		b, err := durable.MarshalRecord(r, pyjson.Line)
		if err != nil {
			t.Fatalf("a listed record (seq %d) does not encode: %v", r.Seq, err)
		}
		out[i] = fmt.Sprintf("%d %s", r.Seq, b)
	}
	return out
}

func fzListAll(t *testing.T, s *Store, runID string) []*durable.StepRecord {
	t.Helper()
	recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatalf("LedgerList: %v", err)
	}
	return recs
}

// FuzzLedgerFile writes nPrefix valid Python ledger lines followed by
// arbitrary bytes as ledger_r1.jsonl, opens the store and reads it.
// Properties: the valid records before the damage are listed first, at
// seqs 1..n; seqs are strictly increasing and within LedgerCount; paging
// (After/Limit) gives the same records as one listing; a completed key of
// the prefix is found; an append lands after everything, at seq
// LedgerCount+1, without changing what was listed before; and a reopen
// lists exactly the same.
func FuzzLedgerFile(f *testing.F) {
	f.Add(uint8(0), []byte(""))
	f.Add(uint8(1), []byte(`{"run_id": "r1", "step_id": "t", "node_id": "n", "status": "comp`))
	f.Add(uint8(2), []byte(pyLedgerLine("x", "kx", "2026-01-01T09:00:03+00:00")))
	f.Add(uint8(1), []byte("garbage\n\n  \r\n{\"a\": 1}{\"b\": 2}\n"))
	f.Add(uint8(2), []byte(`{"torn`+pyLedgerLine("y", "ky", "2026-01-01T09:00:04+00:00")))
	f.Add(uint8(1), []byte("[1, 2]\nnull\n\"s\"\n{\"status\": \"completed\", \"idempotency_key\": \"k0\"}\n"))
	f.Add(uint8(3), []byte(`{"run_id": "r1", "step_id": "z", "node_id": "n", "status": "completed", "started_at": [1]}`+"\n"))
	f.Add(uint8(1), []byte("\xff\xfe{\"a\": NaN}\n{\"b\": Infinity}"))
	f.Fuzz(func(t *testing.T, nPrefix uint8, tail []byte) {
		n := int(nPrefix % 4)
		var file bytes.Buffer
		for i := range n {
			file.WriteString(pyLedgerLine(fmt.Sprintf("p%d", i), fmt.Sprintf("pk%d", i), fmt.Sprintf("2026-01-01T09:00:0%d+00:00", i)))
		}
		file.Write(tail)
		dir := t.TempDir()
		path := filepath.Join(dir, "ledger_r1.jsonl")
		if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		s := openInternal(t, dir)
		ctx := t.Context()
		all := fzListAll(t, s, "r1")
		if len(all) < n {
			t.Fatalf("listed %d records, want at least the %d valid ones before the damage", len(all), n)
		}
		for i := range n {
			if all[i].StepID != fmt.Sprintf("p%d", i) || all[i].Seq != int64(i+1) {
				t.Fatalf("record %d = %s at seq %d, want p%d at seq %d", i, all[i].StepID, all[i].Seq, i, i+1)
			}
		}
		count, err := s.LedgerCount(ctx, "r1")
		if err != nil {
			t.Fatalf("LedgerCount: %v", err)
		}
		if count < int64(len(all)) {
			t.Fatalf("LedgerCount = %d < %d records listed", count, len(all))
		}
		for i, r := range all {
			if i > 0 && r.Seq <= all[i-1].Seq {
				t.Fatalf("seqs not increasing: %d after %d", r.Seq, all[i-1].Seq)
			}
			if r.Seq < 1 || r.Seq > count {
				t.Fatalf("seq %d outside 1..LedgerCount %d", r.Seq, count)
			}
		}
		want := fzLedgerFingerprint(t, all)
		for _, limit := range []int{1, 2, 3} {
			var paged []*durable.StepRecord
			after := int64(0)
			for range len(all) + 2 {
				page, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1", After: after, Limit: limit})
				if err != nil {
					t.Fatalf("LedgerList page after %d: %v", after, err)
				}
				if len(page) > limit {
					t.Fatalf("page of %d records, limit %d", len(page), limit)
				}
				if len(page) == 0 {
					break
				}
				paged = append(paged, page...)
				after = page[len(page)-1].Seq
			}
			if got := fzLedgerFingerprint(t, paged); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("paging by %d lists\n%q\nwant\n%q", limit, got, want)
			}
		}
		if n > 0 {
			rec, err := s.LedgerFindCompleted(ctx, "r1", "pk0")
			if err != nil || rec == nil || rec.StepID != "p0" || rec.Seq != 1 {
				t.Fatalf("LedgerFindCompleted(pk0) = %+v, %v; want p0 at seq 1", rec, err)
			}
		}
		// Append, then read: the new record is last, the old ones are kept.
		newRec := &durable.StepRecord{RunID: "r1", StepID: "new", NodeID: "n", Status: durable.StepCompleted,
			StartedAt: mustParse(t, "2026-02-01T00:00:00+00:00"), Attempt: 1, IdempotencyKey: "knew", Result: map[string]any{"ok": true}}
		if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{newRec}); err != nil {
			t.Fatalf("LedgerAppend: %v", err)
		}
		if newRec.Seq != count+1 {
			t.Fatalf("appended record got seq %d, want LedgerCount+1 = %d", newRec.Seq, count+1)
		}
		after := fzListAll(t, s, "r1")
		got := fzLedgerFingerprint(t, after)
		if len(got) != len(want)+1 || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
			t.Fatalf("after an append the ledger lists\n%q\nwant the records before\n%q\nplus the new one", got, want)
		}
		if last := after[len(after)-1]; last.StepID != "new" || last.Seq != count+1 {
			t.Fatalf("last record after the append = %s at seq %d, want new at %d", last.StepID, last.Seq, count+1)
		}
		if rec, err := s.LedgerFindCompleted(ctx, "r1", "knew"); err != nil || rec == nil || rec.Seq != count+1 {
			t.Fatalf("LedgerFindCompleted(knew) = %+v, %v; want the appended record", rec, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2 := openInternal(t, dir)
		if again := fzLedgerFingerprint(t, fzListAll(t, s2, "r1")); fmt.Sprint(again) != fmt.Sprint(got) {
			t.Fatalf("after a reopen the ledger lists\n%q\nwant\n%q", again, got)
		}
	})
}

func mustParse(t *testing.T, s string) durable.Time {
	t.Helper()
	tm, err := durable.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
