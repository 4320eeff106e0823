package history_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
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

// tickedJSONFileRun opens a jsonfile store in a fresh directory and runs
// workflowID there, ticking it once: the store, its directory and the
// run's id.
func tickedJSONFileRun(t *testing.T, workflowID string) (*jsonfile.Store, string, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: workflowID})
	return st, dir, id
}

// Bundle cursors are the store's ledger cursors (each record's Seq), the
// numbers a client passes as `after` to follow the ledger from the bundle
// (gateway-api §3.7/§3.9). A record the store skips (JSON that does not
// decode) keeps its number: the records after it, total and cursor_end
// must not drift by one, or resuming after cursor_end would hand the
// client a record the bundle already held.
func TestBundleCursorsAreStoreCursorsAfterSkippedRecord(t *testing.T) {
	ctx := context.Background()
	st, dir, id := tickedJSONFileRun(t, "loop")
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
	st, dir, id := tickedJSONFileRun(t, "job")
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

// A tail export reads only the window (count, then the records after
// count-tail), yet must carry the same records as the tail of the whole
// listing: when undecodable records inside the window are skipped, the
// earlier records that fill it are read too, and cursors stay the
// store's.
func TestTailWindowFilledPastSkippedRecords(t *testing.T) {
	ctx := context.Background()
	st, dir, id := tickedJSONFileRun(t, "loop")
	// Damage records 6, 7, 8 and 10 (of 12): valid JSON, node_id not a string.
	st = reopenEdited(t, st, dir, id, func(raw string) string {
		lines := strings.SplitAfter(raw, "\n")
		for _, i := range []int{5, 6, 7, 9} {
			damaged := strings.Replace(lines[i], `"node_id": "step"`, `"node_id": 5`, 1)
			if damaged == lines[i] {
				t.Fatalf("could not damage line %d: %s", i, lines[i])
			}
			lines[i] = damaged
		}
		return strings.Join(lines, "")
	})
	all, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 {
		t.Fatalf("precondition: 8 of 12 records decode, got %d", len(all))
	}
	for tail := 1; tail <= 10; tail++ {
		b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{LedgerMaxItems: tail})
		if err != nil {
			t.Fatal(err)
		}
		led := ledgerOf(t, b, id)
		want := all[max(0, len(all)-tail):]
		got := cursors(t, led)
		if len(got) != len(want) {
			t.Fatalf("tail %d: cursors %v, want %d records", tail, got, len(want))
		}
		for i, rec := range want {
			if got[i] != rec.Seq {
				t.Errorf("tail %d: cursors %v, item %d want Seq %d", tail, got, i, rec.Seq)
			}
		}
		if total := num(t, led["total"], "total"); total != 12 {
			t.Errorf("tail %d: total %d, want 12", tail, total)
		}
	}
}

// listCountingLedger counts the records LedgerList returns.
type listCountingLedger struct {
	store.LedgerStore
	mu     sync.Mutex
	listed int
}

func (l *listCountingLedger) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	recs, err := l.LedgerStore.LedgerList(ctx, p)
	l.mu.Lock()
	l.listed += len(recs)
	l.mu.Unlock()
	return recs, err
}

// A tail-mode export (the default, spec §6.2 "tail keeps the last
// ledger_max_items records") exists to keep the bundle of a huge ledger
// bounded: without a session section it reads only the window (count,
// then the records after count-window), not the whole ledger to cut it
// in memory. (Python reads the whole file: a resource difference only.)
func TestTailExportReadsOnlyTheWindow(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	at := durable.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	putRunAsIs(t, mem, &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunCompleted, CreatedAt: at, UpdatedAt: at})
	var recs []*durable.StepRecord
	for i := range 500 {
		recs = append(recs, &durable.StepRecord{RunID: "r1", StepID: "s" + string(rune('A'+i%26)), NodeID: "n",
			Status: durable.StepCompleted, StartedAt: at, EndedAt: at})
	}
	if err := mem.LedgerAppend(ctx, "r1", recs); err != nil {
		t.Fatal(err)
	}
	led := &listCountingLedger{LedgerStore: mem}
	b, err := history.Export(ctx, history.Source{Runs: mem, Ledger: led}, "r1", history.Options{LedgerMaxItems: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := cursors(t, ledgerOf(t, b, "r1")); len(got) != 3 || got[0] != 498 {
		t.Fatalf("cursors %v", got)
	}
	if led.listed > 3 {
		t.Errorf("a tail export of 3 records decoded %d ledger records; want only the window", led.listed)
	}
}
