package history_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// reopenEdited closes st, applies edit to the run's ledger file and opens
// the directory again: a record from another writer, as the store reads
// it.
func reopenEdited(t *testing.T, st *jsonfile.Store, dir, runID string, edit func(string) string) *jsonfile.Store {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger_"+runID+".jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(raw))), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Bundle cursors are the store's ledger cursors (each record's Seq), the
// numbers a client passes as `after` to follow the ledger from the bundle
// (gateway-api §3.7/§3.9). A record the store skips (JSON that does not
// decode) keeps its number: the records after it, total and cursor_end
// must not drift by one, or resuming after cursor_end would hand the
// client a record the bundle already held.
func TestBundleCursorsAreStoreCursorsAfterSkippedRecord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "loop"})
	// The second record is valid JSON whose node_id is not a string.
	st = reopenEdited(t, st, dir, id, func(raw string) string {
		lines := strings.SplitAfter(raw, "\n")
		if len(lines) < 4 {
			t.Fatalf("ledger has %d lines", len(lines))
		}
		damaged := strings.Replace(lines[1], `"node_id": "step"`, `"node_id": 5`, 1)
		if damaged == lines[1] {
			t.Fatalf("could not damage line: %s", lines[1])
		}
		lines[1] = damaged
		return strings.Join(lines, "")
	})
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 3 || recs[1].Seq != 3 {
		t.Fatalf("precondition: the damaged record is skipped and the next one keeps Seq 3 (got %d records)", len(recs))
	}

	for _, mode := range []history.Options{{LedgerMode: history.LedgerFull}, {LedgerMaxItems: 2}} {
		b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, mode)
		if err != nil {
			t.Fatal(err)
		}
		led := ledgerOf(t, b, id)
		window := recs
		if mode.LedgerMaxItems > 0 {
			window = recs[len(recs)-mode.LedgerMaxItems:]
		}
		got := cursors(t, led)
		if len(got) != len(window) {
			t.Fatalf("%+v: %d items, want %d", mode, len(got), len(window))
		}
		for i, rec := range window {
			if got[i] != rec.Seq {
				t.Errorf("%+v: item %d: bundle cursor %d, store cursor (Seq) %d", mode, i, got[i], rec.Seq)
			}
		}
		if start := num(t, led["cursor_start"], "cursor_start"); start != window[0].Seq {
			t.Errorf("%+v: cursor_start = %d, want %d", mode, start, window[0].Seq)
		}
		// total counts in the same numbering (Python: every JSON object
		// of the ledger, the damaged one included).
		count, err := st.LedgerCount(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if total := num(t, led["total"], "total"); total != count {
			t.Errorf("%+v: total = %d, want the store's count %d", mode, total, count)
		}
		// Resuming after the bundle's last cursor gives nothing new.
		end := num(t, led["cursor_end"], "cursor_end")
		more, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id, After: end})
		if err != nil {
			t.Fatal(err)
		}
		if len(more) != 0 {
			t.Errorf("%+v: LedgerList(after=cursor_end=%d) returns %d record(s) the bundle already carried", mode, end, len(more))
		}
	}
}

// The timeline's started_at/ended_at are the record's own texts, as
// Python copies rec["started_at"] and rec["ended_at"] or
// rec["started_at"]: a record from another writer ("…Z", as JavaScript's
// toISOString writes UTC) gets the same times in the timeline as in the
// record carried next to it, not a re-formatted instant.
func TestTimelineKeepsRecordTimeText(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "job"})
	st = reopenEdited(t, st, dir, id, func(raw string) string {
		return strings.ReplaceAll(raw, `+00:00"`, `Z"`)
	})
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := list(t, ledgerOf(t, b, id)["items"], "items")
	tl := list(t, b["timeline"], "timeline")
	if len(items) == 0 || len(tl) != len(items) {
		t.Fatalf("items %d timeline %d", len(items), len(tl))
	}
	for i := range items {
		rec := obj(t, obj(t, items[i], "item")["record"], "record")
		ent := obj(t, tl[i], "timeline entry")
		if s, _ := rec["started_at"].(string); !strings.HasSuffix(s, "Z") {
			t.Fatalf("precondition: record %d started_at %v is not the edited text", i, rec["started_at"])
		}
		if ent["started_at"] != rec["started_at"] {
			t.Errorf("timeline[%d].started_at = %v, record started_at = %v", i, ent["started_at"], rec["started_at"])
		}
		wantEnd := rec["ended_at"]
		if wantEnd == nil || wantEnd == "" {
			wantEnd = rec["started_at"]
		}
		if ent["ended_at"] != wantEnd {
			t.Errorf("timeline[%d].ended_at = %v, want %v", i, ent["ended_at"], wantEnd)
		}
		if ent["duration_ms"] == nil {
			t.Errorf("timeline[%d].duration_ms is null", i)
		}
	}
}
