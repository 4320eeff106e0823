package history_test

// Found by a review of package history the day it was written; each test
// failed before its fix and states what the spec or the Python original
// does.

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	rtpkg "github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// putRunAsIs creates r in st as it is (times included).
func putRunAsIs(t *testing.T, st store.RunStore, r *durable.RunState) {
	t.Helper()
	if r.Vars == nil {
		r.Vars = map[string]any{}
	}
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
}

// Python _best_effort_session_turns: `answer, answer_meta =
// _extract_answer_from_run_output(r)`, and only `if not answer` AND the
// ledger is non-empty (`if ledger:`) are both replaced by the ledger's.
// A run whose output carries meta but no answer text, and whose ledger is
// empty (never ticked, or pruned by retention), keeps the output's meta.
// Our answer() replaced the meta with the ledger's nil whatever the
// ledger held.
func TestAnswerMetaKeptWhenLedgerEmpty(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	at := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	putRunAsIs(t, st, &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s",
		CreatedAt: at, UpdatedAt: at, Output: map[string]any{"meta": map[string]any{"model": "m"}}})
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "r1", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	turn := obj(t, turns[0], "turn")
	if turn["answer"] != nil {
		t.Fatalf("answer %v, want null", turn["answer"])
	}
	if got, ok := turn["answer_meta"].(map[string]any); !ok || got["model"] != "m" {
		t.Fatalf("answer_meta %v, want the output's meta {model: m} (Python keeps it when the ledger is empty)", turn["answer_meta"])
	}
}

// docs/compatibility.md: "Session turns created after the exported run are
// cut before the bounded load window, so they cannot crowd out earlier
// turns"; spec §6.2: turns are the session's root runs "created at or
// before the exported run ... last session_turn_limit". The cut was applied
// to the rows of one RunIndex call limited to max(1000, 5*limit) rows,
// newest first: with 1000 later root runs in the session, the exported
// run's own turn (and every earlier one) was never seen and the session
// section was empty.
func TestSessionTurnsNotCrowdedOutByLaterRuns(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, at time.Time) {
		putRunAsIs(t, st, &durable.RunState{RunID: id, WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s",
			CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at), Vars: map[string]any{"task": id}})
	}
	mk("early", t0)
	mk("exported", t0.Add(time.Second))
	for i := range 1000 {
		mk(fmt.Sprintf("later%04d", i), t0.Add(time.Duration(i+2)*time.Second))
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "exported", history.Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	var ids []any
	for _, tr := range turns {
		ids = append(ids, obj(t, tr, "turn")["run_id"])
	}
	if len(ids) != 2 || ids[0] != "early" || ids[1] != "exported" {
		t.Fatalf("session turns %v, want [early exported]: later runs crowded out the earlier turns", ids)
	}
}

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

// countedDoc counts its JSON encodings.
type countedDoc struct{ n *int }

func (d countedDoc) MarshalJSON() ([]byte, error) {
	*d.n++
	return []byte(`{"nodes":[1,2,3]}`), nil
}

// PersistWorkflowSnapshot encoded the snapshot canonically to hash it,
// then artifact.PutJSON encoded it again to store the very same canonical
// bytes (compat doc: the artifact's bytes are the canonical JSON the
// sha256 tag hashes). A VisualFlow document was encoded twice; the bytes
// already made are now stored with artifact Put (content type
// application/json).
func TestSnapshotEncodedOnce(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	at := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	putRunAsIs(t, st, &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunRunning, CreatedAt: at, UpdatedAt: at})
	n := 0
	ref, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{
		RunID: "r1", WorkflowID: "job", Snapshot: map[string]any{"flow": countedDoc{&n}}})
	if err != nil {
		t.Fatal(err)
	}
	_, content, err := arts.Get(ctx, ref["artifact_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"flow":{"nodes":[1,2,3]}}`; string(content) != want || ref["sha256"] != sha(want) {
		t.Fatalf("stored %s sha %v", content, ref["sha256"])
	}
	if n != 1 {
		t.Fatalf("the snapshot was encoded %d times, want once", n)
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
