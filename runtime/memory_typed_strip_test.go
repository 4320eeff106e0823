package runtime_test

// Edge cases of TOOL_CALLS, effect handlers, memory and VARS_QUERY: typed
// values and stripped strings. Each test's comment gives the rule it checks.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// typedMessagesRun runs a workflow whose first node puts the conversation
// in vars.context.messages as a typed Go slice ([]map[string]any: a JSON
// list the kernel accepts in vars, which every store reads back as
// []any), and whose second node requests eff. With split, a tick of one
// step (a checkpoint and a reload) comes between the two nodes.
func typedMessagesRun(t *testing.T, eff *durable.Effect, split bool) *durable.RunState {
	t.Helper()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["context"] = map[string]any{"messages": []map[string]any{
				{"role": "system", "content": "You are helpful."},
				{"role": "user", "content": "my name is Ada"},
			}}
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			e := eff.Clone()
			return runtime.Request(e, "c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	arts := artifact.NewMemory()
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Artifacts: arts,
		Clock: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	if split {
		first = 1
	}
	return runToEnd(t, rt, first)
}

// tickToEnd starts "w" on rt and ticks it until it stops, first with a
// budget of first steps when first > 0 (a checkpoint there); it returns
// the run's id.
func tickToEnd(t *testing.T, rt *runtime.Runtime, first int) string {
	t.Helper()
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if first > 0 {
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: first}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	return id
}

// runToEnd starts "w" on rt and ticks it to its end, first with a budget
// of first steps when first > 0 (a checkpoint there), and requires it
// completed.
func runToEnd(t *testing.T, rt *runtime.Runtime, first int) *durable.RunState {
	t.Helper()
	st, err := rt.GetState(context.Background(), tickToEnd(t, rt, first))
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("first tick of %d steps: run %s %q", first, st.Status, st.Error)
	}
	return st
}

func messageContents(run *durable.RunState) []string {
	cx, _ := run.Vars["context"].(map[string]any)
	msgs, _ := cx["messages"].([]any)
	var out []string
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		out = append(out, fmt.Sprint(mm["content"]))
	}
	return out
}

// MEMORY_NOTE with keep_in_context (builtin_memory_note.go keepNote ->
// newContextInserter, builtin_memory_rehydrate.go) reads
// vars.context.messages with a []any assertion. A conversation a node
// stored as a typed Go slice reads as "no messages", and done() writes
// back only the note: the conversation is lost for good. After a
// checkpoint and a reload the same list is []any and is kept, so what the
// run remembers depends on where a tick's step budget fell (the class of
// bug the last commit fixed for SetPath / namespace with typed maps).
func TestKeepInContextKeepsTypedMessages(t *testing.T) {
	eff := &durable.Effect{Type: durable.EffectMemoryNote, ResultKey: "r",
		Payload: map[string]any{"note": "Ada likes tea.", "keep_in_context": true}}
	for _, split := range []bool{true, false} {
		st := typedMessagesRun(t, eff, split)
		got := messageContents(st)
		if len(got) != 3 || got[0] != "You are helpful." || got[1] != "my name is Ada" {
			t.Errorf("split=%v: context.messages after MEMORY_NOTE keep_in_context = %q, want the two messages the node wrote followed by the note", split, got)
		}
	}
}

