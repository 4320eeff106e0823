package runtime_test

// Regression tests of the JSON-safe memory primitives (MEMORY_NOTE,
// MEMORY_QUERY, MEMORY_TAG, MEMORY_REHYDRATE in
// runtime/builtin_memory*.go): replay, indexes and edge inputs. Each
// test's comment gives the rule it checks.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// memfxRuntime is a runtime over st with an in-memory artifact store and
// the workflows given, on a clock that advances one second per reading.
func memfxRuntime(t *testing.T, st store.Store, arts artifact.Store, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts, Clock: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestNoteKeepsTypedSpanIndex: appendSpan / spanList
// (builtin_memory.go) read vars._runtime.memory_spans with a []any
// assertion. A span index a node (an evidence recorder, spec §1.13: the
// index is written by "memory handlers, evidence recorder") put there as
// a typed Go slice ([]map[string]any, a JSON list the kernel accepts in
// vars and every store reads back as []any) reads as "no spans", and the
// note's append replaces the whole index with its one span: the earlier
// span is lost for good. After a checkpoint and a reload the same list is
// []any and is kept, so what the run remembers depends on where a tick
// fell — the class of bug asList/asObject (vars.go) were added to fix for
// context.messages (memory_typed_strip_test.go).
func TestNoteKeepsTypedSpanIndex(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			rtNS, _ := run.Vars["_runtime"].(map[string]any)
			if rtNS == nil {
				rtNS = map[string]any{}
				run.Vars["_runtime"] = rtNS
			}
			rtNS["memory_spans"] = []map[string]any{{
				"kind": "evidence", "artifact_id": "evidence1", "created_at": "2026-01-01T00:00:00+00:00",
				"from_timestamp": "2026-01-01T00:00:00+00:00", "to_timestamp": "2026-01-01T00:00:00+00:00",
				"message_count": 0, "tool_name": "web_search", "call_id": "c1", "success": true, "query": "q",
			}}
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, ResultKey: "r",
				Payload: map[string]any{"note": "Ada likes tea."}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	rt := memfxRuntime(t, memory.New(), artifact.NewMemory(), wf)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustComplete(t, run)
	var kinds []string
	for _, s := range spansOf(run) {
		kinds = append(kinds, s.(map[string]any)["kind"].(string))
	}
	if len(kinds) != 2 || kinds[0] != "evidence" || kinds[1] != "memory_note" {
		t.Fatalf("memory_spans after a note = kinds %v, want [evidence memory_note]: the node's span was dropped", kinds)
	}
}

// TestNoteKeepsPythonOffloadedSpanIndex: data written by the Python
// runtime "opens here" (README), and docs/compatibility.md ("A run's
// memory span index is never offloaded") records that Python's
// OffloadingRunStore moves a terminal run's vars._runtime.memory_spans
// into an artifact once it outgrows the threshold (the global owner run is
// stored completed), leaving {"$artifact": id} in its place. The Go
// handlers read that ref as "no spans" (spanList) and appendSpan replaces
// it with a one-span list: every note the global owner held is gone from
// its index at the first Go note (and no MEMORY_QUERY finds them). The
// ref names an artifact of the owner run tagged source=run_store_offload,
// which artifact.Restore can read back.
func TestNoteKeepsPythonOffloadedSpanIndex(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	old := []any{
		map[string]any{"kind": "memory_note", "artifact_id": "py_note_1", "created_at": "2025-06-01T10:00:00+00:00",
			"from_timestamp": "2025-06-01T10:00:00+00:00", "to_timestamp": "2025-06-01T10:00:00+00:00",
			"message_count": 0, "note_preview": "the launch codename is PELICAN"},
		map[string]any{"kind": "memory_note", "artifact_id": "py_note_2", "created_at": "2025-06-02T10:00:00+00:00",
			"from_timestamp": "2025-06-02T10:00:00+00:00", "to_timestamp": "2025-06-02T10:00:00+00:00",
			"message_count": 0, "note_preview": "Ada prefers tea"},
	}
	meta, err := artifact.PutJSON(ctx, arts, old, artifact.PutParams{RunID: "global_memory", Tags: map[string]string{
		"source": artifact.SourceRunVars, "path": "vars._runtime.memory_spans", "kind": "json",
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := durable.Time{Time: time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)}
	owner := &durable.RunState{
		RunID: "global_memory", WorkflowID: "__global_memory__", Status: durable.RunCompleted, CurrentNode: "done",
		Vars: map[string]any{
			"context": map[string]any{"task": "", "messages": []any{}}, "scratchpad": map[string]any{},
			"_runtime": map[string]any{"memory_spans": artifact.Ref(meta.ArtifactID)},
			"_temp":    map[string]any{}, "_limits": map[string]any{},
		},
		Output: map[string]any{"messages": []any{}}, CreatedAt: now, UpdatedAt: now,
	}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: owner, Create: true}); err != nil {
		t.Fatal(err)
	}
	f := &memFixture{rt: memfxRuntime(t, st, arts, memWorkflows()...), st: st}
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryNote, map[string]any{"note": "new note", "scope": "global"}))
	mustComplete(t, run)
	got, err := st.RunGet(ctx, "global_memory")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range spansOf(got) {
		ids = append(ids, s.(map[string]any)["artifact_id"].(string))
	}
	if len(ids) != 3 || ids[0] != "py_note_1" || ids[1] != "py_note_2" {
		t.Fatalf("global owner's span index after one Go note = %v, want Python's two spans followed by the new one", ids)
	}
}

