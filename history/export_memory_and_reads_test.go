package history_test

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	rtpkg "github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// cloningLedger returns fresh decoded copies of the records, as a store
// reading from disk does, and remembers weak pointers to them.
type cloningLedger struct {
	*memory.Store
	weak   map[string][]weak.Pointer[durable.StepRecord]
	onList func(runID string)
}

func (s *cloningLedger) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.onList != nil {
		s.onList(p.RunID)
	}
	recs, err := s.Store.LedgerList(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]*durable.StepRecord, len(recs))
	for i, r := range recs {
		b, err := durable.MarshalRecord(r, pyjson.Line)
		if err != nil {
			return nil, err
		}
		if out[i], err = durable.UnmarshalRecord(b); err != nil {
			return nil, err
		}
		s.weak[p.RunID] = append(s.weak[p.RunID], weak.Make(out[i]))
	}
	return out, nil
}

// Huge ledgers: a tail-mode export without a session needs only each
// run's window, but exporter.ledgers kept every record of every run of
// the tree (up to 5000 runs) referenced until the export ended, so the
// peak memory was the sum of all full ledgers instead of one ledger at a
// time (Python reads each ledger into a local and drops it; it caches
// ledgers only inside the session section). Here the parent's records were
// still reachable while the child's ledger is being read.
func TestExportDoesNotRetainEarlierLedgers(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	rt := newRuntime(t, mem, nil, newClock())
	parent := startTick(t, rt, rtpkg.StartParams{WorkflowID: "parent"})
	kids := children(t, mem, parent)
	if len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	// A tail export reads only the window now; a full one reads the
	// whole ledger: neither keeps the parent's records.
	for _, opts := range []history.Options{{LedgerMaxItems: 1}, {LedgerMode: history.LedgerFull}} {
		led := &cloningLedger{Store: mem, weak: map[string][]weak.Pointer[durable.StepRecord]{}}
		alive := -1
		led.onList = func(runID string) {
			if runID != kids[0] {
				return
			}
			runtime.GC()
			runtime.GC()
			alive = 0
			for _, w := range led.weak[parent] {
				if w.Value() != nil {
					alive++
				}
			}
		}
		if _, err := history.Export(ctx, history.Source{Runs: mem, Ledger: led}, parent, opts); err != nil {
			t.Fatal(err)
		}
		if n := len(led.weak[parent]); n == 0 || opts.LedgerMode == history.LedgerFull && n < 2 {
			t.Fatalf("%+v: the parent has %d records read", opts, n)
		}
		if alive != 0 {
			t.Fatalf("%+v: %d of the parent's %d records are still referenced while the child's ledger is read", opts, alive, len(led.weak[parent]))
		}
	}
}

// With IncludeSession, only the exported tree's ledgers are kept (a turn
// usually reads them again); every other turn's records are read for
// that turn (its answer and stats) and dropped, so an export holds one
// turn tree at a time, not the whole session's ledgers (up to 200 turns
// of up to 5000 runs). Here the first turn's records must be unreachable
// while the second turn's ledger is read.
func TestSessionDoesNotRetainEarlierTurnLedgers(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, id := range []string{"t1", "t2", "t3"} {
		at := durable.NewTime(t0.Add(time.Duration(i) * time.Minute))
		putRunAsIs(t, mem, &durable.RunState{RunID: id, WorkflowID: "chat", Status: durable.RunCompleted, SessionID: "s",
			Vars:   map[string]any{"context": messages(user("q " + id))},
			Output: map[string]any{"answer": "a " + id}, CreatedAt: at, UpdatedAt: at})
		var recs []*durable.StepRecord
		for j := range 4 {
			recs = append(recs, &durable.StepRecord{RunID: id, StepID: id + string(rune('a'+j)), NodeID: "n",
				Status: durable.StepCompleted, StartedAt: at, EndedAt: at})
		}
		if err := mem.LedgerAppend(ctx, id, recs); err != nil {
			t.Fatal(err)
		}
	}
	led := &cloningLedger{Store: mem, weak: map[string][]weak.Pointer[durable.StepRecord]{}}
	alive := -1
	led.onList = func(runID string) {
		if runID != "t2" {
			return
		}
		runtime.GC()
		runtime.GC()
		alive = 0
		for _, w := range led.weak["t1"] {
			if w.Value() != nil {
				alive++
			}
		}
	}
	b, err := history.Export(ctx, history.Source{Runs: mem, Ledger: led}, "t3", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if turns := list(t, obj(t, b["session"], "session")["turns"], "turns"); len(turns) != 3 {
		t.Fatalf("turns %v", turns)
	}
	if n := len(led.weak["t1"]); n != 4 {
		t.Fatalf("turn t1 has %d records read", n)
	}
	if alive != 0 {
		t.Errorf("%d of turn t1's %d records are still referenced while turn t2's ledger is read", alive, len(led.weak["t1"]))
	}
}

// countingRuns counts RunListChildren calls per parent.
type countingRuns struct {
	*memory.Store
	children map[string]int
}

func (s *countingRuns) RunListChildren(ctx context.Context, id string, st durable.RunStatus) ([]*durable.RunState, error) {
	s.children[id]++
	return s.Store.RunListChildren(ctx, id, st)
}

// With IncludeSession the exported run is usually one of its session's
// turns: the turn discovered the same subtree again, listing the children
// (each a full RunState load) of every run of the tree a second time; on
// a wide tree (up to 5000 runs) that doubled the export's run reads. The
// subtree found for the "ledgers" section is now reused.
func TestSessionReusesExportedSubtree(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	rt := newRuntime(t, mem, nil, newClock())
	chat := startTick(t, rt, rtpkg.StartParams{WorkflowID: "chat", SessionID: "s",
		Vars: map[string]any{"context": messages(user("q"))}})
	cr := &countingRuns{Store: mem, children: map[string]int{}}
	if _, err := history.Export(ctx, history.Source{Runs: cr, Ledger: mem}, chat, history.Options{IncludeSession: true}); err != nil {
		t.Fatal(err)
	}
	for id, n := range cr.children {
		if n != 1 {
			t.Errorf("children of run %s listed %d times (root %s)", id, n, chat)
		}
	}
}