// The same for MEMORY_REHYDRATE: rehydrating a note into a run whose
// conversation a node wrote as a typed slice replaces the conversation by
// the rehydrated messages.
func TestRehydrateKeepsTypedMessages(t *testing.T) {
	// The note is written (scope run) and rehydrated by one payload each;
	// the typed conversation is written by node "a" before both.
	wf := func(split bool) *durable.RunState {
		t.Helper()
		wf := &runtime.Workflow{ID: "w", Entry: "note", Nodes: map[string]runtime.NodeFunc{
			"note": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, ResultKey: "n",
					Payload: map[string]any{"note": "Ada likes tea."}}, "a"), nil
			},
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				run.Vars["context"] = map[string]any{"messages": []map[string]any{
					{"role": "system", "content": "You are helpful."},
					{"role": "user", "content": "my name is Ada"},
				}}
				return runtime.Next("b"), nil
			},
			"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectMemoryRehydrate, ResultKey: "r",
					Payload: map[string]any{"span_ids": []any{int64(1)}, "placement": "end"}}, "c"), nil
			},
			"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}}
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Artifacts: artifact.NewMemory(),
			Clock: func() time.Time { now = now.Add(time.Second); return now }})
		if err != nil {
			t.Fatal(err)
		}
		first := 0
		if split { // note effect, then node a: a checkpoint before b
			first = 2
		}
		return runToEnd(t, rt, first)
	}
	for _, split := range []bool{true, false} {
		st := wf(split)
		got := messageContents(st)
		r, _ := st.Vars["r"].(map[string]any)
		if len(got) != 3 || got[0] != "You are helpful." || got[1] != "my name is Ada" {
			t.Errorf("split=%v: context.messages after MEMORY_REHYDRATE = %q (result %v), want the two messages the node wrote followed by the note", split, got, r)
		}
	}
}

// VARS_QUERY (builtin_vars.go ResolvePath, pyval.TypeName) walks vars
// with map[string]any / []any assertions. A value a node stored as a typed
// Go container ([]string here) in the same session is "object" and cannot
// be indexed: the query answers success:false "Expected list at
// scratchpad.items but found object", while after a checkpoint and a
// reload (the store gives []any) the same query answers {"type": "list"}
// and the element. Python answers from the list in both cases.
func TestVarsQueryTypedValues(t *testing.T) {
	for _, split := range []bool{true, false} {
		ctx := context.Background()
		wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				run.Vars["scratchpad"] = map[string]any{"items": []string{"x", "y"}}
				return runtime.Next("b"), nil
			},
			"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectVarsQuery, ResultKey: "r",
					Payload: map[string]any{"path": "scratchpad.items[1]"}}, "c"), nil
			},
			"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}}
		f := setup(t, wf)
		first := 0
		if split {
			first = 1
		}
		st, _ := f.rt.GetState(ctx, tickToEnd(t, f.rt, first))
		env, _ := st.Vars["r"].(map[string]any)
		results, _ := env["results"].([]any)
		if len(results) != 1 {
			t.Fatalf("split=%v: result %v", split, st.Vars["r"])
		}
		r := results[0].(map[string]any)
		var out map[string]any
		text, _ := r["output"].(string)
		_ = json.Unmarshal([]byte(text), &out)
		if r["success"] != true || out["value"] != "y" || out["type"] != "str" {
			t.Errorf("split=%v: VARS_QUERY scratchpad.items[1] = success %v output %q error %v; want success and value \"y\"",
				split, r["success"], text, r["error"])
		}
	}
}

// addFlowWarning (toolcalls.go) reads vars._flow_warnings with a []any
// assertion: warnings a node kept there as a typed []string are replaced
// by the TOOL_CALLS warning alone when the effect runs in the same
// session, and kept (with the warning appended) after a checkpoint.
func TestFlowWarningsTypedList(t *testing.T) {
	for _, split := range []bool{true, false} {
		ctx := context.Background()
		wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				run.Vars["_flow_warnings"] = []string{"#WARN: earlier"}
				return runtime.Next("b"), nil
			},
			"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r",
					Payload: map[string]any{"tool_calls": []any{map[string]any{"name": "t", "arguments": map[string]any{}}}}}, "c"), nil
			},
			"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}}
		f := setup(t, wf)
		f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
		}})
		first := 0
		if split {
			first = 1
		}
		st, _ := f.rt.GetState(ctx, tickToEnd(t, f.rt, first))
		w, _ := st.Vars["_flow_warnings"].([]any)
		if len(w) != 2 || w[0] != "#WARN: earlier" {
			t.Errorf("split=%v: vars._flow_warnings = %v, want the node's warning followed by the missing call_id one", split, st.Vars["_flow_warnings"])
		}
	}
}