// TestRehydratePreviewAsPython: the per-artifact preview of
// MEMORY_REHYDRATE is Python's _preview_inserted
// (memory/active_context.py rehydrate_into_context_from_run): a text
// longer than 360 characters becomes text[:357] + "…". The Go
// rehydratePreview (builtin_memory_rehydrate.go) reuses the note_preview
// truncation instead (347 characters, right-stripped, + "… (truncated)"),
// so a host comparing or parsing previews sees different text.
func TestRehydratePreviewAsPython(t *testing.T) {
	f := memSetup(t, true)
	note := strings.Repeat("abcdefghij", 50) // 500 characters
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": note}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"1"}, "placement": "end"}),
	)
	mustComplete(t, run)
	out, _ := run.Vars["r1"].(map[string]any)
	arts, _ := out["artifacts"].([]any)
	if len(arts) != 1 {
		t.Fatalf("rehydrate result: %v", out)
	}
	got, _ := arts[0].(map[string]any)["preview"].(string)
	full := []rune("[MEMORY NOTE]\n" + note)
	want := string(full[:357]) + "…"
	if got != want {
		t.Fatalf("rehydrate preview =\n%q\nwant Python's text[:357]+\"…\" =\n%q", got, want)
	}
}

// jsonKillStore is the JSON-file store (which appends a commit's records
// before it writes the state file, store/jsonfile/jsonfile.go "Commit
// order") with a kill simulated between the two at the first commit that
// carries a record at picks: the records are on disk, the state file is
// not written.
type jsonKillStore struct {
	*jsonfile.Store
	at     func(*durable.StepRecord) bool
	mu     sync.Mutex
	killed bool
}

// completedOf picks the completed record of an effect of type typ.
func completedOf(typ durable.EffectType) func(*durable.StepRecord) bool {
	return func(r *durable.StepRecord) bool {
		return r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == typ
	}
}

// killTickAndReopen ticks run id on rt, whose store is a jsonKillStore
// over js in dir, checks the tick died at the simulated kill, and opens
// the directory again as a new process would.
func killTickAndReopen(t *testing.T, rt *runtime.Runtime, id string, js *jsonfile.Store, dir string) *jsonfile.Store {
	t.Helper()
	if _, err := rt.Tick(context.Background(), id, runtime.TickOptions{}); !errors.Is(err, errSimulatedKill) {
		t.Fatalf("first tick: %v, want the simulated kill", err)
	}
	if err := js.Close(); err != nil {
		t.Fatal(err)
	}
	js2, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js2.Close() })
	return js2
}

var errSimulatedKill = errors.New("simulated kill between the ledger append and the state write")

