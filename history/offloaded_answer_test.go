package history_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A session turn's answer is read "from the run output" (spec §6.2), and
// turns.go reads back an output the offloading store moved into an
// artifact (resolveOutput). But it only reads back an output replaced
// whole: the usual shape of a large answer is one member above the
// threshold, which the offloading store replaces by a text ref while the
// output object itself stays inline (it is small once that member is a
// ref). answerFromOutput then finds a ref where the answer string is and
// the turn is exported with answer null. Likewise, when the output is
// replaced whole, the members offloaded inside it first stay refs in the
// decoded document. The stored output is the same logical value as an
// inline one; only its persisted shape differs.
func TestSessionAnswerOffloadedMember(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("A", 300)
	for name, output := range map[string]map[string]any{
		// The answer member is offloaded; the output stays an object.
		"member": {"answer": big},
		// The answer member is offloaded, then the output whole (the
		// other members keep it above the threshold).
		"member_then_root": {"answer": big,
			"k1": strings.Repeat("1", 80), "k2": strings.Repeat("2", 80), "k3": strings.Repeat("3", 80)},
	} {
		t.Run(name, func(t *testing.T) {
			arts := artifact.NewMemory()
			st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 200})
			at := durable.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			run := &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s1",
				Vars: map[string]any{"prompt": "say it"}, Output: output, CreatedAt: at, UpdatedAt: at}
			if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
				t.Fatal(err)
			}
			stored, err := st.RunGet(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if _, inline := stored.Output["answer"].(string); inline {
				t.Fatalf("setup: the stored output's answer is inline; want it offloaded (%v)", stored.Output)
			}
			b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, "r1",
				history.Options{IncludeSession: true, MaxInlineBytes: 200})
			if err != nil {
				t.Fatal(err)
			}
			sess, _ := b["session"].(map[string]any)
			turns, _ := sess["turns"].([]any)
			if len(turns) != 1 {
				t.Fatalf("turns %v", turns)
			}
			turn, _ := turns[0].(map[string]any)
			if got := turn["answer"]; got != big {
				t.Errorf("turn answer = %.60v; want the run's %d-byte answer, which the offloading store moved to an artifact", got, len(big))
			}
		})
	}
}

// The same through the runtime: a workflow completing with a large answer
// on an offloading store. The ledger fallback does not find it either
// (the terminal record's result is offloaded the same way).
func TestSessionAnswerOffloadedByRuntime(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("Z", 300)
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 200})
	reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "say", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": big}), nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "say", SessionID: "s2", Vars: map[string]any{"prompt": "go"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, id,
		history.Options{IncludeSession: true, MaxInlineBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := b["session"].(map[string]any)
	turns, _ := sess["turns"].([]any)
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	turn, _ := turns[0].(map[string]any)
	if got := turn["answer"]; got != big {
		t.Errorf("turn answer = %.60v; want the run's %d-byte answer", got, len(big))
	}
}

