package runtime_test

// Ours against the Python kernel: memory primitives with an artifact
// store, EMIT_EVENT to several listeners in another session, async
// subworkflows, replay. Each test encodes what the Python kernel wrote
// for the same workflow. The values came from scripts run outside
// the repository with the Python kernel's in-memory run, ledger and
// artifact stores; its memory helpers (recall levels, span listing and
// resolution) were taken from the public AbstractRuntime repository, whose
// every stored version lists spans newest first. The warnings, effort and
// meta shapes come from the kernel's own code.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

type memFix struct {
	rt   *runtime.Runtime
	arts *artifact.Memory
	mu   sync.Mutex
	now  time.Time
}

// clock advances 1 ms per reading, as the Python scripts' patched
// utc_now_iso does, so spans get distinct created_at values.
func (f *memFix) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(time.Millisecond)
	return f.now
}

// stepsWorkflow runs the effects listed in vars.steps ({type, payload}) one
// after another, writing the result of step i at vars.r<i> (the Python
// scripts' steps_wf).
func stepsWorkflow(id string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "step", Nodes: map[string]runtime.NodeFunc{
		"step": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps, _ := run.Vars["steps"].([]any)
			i, _ := runtime.AsInt(run.Vars["i"])
			if int(i) >= len(steps) {
				return runtime.Complete(map[string]any{"done": true}), nil
			}
			run.Vars["i"] = int64(i + 1)
			s := steps[i].(map[string]any)
			payload, _ := pyjson.Clone(s["payload"]).(map[string]any)
			return runtime.Request(&durable.Effect{
				Type: durable.EffectType(s["type"].(string)), Payload: payload, ResultKey: fmt.Sprintf("r%d", i),
			}, "step"), nil
		},
	}}
}

func newMemFix(t *testing.T, wfs ...*runtime.Workflow) *memFix {
	t.Helper()
	f := &memFix{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	f.arts = artifact.NewMemory()
	f.arts.SetClock(f.clock)
	f.rt, err = runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Artifacts: f.arts, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// runStepList runs the steps workflow to its end and returns its state.
func runStepList(t *testing.T, steps ...any) *durable.RunState {
	t.Helper()
	f := newMemFix(t, stepsWorkflow("mem"))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"steps": steps}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("steps run %s: %s", st.Status, st.Error)
	}
	return st
}

func stepSpec(typ string, payload string) any {
	// Decoded as the runtime decodes JSON (Python's json.loads): 1 is an
	// int and 1.0 a float, which span ids tell apart.
	p, err := pyjson.DecodeObject([]byte(payload))
	if err != nil {
		panic(err)
	}
	return map[string]any{"type": typ, "payload": p}
}

// noteSteps are two MEMORY_NOTEs, "first" then "second".
func noteSteps() []any {
	return []any{stepSpec("memory_note", `{"note": "first"}`), stepSpec("memory_note", `{"note": "second"}`)}
}

// resultAt is results[0] of the tool envelope stored at vars[key].
func resultAt(t *testing.T, st *durable.RunState, key string) map[string]any {
	t.Helper()
	env, _ := st.Vars[key].(map[string]any)
	res, _ := env["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("vars.%s = %v", key, st.Vars[key])
	}
	return res[0].(map[string]any)
}