func (s *jsonKillStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	hit := false
	if !s.killed && !p.Create {
		for _, r := range p.Records {
			hit = hit || s.at(r)
		}
	}
	if hit {
		s.killed = true
	}
	s.mu.Unlock()
	if hit {
		if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
			return err
		}
		return errSimulatedKill
	}
	return s.Store.RunCommit(ctx, p)
}

// TestNoteSpanSurvivesReplayOnJSONStore: MEMORY_NOTE with scope
// "run" appends its span to the requesting run in place ("appends a
// memory_note span to the owner run", spec §3.8; "Writes to the requesting
// run change req.Run and are persisted with the step", builtin_memory.go).
// The JSON-file store appends a commit's records before it writes the
// state, and promises that "a crash between them leaves records whose
// state was never saved, which the kernel's replay checks handle"
// (store/jsonfile/jsonfile.go). After such a kill the next process's tick
// reuses the recorded result (execute.go: the ledger look-up before each
// effect on a non-atomic store) without running the handler, so the span
// is never appended: the run's result says "Stored memory_note
// span_id=X" while its index has no X, and MEMORY_QUERY never finds the
// note. (The same holds for MEMORY_TAG / MEMORY_REHYDRATE /
// keep_in_context writes into the requesting run.) The handler is safe to
// run again: its artifact id is derived from the idempotency key and the
// span is appended only once.
func TestNoteSpanSurvivesReplayOnJSONStore(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "note", Nodes: map[string]runtime.NodeFunc{
		"note": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, ResultKey: "r0",
				Payload: map[string]any{"note": "The deploy uses blue/green."}}, "query"), nil
		},
		"query": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryQuery, ResultKey: "r1",
				Payload: map[string]any{"query": "blue/green", "return": "meta"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st := &jsonKillStore{Store: js, at: completedOf(durable.EffectMemoryNote)}
	arts := artifact.NewMemory() // the artifact store outlives the process
	rt := memfxRuntime(t, st, arts, wf)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	rt2 := memfxRuntime(t, killTickAndReopen(t, rt, id, js, dir), arts, wf)
	run, err := rt2.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustComplete(t, run)
	noteID, _ := metaOf(t, res(t, run, 0))["span_id"].(string)
	if len(spansOf(run)) != 1 {
		t.Errorf("after the replay the run's memory_spans = %v, want the span of note %s", spansOf(run), noteID)
	}
	if got := spanIDs(t, res(t, run, 1)); len(got) != 1 || got[0] != noteID {
		t.Errorf("MEMORY_QUERY after the replay found %v, want [%s]", got, noteID)
	}
}

// TestRehydrateHugeMaxMessagesIsClamped: with a recall_level,
// MEMORY_REHYDRATE reads max_messages as Python's int(float(raw))
// (core/runtime.py _handle_memory_rehydrate) and clamps a value over the
// level's cap to the cap ("clamped max_messages from … to 200" for
// standard, spec §3.8 table: rehydrate max 200). The Go path
// (builtin_memory_rehydrate.go) converts with int64(f), which for 1e20
// gives math.MinInt64 on amd64 (implementation-defined; this test checks
// the amd64 outcome, arm64 saturates instead): the value reads
// as below 1 and falls back to the default 80 with the warning
// "max_messages must be >=1". The saturating conversion the query path
// got (saturatedInt, "saturate huge ints") was not applied here.
func TestRehydrateHugeMaxMessagesIsClamped(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "one"}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"1"}, "recall_level": "standard", "max_messages": 1e20}),
	)
	mustComplete(t, run)
	out, _ := run.Vars["r1"].(map[string]any)
	eff, _ := out["effort"].(map[string]any)
	applied, _ := eff["applied"].(map[string]any)
	warnings, _ := out["warnings"].([]any)
	if n, _ := runtime.AsInt(applied["max_messages"]); n != 200 || len(warnings) != 1 ||
		!strings.HasPrefix(warnings[0].(string), "recall_level=standard: clamped max_messages from ") {
		t.Fatalf("max_messages=1e20 at recall_level=standard: applied %v, warnings %v; want the cap 200 and a clamp warning, as Python's int(float(1e20)) = 10**20 gives", applied["max_messages"], warnings)
	}
}