// An offloaded run output whose artifact does not decode (a torn or
// hand-edited file, a foreign writer) leaves its ref, as a missing one
// does: the answer falls back to the ledger or null, and the export of
// the intact runs and ledgers goes on. Python never reads output
// artifacts, and its session turns degrade to "no answer" on any error.
func TestSessionAnswerDamagedOffloadedOutput(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("A", 300)
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 200})
	at := durable.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	run := &durable.RunState{RunID: "r1", WorkflowID: "job", Status: durable.RunCompleted, SessionID: "s1",
		Vars: map[string]any{"prompt": "say it"},
		Output: map[string]any{"answer": big,
			"k1": strings.Repeat("1", 80), "k2": strings.Repeat("2", 80), "k3": strings.Repeat("3", 80)},
		CreatedAt: at, UpdatedAt: at}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	stored, err := st.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	id, ok := artifact.RefID(stored.Output)
	if !ok {
		t.Fatalf("setup: want the output offloaded whole, got %v", stored.Output)
	}
	meta, err := arts.Metadata(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Same id and tags, content no longer JSON.
	if _, err := arts.Put(ctx, artifact.PutParams{ArtifactID: id, RunID: meta.RunID, Content: []byte(`{"answer": "torn`),
		ContentType: meta.ContentType, Tags: meta.Tags}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, "r1",
		history.Options{IncludeSession: true, MaxInlineBytes: 200})
	if err != nil {
		t.Fatalf("Export failed because of one damaged output artifact: %v", err)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	if a := obj(t, turns[0], "turn")["answer"]; a != nil {
		t.Errorf("answer = %v, want null (no ledger to fall back to)", a)
	}
}

// readCountingArtifacts counts the content bytes read with Get.
type readCountingArtifacts struct {
	artifact.Store
	mu    sync.Mutex
	bytes int
	gets  int
}

func (s *readCountingArtifacts) Get(ctx context.Context, id string) (*artifact.Metadata, []byte, error) {
	m, b, err := s.Store.Get(ctx, id)
	s.mu.Lock()
	s.gets++
	s.bytes += len(b)
	s.mu.Unlock()
	return m, b, err
}

// exportSessionCountingReads commits a completed run "r1" of workflowID
// in session "s1" with output, through a store that offloads values over
// 1 KiB, and exports it with its session, uncut: the bundle and the
// artifact store counting what the export read.
func exportSessionCountingReads(t *testing.T, workflowID string, output map[string]any) (map[string]any, *readCountingArtifacts) {
	t.Helper()
	ctx := context.Background()
	inner := artifact.NewMemory()
	arts := &readCountingArtifacts{Store: inner}
	st := offload.Wrap(memory.New(), inner, offload.Config{MaxInlineBytes: 1024})
	at := durable.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	run := &durable.RunState{RunID: "r1", WorkflowID: workflowID, Status: durable.RunCompleted, SessionID: "s1",
		Vars: map[string]any{"prompt": "go"}, Output: output, CreatedAt: at, UpdatedAt: at}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, "r1",
		history.Options{IncludeSession: true, MaxInlineBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	return b, arts
}

// Finding a session turn's answer is a bounded read, never an artifact
// walk (Python's _OFFLOADED_ANSWER_RESOLVE_MAX_BYTES, 4 MiB): only the
// members the answer is read from are restored, under one total budget.
// An agent output whose scratchpad holds many offloaded messages (6 MiB
// here) was read back whole for each turn, although its answer is inline.
func TestSessionAnswerReadsOnlyAnswerMembers(t *testing.T) {
	var msgs []any
	for i := range 6 {
		msgs = append(msgs, map[string]any{"role": "tool", "content": strings.Repeat(string(rune('a'+i)), 1<<20)})
	}
	b, arts := exportSessionCountingReads(t, "agent",
		map[string]any{"answer": "done", "scratchpad": map[string]any{"messages": msgs}})
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 || obj(t, turns[0], "turn")["answer"] != "done" {
		t.Fatalf("turns %v", turns)
	}
	if limit := 4 << 20; arts.bytes > limit {
		t.Errorf("finding the answer read %d artifacts, %d bytes; want at most %d bytes (Python: one artifact ≤ 4 MiB, none when the output is not replaced whole)",
			arts.gets, arts.bytes, limit)
	}
}

// The 4 MiB bound is one budget for the whole answer lookup, not one per
// artifact: once the offloaded answer (3 MiB) is read, an offloaded meta
// of over 3 MiB more stays a ref.
func TestSessionAnswerResolveBudgetIsTotal(t *testing.T) {
	answer := strings.Repeat("a", 3<<20)
	// Small members only, so that meta itself is offloaded whole.
	meta := map[string]any{}
	for i := range 3 << 20 / 20 {
		meta[fmt.Sprintf("k%07d", i)] = "vvvvvvvv"
	}
	b, arts := exportSessionCountingReads(t, "job", map[string]any{"answer": answer, "meta": meta})
	turn := obj(t, list(t, obj(t, b["session"], "session")["turns"], "turns")[0], "turn")
	if turn["answer"] != answer {
		t.Errorf("answer = %.40v…, want the offloaded 3 MiB answer", turn["answer"])
	}
	if meta := obj(t, turn["answer_meta"], "answer_meta"); !artifact.IsRef(meta) {
		t.Errorf("answer_meta = %.80v, want the ref left in place (over budget)", meta)
	}
	if limit := 4 << 20; arts.bytes > limit {
		t.Errorf("read %d artifacts, %d bytes; want at most %d bytes in all", arts.gets, arts.bytes, limit)
	}
}