func spanIDAt(t *testing.T, st *durable.RunState, key string) string {
	t.Helper()
	return resultAt(t, st, key)["meta"].(map[string]any)["span_id"].(string)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// ---------------------------------------------------------------------------
// 1. MEMORY_QUERY recall_level warnings: wording, the budgets that are
// clamped, and the "[recall warnings]" block of the rendered output.
//
// Python (py_lits.py "urgent"): after two notes, MEMORY_QUERY
// {"recall_level": "urgent", "limit_spans": 9, "deep": true, "query": "zzz",
// "return": "both"} completes with results[0] =
//
//	{"meta": {"effort": {"applied": {"connected": false, "deep": false,
//	  "deep_limit_messages_per_span": 0, "deep_limit_spans": 0,
//	  "limit_spans": 3, "max_messages": 30, "neighbor_hops": 0},
//	  "recall_level": "urgent"}, "matches": [], "span_ids": [],
//	  "warnings": [<the five below>]},
//	 "output": "[recall warnings]\n- <w1>\n- <w2>\n- <w3>\n- <w4>\n- <w5>\n\nNo matching memory spans.", ...}
//
// (core/runtime.py _handle_memory_query: "clamped X from A to B" for
// limit_spans, deep_limit_spans, deep_limit_messages_per_span,
// neighbor_hops and max_messages; "deep scan disabled (not allowed at
// this level)"; the block is prepended for return rendered/both.)
func TestDiffMemMemoryQueryRecallWarnings(t *testing.T) {
	steps := append(noteSteps(), stepSpec("memory_query",
		`{"recall_level": "urgent", "limit_spans": 9, "deep": true, "query": "zzz", "return": "both"}`))
	st := runStepList(t, steps...)
	res := resultAt(t, st, "r2")
	meta, _ := res["meta"].(map[string]any)
	want := mustDecodeJSON(t, `{
	 "effort": {"applied": {"connected": false, "deep": false, "deep_limit_messages_per_span": 0, "deep_limit_spans": 0,
	   "limit_spans": 3, "max_messages": 30, "neighbor_hops": 0}, "recall_level": "urgent"},
	 "matches": [], "span_ids": [],
	 "warnings": ["recall_level=urgent: clamped limit_spans from 9 to 3",
	   "recall_level=urgent: deep scan disabled (not allowed at this level)",
	   "recall_level=urgent: clamped deep_limit_spans from 50 to 0",
	   "recall_level=urgent: clamped deep_limit_messages_per_span from 400 to 0",
	   "recall_level=urgent: clamped neighbor_hops from 1 to 0"]}`)
	if got, w := canonJSON(t, meta), canonJSON(t, want); got != w {
		t.Errorf("meta\n got %s\nwant %s", got, w)
	}
	wantOut := "[recall warnings]\n" +
		"- recall_level=urgent: clamped limit_spans from 9 to 3\n" +
		"- recall_level=urgent: deep scan disabled (not allowed at this level)\n" +
		"- recall_level=urgent: clamped deep_limit_spans from 50 to 0\n" +
		"- recall_level=urgent: clamped deep_limit_messages_per_span from 400 to 0\n" +
		"- recall_level=urgent: clamped neighbor_hops from 1 to 0\n\n" +
		"No matching memory spans."
	if res["output"] != wantOut {
		t.Errorf("output\n got %q\nwant %q", res["output"], wantOut)
	}
}

// ---------------------------------------------------------------------------
// 2. MEMORY_QUERY recall_level clamps the deep budgets even when deep is
// off, and reports them in effort.applied.
//
// Python (py_lits.py "standard"): after two notes, MEMORY_QUERY
// {"return": "meta", "recall_level": "standard", "connected": true,
// "neighbor_hops": 5, "max_messages": -1} gives meta.effort =
// {"applied": {"connected": true, "deep": false,
// "deep_limit_messages_per_span": 200, "deep_limit_spans": 25,
// "limit_spans": 5, "max_messages": 150, "neighbor_hops": 1},
// "recall_level": "standard"} and meta.warnings = [the four below].
func TestDiffMemMemoryQueryRecallClampsDeepBudgets(t *testing.T) {
	steps := append(noteSteps(), stepSpec("memory_query",
		`{"return": "meta", "recall_level": "standard", "connected": true, "neighbor_hops": 5, "max_messages": -1}`))
	st := runStepList(t, steps...)
	meta, _ := resultAt(t, st, "r2")["meta"].(map[string]any)
	want := mustDecodeJSON(t, `{
	 "effort": {"applied": {"connected": true, "deep": false, "deep_limit_messages_per_span": 200, "deep_limit_spans": 25,
	   "limit_spans": 5, "max_messages": 150, "neighbor_hops": 1}, "recall_level": "standard"},
	 "warnings": ["recall_level=standard: clamped deep_limit_spans from 50 to 25",
	   "recall_level=standard: clamped deep_limit_messages_per_span from 400 to 200",
	   "recall_level=standard: clamped neighbor_hops from 5 to 1",
	   "recall_level=standard: max_messages=-1 (unbounded) is not allowed; clamped to 150"]}`)
	got := map[string]any{"effort": meta["effort"], "warnings": meta["warnings"]}
	if g, w := canonJSON(t, got), canonJSON(t, want); g != w {
		t.Errorf("meta effort/warnings\n got %s\nwant %s", g, w)
	}
}

// ---------------------------------------------------------------------------
// 3. MEMORY_QUERY with return "rendered" carries no meta, recall_level or
// not.
//
// Python (py_lits.py "rendered"): after two notes, MEMORY_QUERY
// {"recall_level": "deep", "query": "zzz"} completes with results[0] =
// {"call_id": "memory", "error": null, "meta": null, "name":
// "recall_memory", "output": "No matching memory spans.", "success": true}
// (effort/warnings are attached only `if return_mode in {"meta", "both"}`).
func TestDiffMemMemoryQueryRenderedModeHasNullMeta(t *testing.T) {
	steps := append(noteSteps(), stepSpec("memory_query", `{"recall_level": "deep", "query": "zzz"}`))
	st := runStepList(t, steps...)
	want := mustDecodeJSON(t, `{"mode": "executed", "results": [{"call_id": "memory", "error": null, "meta": null,
	  "name": "recall_memory", "output": "No matching memory spans.", "success": true}]}`)
	if got, w := canonJSON(t, st.Vars["r2"]), canonJSON(t, want); got != w {
		t.Errorf("vars.r2\n got %s\nwant %s", got, w)
	}
}

// ---------------------------------------------------------------------------
// 4. MEMORY_QUERY keeps an explicit artifact id it does not know.
//
// Python (py_lits.py "unknown"): after two notes, MEMORY_QUERY
// {"span_ids": ["nonexistent"], "return": "both"} completes with
// results[0] = {"meta": {"matches": [], "span_ids": ["nonexistent"]},
// "output": "Recalled memory spans (provenance-preserving):\n\n[1]
// span_id=nonexistent kind=span msgs= created_at=\n    (artifact payload
// unavailable)", ...} (resolve_span_ids_from_spans passes non-digit
// strings through; the renderer writes a placeholder entry). No warnings.
func TestDiffMemMemoryQueryKeepsUnknownExplicitSpanID(t *testing.T) {
	steps := append(noteSteps(), stepSpec("memory_query", `{"span_ids": ["nonexistent"], "return": "both"}`))
	st := runStepList(t, steps...)
	want := mustDecodeJSON(t, `{"mode": "executed", "results": [{"call_id": "memory", "error": null,
	  "meta": {"matches": [], "span_ids": ["nonexistent"]}, "name": "recall_memory",
	  "output": "Recalled memory spans (provenance-preserving):\n\n[1] span_id=nonexistent kind=span msgs= created_at=\n    (artifact payload unavailable)",
	  "success": true}]}`)
	if got, w := canonJSON(t, st.Vars["r2"]), canonJSON(t, want); got != w {
		t.Errorf("vars.r2\n got %s\nwant %s", got, w)
	}
}

// ---------------------------------------------------------------------------
// 5. MEMORY_QUERY and MEMORY_REHYDRATE count 1-based span indices over
// the spans newest first (ActiveContextPolicy.list_memory_spans_from_run
// sorts by created_at descending); MEMORY_TAG counts in stored order
// (its own _ensure_spans), which already matches.
//
// Python (py_lits.py "index"): notes "first" then "second"; MEMORY_QUERY
// {"span_ids": [1], "return": "meta"} gives meta.span_ids = [<second's
// id>] and matches[0].note_preview "second"; MEMORY_REHYDRATE
// {"span_ids": [1], "placement": "end"} gives {"artifacts": [{"error":
// null, "inserted": 1, "kind": "memory_note", "preview": "[MEMORY
// NOTE]\nsecond", "skipped": 0, "span_id": <second's id>}], "effort":
// null, "inserted": 1, "skipped": 0, "warnings": null}; ("rehydrate")
// MEMORY_REHYDRATE {"span_ids": ["2"]} rehydrates "first".
func TestDiffMemMemorySpanIndexCountsNewestFirst(t *testing.T) {
	steps := append(noteSteps(),
		stepSpec("memory_query", `{"span_ids": [1], "return": "meta"}`),
		stepSpec("memory_rehydrate", `{"span_ids": [1], "placement": "end"}`),
		stepSpec("memory_rehydrate", `{"span_ids": ["2"], "placement": "end"}`))
	st := runStepList(t, steps...)
	first, second := spanIDAt(t, st, "r0"), spanIDAt(t, st, "r1")
	meta, _ := resultAt(t, st, "r2")["meta"].(map[string]any)
	if got := canonJSON(t, meta["span_ids"]); got != canonJSON(t, []any{second}) {
		t.Errorf(`MEMORY_QUERY span_ids [1]: meta.span_ids %s; Python ["%s"] (the newest note, "second")`, got, second)
	}
	reh := func(key string) any {
		r, _ := st.Vars[key].(map[string]any)
		arts, _ := r["artifacts"].([]any)
		if len(arts) != 1 {
			return r
		}
		return arts[0].(map[string]any)["span_id"]
	}
	if got := reh("r3"); got != second {
		t.Errorf(`MEMORY_REHYDRATE span_ids [1] rehydrated %v; Python rehydrates %s ("second")`, got, second)
	}
	if got := reh("r4"); got != first {
		t.Errorf(`MEMORY_REHYDRATE span_ids ["2"] rehydrated %v; Python rehydrates %s ("first")`, got, first)
	}
}

// ---------------------------------------------------------------------------
// 6. MEMORY_REHYDRATE always writes "effort" and "warnings" (null without
// a recall_level).
//
// Python (py_lits.py "rehydrate"): after two notes, MEMORY_REHYDRATE
// {"span_ids": ["2"], "placement": "end"} completes with
// {"artifacts": [{"error": null, "inserted": 1, "kind": "memory_note",
// "preview": "[MEMORY NOTE]\nfirst", "skipped": 0, "span_id": <id>}],
// "effort": null, "inserted": 1, "skipped": 0, "warnings": null}.
func TestDiffMemMemoryRehydrateResultHasNullEffortAndWarnings(t *testing.T) {
	steps := append(noteSteps(), stepSpec("memory_rehydrate", `{"span_ids": ["2"], "placement": "end"}`))
	st := runStepList(t, steps...)
	r, _ := st.Vars["r2"].(map[string]any)
	for _, k := range []string{"effort", "warnings"} {
		if v, ok := r[k]; !ok || v != nil {
			t.Errorf(`vars.r2[%q] = %v (present %v); Python writes "%s": null`, k, v, ok, k)
		}
	}
}

// eventWorkflows: "lis" waits on event "ping" (session scope) into
// vars.ev and completes with {"got": ev}; "lis2" waits on "*" then asks
// the user; "emit" emits with the given payload into vars.r.
func eventWorkflows(emitPayload map[string]any) []*runtime.Workflow {
	eff := func(typ durable.EffectType, payload map[string]any, rk, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: typ, Payload: pyjson.CloneObject(payload), ResultKey: rk}, next), nil
		}
	}
	return []*runtime.Workflow{
		{ID: "lis", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": eff(durable.EffectWaitEvent, map[string]any{"event_name": "ping"}, "ev", "d"),
			"d": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"got": run.Vars["ev"]}), nil
			},
		}},
		{ID: "lis2", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": eff(durable.EffectWaitEvent, map[string]any{"event_name": "*"}, "ev", "a"),
			"a": eff(durable.EffectAskUser, map[string]any{"prompt": "q?"}, "ans", "d"),
			"d": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}},
		{ID: "emit", Entry: "e", Nodes: map[string]runtime.NodeFunc{
			"e": eff(durable.EffectEmitEvent, emitPayload, "r", "done"),
			"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
			},
		}},
	}
}