// The memory and vars handlers trim their text options with
// strings.TrimSpace where Python calls str.strip(), which also strips the
// information separators U+001C..U+001F (pyval.Strip exists for this and
// the rest of the kernel uses it): a scope "global\x1f" is Python's
// "global" but fails here as an unknown scope, and a VARS_QUERY path
// "scratchpad\x1f" is Python's "scratchpad" but a missing key here.
func TestPythonStripInPayloadText(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "fact", "scope": "global\x1f"}),
	)
	if run.Status != durable.RunCompleted {
		t.Errorf("MEMORY_NOTE scope \"global\\x1f\": run %s %q; Python strips the scope to \"global\"", run.Status, run.Error)
	}
	run = f.runSteps(t, runtime.StartParams{Vars: map[string]any{"scratchpad": map[string]any{"k": "v"}}},
		step(durable.EffectVarsQuery, map[string]any{"path": "scratchpad\x1f"}),
	)
	mustComplete(t, run)
	if r := res(t, run, 0); r["success"] != true {
		t.Errorf("VARS_QUERY path \"scratchpad\\x1f\": %v; Python strips the path to \"scratchpad\"", r)
	}
}

// crashAfterNoteStore fails (as a crash would lose it) the first commit
// that carries the COMPLETED record of a MEMORY_NOTE.
type crashAfterNoteStore struct {
	store.Store
	mu      sync.Mutex
	crashed bool
}

func (s *crashAfterNoteStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	hit := false
	if !s.crashed {
		for _, r := range p.Records {
			if r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == durable.EffectMemoryNote {
				hit = true
			}
		}
		s.crashed = hit
	}
	s.mu.Unlock()
	if hit {
		return errors.New("injected: process killed before the step's commit")
	}
	return s.Store.RunCommit(ctx, p)
}

// MEMORY_NOTE's doc: "The artifact id is derived from the owner run and
// the effect's idempotency key, so an attempt repeated after a crash
// (whose owner write already landed) finds its span and does not append
// it twice." The span is not appended twice, but the repeated attempt
// takes a new created_at and stores the note's artifact again with it:
// the span the owner kept says the note was made at t1, its artifact and
// the result the run records (meta.created_at) say t2. A note written
// once per effect key should read the same everywhere.
func TestNoteReplayKeepsOneCreatedAt(t *testing.T) {
	ctx := context.Background()
	cs := &crashAfterNoteStore{Store: memory.New()}
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, ResultKey: "r",
				Payload: map[string]any{"note": "Ada likes tea.", "scope": "global"}}, "c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	arts := artifact.NewMemory()
	rt, err := runtime.New(runtime.Config{Store: cs, Registry: reg, Artifacts: arts,
		Clock: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("the injected crash did not happen")
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("run %s %q", run.Status, run.Error)
	}
	owner, err := rt.GetState(ctx, runtime.GlobalMemoryOwnerID())
	if err != nil {
		t.Fatal(err)
	}
	spans := spansOf(owner)
	if len(spans) != 1 {
		t.Fatalf("global owner spans: %v", spans)
	}
	span := spans[0].(map[string]any)
	env := run.Vars["r"].(map[string]any)
	meta := env["results"].([]any)[0].(map[string]any)["meta"].(map[string]any)
	content, err := artifact.LoadJSON(ctx, arts, span["artifact_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	stored := content.(map[string]any)["created_at"]
	if meta["created_at"] != span["created_at"] || stored != span["created_at"] {
		t.Errorf("one note, three creation times: span %v, artifact %v, result meta %v", span["created_at"], stored, meta["created_at"])
	}
}

// MEMORY_REHYDRATE reads dedup_by as strings.TrimSpace(stringOr(v,
// "message_id")): a blank text ("  ") becomes "" and disables dedup.
// Python reads str(dedup_by or "message_id").strip() or "message_id": a
// blank dedup_by is the default, so rehydrating a note already in context
// inserts nothing. Here it is inserted a second time.
func TestRehydrateBlankDedupByIsDefault(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "Remember the milk.", "keep_in_context": true}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{int64(1)}, "dedup_by": "  "}),
	)
	mustComplete(t, run)
	rh, _ := run.Vars["r1"].(map[string]any)
	if rh["inserted"] != int64(0) || rh["skipped"] != int64(1) {
		t.Errorf("rehydrate with dedup_by \"  \": inserted %v skipped %v (messages %q), want the note skipped as already in context",
			rh["inserted"], rh["skipped"], messageContents(run))
	}
}