// emitScenario (py_evt.py): L1, L2 ("lis") and L3 ("lis2") wait in
// session s2, L4 ("lis") in s1, each started and ticked in that order;
// then "emit" in session s1 emits "ping" to session s2. It returns the
// emitter's vars.r with the run ids replaced by L1…L4.
func emitScenario(t *testing.T, emitPayload map[string]any) map[string]any {
	t.Helper()
	f := newMemFix(t, eventWorkflows(emitPayload)...)
	ctx := context.Background()
	names := map[string]string{}
	var emitter string
	for _, l := range []struct{ n, wf, s string }{{"L1", "lis", "s2"}, {"L2", "lis", "s2"}, {"L3", "lis2", "s2"}, {"L4", "lis", "s1"}, {"E", "emit", "s1"}} {
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: l.wf, SessionID: l.s, Vars: map[string]any{"who": l.n}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		names[id] = l.n
		emitter = id
	}
	st, err := f.rt.GetState(ctx, emitter)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	s := canonJSON(t, st.Vars["r"])
	for id, n := range names {
		s = strings.ReplaceAll(s, id, n)
	}
	if err := jsonUnmarshal(s, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// ---------------------------------------------------------------------------
// 7. EMIT_EVENT with max_steps > 0 reports each listener's status after
// those steps.
//
// Python (py_evt.py "a"): EMIT_EVENT {"name": "ping", "session_id": "s2",
// "payload": {"x": 1}, "event_id": "e1", "max_steps": 5} completes with
// "resumed": [{"run_id": L3, "status": "waiting"}, {"run_id": L2,
// "status": "completed"}, {"run_id": L1, "status": "completed"}]
// (_handle_emit_event: `new_state = self.resume(..., max_steps=max_steps)`
// then `{"run_id": r.run_id, "status": new_state.status.value}`). Same
// statuses with "max_steps": 1 (py_evt.py "b"). Only max_steps 0 leaves
// listeners running (the documented in-process driving).
func TestDiffMemEmitEventResumedStatusAfterMaxSteps(t *testing.T) {
	r := emitScenario(t, map[string]any{"name": "ping", "session_id": "s2", "payload": map[string]any{"x": 1}, "event_id": "e1", "max_steps": 5})
	want := map[string]string{"L1": "completed", "L2": "completed", "L3": "waiting"}
	resumed, _ := r["resumed"].([]any)
	if len(resumed) != 3 {
		t.Fatalf("resumed %v", r["resumed"])
	}
	for _, x := range resumed {
		m := x.(map[string]any)
		if id := m["run_id"].(string); m["status"] != want[id] {
			t.Errorf(`resumed %s status %q; Python (max_steps 5): %q`, id, m["status"], want[id])
		}
	}
}

// ---------------------------------------------------------------------------
// 8. EMIT_EVENT delivers in the store's list order: most recently updated
// listener first.
//
// Python (py_evt.py "a", "b", "c", in-memory and as per spec §4.1
// list_runs "ordered by updated_at descending"): with L1, L2, L3 put to
// wait in that order, the emitter stores "delivered": 3, "delivered_to":
// [L3, L2, L1] and "resumed" in the same order.
func TestDiffMemEmitEventDeliversMostRecentListenerFirst(t *testing.T) {
	r := emitScenario(t, map[string]any{"name": "ping", "session_id": "s2", "payload": "hi", "max_steps": 0})
	want := mustDecodeJSON(t, `["L3", "L2", "L1"]`)
	if got, w := canonJSON(t, r["delivered_to"]), canonJSON(t, want); got != w {
		t.Errorf("delivered_to %s; Python %s", got, w)
	}
}
