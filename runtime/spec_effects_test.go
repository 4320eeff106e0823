package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Spec §3.3: an explicit truthy `wait_key` wins over `name`; the outcome is
// waiting {reason:"event", wait_key, resume_to_node, result_key, prompt,
// choices, allow_free_text (default true), details (object, copied)}.
func TestSpecWaitEventWaitShape(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectWaitEvent, map[string]any{
		"wait_key": "custom:1", "name": "ignored", "prompt": "Go?", "details": map[string]any{"a": "b"},
		"resume_to_node": "later",
	}))
	w := run.Waiting
	if run.Status != durable.RunWaiting || w == nil {
		t.Fatalf("run %s (%s); want waiting", run.Status, run.Error)
	}
	if w.Reason != durable.WaitEvent || w.WaitKey != "custom:1" || w.ResultKey != "r0" || w.ResumeToNode != "later" ||
		w.Prompt != "Go?" || !w.AllowFreeText || feJSON(w.Details) != `{"a":"b"}` || !w.Until.IsZero() {
		t.Errorf("wait %+v; want event wait on custom:1, result_key r0, resume to later, prompt Go?, free text, details {a: b}", w)
	}
}

// Spec §3.5: the envelope's `payload` is the payload object; a truthy
// non-object is wrapped as {"value": x}; missing or any falsy value (null, 0,
// "", false, []) becomes {}; `event_id` defaults to null.
func TestSpecEmitEventEnvelopePayloadNormalised(t *testing.T) {
	cases := []struct {
		payload any
		has     bool
		want    string
	}{
		{nil, false, `{}`},
		{nil, true, `{}`},
		{int64(0), true, `{}`},
		{"", true, `{}`},
		{false, true, `{}`},
		{[]any{}, true, `{}`},
		{"hi", true, `{"value":"hi"}`},
		{[]any{int64(1)}, true, `{"value":[1]}`},
		{map[string]any{"k": "v"}, true, `{"k":"v"}`},
	}
	for _, c := range cases {
		f := memSetup(t, false)
		listener := f.runSteps(t, runtime.StartParams{}, step(durable.EffectWaitEvent, map[string]any{"name": "ping", "scope": "global"}))
		if listener.Status != durable.RunWaiting {
			t.Fatalf("listener %s (%s)", listener.Status, listener.Error)
		}
		p := map[string]any{"name": "ping", "scope": "global"}
		if c.has {
			p["payload"] = c.payload
		}
		mustComplete(t, f.runSteps(t, runtime.StartParams{}, step(durable.EffectEmitEvent, p)))
		env, _ := f.state(t, listener.RunID).Vars["r0"].(map[string]any)
		if env == nil {
			t.Fatalf("payload %#v: the listener got no envelope", c.payload)
		}
		if got := feJSON(env["payload"]); got != c.want {
			t.Errorf("payload %#v (present %v): envelope payload %s; want %s", c.payload, c.has, got, c.want)
		}
		if v, has := env["event_id"]; !has || v != nil {
			t.Errorf("envelope event_id = %v (present %v); want null", v, has)
		}
	}
}

// Spec §3.5: "`max_steps` (ticks granted to each resumed listener, default
// 0, negative → 0)": a listener resumed with a negative max_steps is not
// ticked by the emit (its status there is running, as for 0).
func TestSpecEmitEventNegativeMaxStepsIsZero(t *testing.T) {
	for _, maxSteps := range []any{int64(-3), int64(0), int64(5)} {
		f := memSetup(t, false)
		listener := f.runSteps(t, runtime.StartParams{}, step(durable.EffectWaitEvent, map[string]any{"name": "ping", "scope": "global"}))
		emitter := f.runSteps(t, runtime.StartParams{}, step(durable.EffectEmitEvent, map[string]any{"name": "ping", "scope": "global", "max_steps": maxSteps}))
		mustComplete(t, emitter)
		r, _ := emitter.Vars["r0"].(map[string]any)
		resumed, _ := r["resumed"].([]any)
		if len(resumed) != 1 {
			t.Fatalf("max_steps %v: resumed %v; want the one listener", maxSteps, r["resumed"])
		}
		entry, _ := resumed[0].(map[string]any)
		// Ticked by the emit (max_steps 5), the listener runs its node
		// again and waits anew; not ticked, it is left running.
		if ticked := entry["status"] != "running"; entry["run_id"] != listener.RunID || ticked != (maxSteps == int64(5)) {
			t.Errorf("max_steps %v: resumed %v; want the listener ticked only for a positive max_steps", maxSteps, entry)
		}
	}
}

// Spec §3.5 step 3: an event nobody listens to completes {wait_key, name,
// scope, delivered: 0, delivered_to: [], resumed: []}.
func TestSpecEmitEventWithoutListenersResult(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectEmitEvent, map[string]any{"name": "ping", "scope": "global"}))
	mustComplete(t, run)
	want := `{"delivered":0,"delivered_to":[],"name":"ping","resumed":[],"scope":"global","wait_key":"evt:global:global:ping"}`
	if got := feJSON(run.Vars["r0"]); got != want {
		t.Errorf("result %s; want %s", got, want)
	}
}

// Spec §3.6: the child is started with `actor_id` = the parent's actor,
// `parent_run_id` = the parent run, and `vars` defaulting to {}; a sync
// child's completion gives {"sub_run_id", "output"}.
func TestSpecSubworkflowChildIdentity(t *testing.T) {
	f := memSetup(t, false)
	parent := f.runSteps(t, runtime.StartParams{ActorID: "alice"}, step(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "mem"}))
	mustComplete(t, parent)
	r, _ := parent.Vars["r0"].(map[string]any)
	childID, _ := r["sub_run_id"].(string)
	if childID == "" || feJSON(r["output"]) != `{"done":true}` || len(r) != 2 {
		t.Fatalf("result %v; want {sub_run_id, output: {done: true}}", r)
	}
	child := f.state(t, childID)
	if child.ActorID != "alice" || child.ParentRunID != parent.RunID || child.WorkflowID != "mem" {
		t.Errorf("child actor %q parent %q workflow %q; want alice, %s, mem", child.ActorID, child.ParentRunID, child.WorkflowID, parent.RunID)
	}
	for k := range child.Vars {
		if !strings.HasPrefix(k, "_") {
			t.Errorf("child vars hold %q; want only the runtime's namespaces (vars default {})", k)
		}
	}
}

// Spec §3.8: "All require an artifact store (else failed `<TYPE> requires an
// ArtifactStore; …`) except MEMORY_TAG" — MEMORY_COMPACT included.
func TestSpecMemoryCompactRequiresAnArtifactStore(t *testing.T) {
	f := memSetup(t, false)
	msgs := []any{
		map[string]any{"role": "system", "content": "s"},
		map[string]any{"role": "user", "content": "a"}, map[string]any{"role": "assistant", "content": "b"},
		map[string]any{"role": "user", "content": "c"}, map[string]any{"role": "assistant", "content": "d"},
	}
	run := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"context": map[string]any{"messages": msgs}}},
		step(durable.EffectMemoryCompact, map[string]any{"preserve_recent": int64(1)}))
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "MEMORY_COMPACT requires an ArtifactStore; ") {
		t.Errorf("run %s error %q; want failed with \"MEMORY_COMPACT requires an ArtifactStore; …\"", run.Status, run.Error)
	}
}

// Spec §3.4: a WAIT_UNTIL whose deadline has passed completes with
// {"until": <until as given>, "ready": true} at result_key.
func TestSpecWaitUntilPastDeadlineResult(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectWaitUntil, map[string]any{"until": "2000-01-01T00:00:00Z"}))
	mustComplete(t, run)
	if got := feJSON(run.Vars["r0"]); got != `{"ready":true,"until":"2000-01-01T00:00:00Z"}` {
		t.Errorf("result %s; want {\"until\": \"2000-01-01T00:00:00Z\", \"ready\": true}", got)
	}
}

// Spec §3.6: "Missing registry / unknown workflow / missing `workflow_id` →
// failed (or error tool results when wrapping)".
func TestSpecWrappedSubworkflowStartErrorsAreToolResults(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "nope", "wrap_as_tool_result": true}),
		step(durable.EffectStartSubworkflow, map[string]any{"wrap_as_tool_result": true, "tool_name": "t", "call_id": "c"}),
	)
	mustComplete(t, run)
	for i, want := range []string{
		`{"call_id":"subworkflow","error":"Workflow 'nope' not found in registry","name":"start_subworkflow","output":null,"success":false}`,
		`{"call_id":"c","error":"start_subworkflow requires payload.workflow_id","name":"t","output":null,"success":false}`,
	} {
		if got := feJSON(res(t, run, i)); got != want {
			t.Errorf("step %d: tool result %s; want %s", i, got, want)
		}
	}
	failed := f.runSteps(t, runtime.StartParams{}, step(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "nope"}))
	if failed.Status != durable.RunFailed || !strings.HasSuffix(failed.Error, "Workflow 'nope' not found in registry") {
		t.Errorf("unwrapped: run %s error %q; want failed with \"Workflow 'nope' not found in registry\"", failed.Status, failed.Error)
	}
}

// Spec §3.8 recall_level table, row `deep`: limit_spans default 8 / max 20,
// deep spans max 100, deep msgs/span max 400, connected allowed, hops max 2,
// max_messages default 200 / max 600.
func TestSpecMemoryQueryDeepRecallLevelBudgets(t *testing.T) {
	steps := append(noteSteps(),
		stepSpec("memory_query", `{"return": "meta", "recall_level": "deep"}`),
		stepSpec("memory_query", `{"return": "meta", "recall_level": "deep", "query": "x", "connected": true,
		  "limit_spans": 50, "deep_limit_spans": 500, "deep_limit_messages_per_span": 1000, "neighbor_hops": 9, "max_messages": 1000}`))
	st := runStepList(t, steps...)
	for key, want := range map[string]string{
		"r2": `{"connected":false,"deep":false,"deep_limit_messages_per_span":400,"deep_limit_spans":50,"limit_spans":8,"max_messages":200,"neighbor_hops":1}`,
		"r3": `{"connected":true,"deep":true,"deep_limit_messages_per_span":400,"deep_limit_spans":100,"limit_spans":20,"max_messages":600,"neighbor_hops":2}`,
	} {
		meta, _ := resultAt(t, st, key)["meta"].(map[string]any)
		effort, _ := meta["effort"].(map[string]any)
		if effort["recall_level"] != "deep" || feJSON(effort["applied"]) != want {
			t.Errorf("%s: effort %s; want recall_level deep, applied %s", key, feJSON(effort), want)
		}
	}
}

// Spec §3.8 recall_level table, column "rehydrate default/max": MEMORY_REHYDRATE
// reads max_messages as urgent 30/60, standard 80/200, deep 200/800.
func TestSpecMemoryRehydrateRecallLevelMaxMessages(t *testing.T) {
	for _, c := range []struct {
		level      string
		def, limit int64
	}{{"urgent", 30, 60}, {"standard", 80, 200}, {"deep", 200, 800}} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{},
			step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"no_such_span"}, "recall_level": c.level}),
			step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{"no_such_span"}, "recall_level": c.level, "max_messages": int64(100000)}),
		)
		mustComplete(t, run)
		for i, want := range []int64{c.def, c.limit} {
			r, _ := run.Vars[[]string{"r0", "r1"}[i]].(map[string]any)
			eff, _ := r["effort"].(map[string]any)
			applied, _ := eff["applied"].(map[string]any)
			if got, _ := runtime.AsInt(applied["max_messages"]); got != want || eff["recall_level"] != c.level {
				t.Errorf("%s step %d: effort %v; want applied max_messages %d", c.level, i, eff, want)
			}
		}
	}
}

// Spec §3.9 paths: JSON-pointer form with `~1`→`/` and `~0`→`~`, and the dot
// form where bare numeric segments are list indices.
func TestSpecVarsQueryPointerEscapesAndNumericSegments(t *testing.T) {
	f := memSetup(t, false)
	vars := map[string]any{"scratchpad": map[string]any{"a/b": map[string]any{"c~d": []any{int64(10), int64(20)}}, "l": []any{"x", "y"}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectVarsQuery, map[string]any{"path": "/scratchpad/a~1b/c~0d/1"}),
		step(durable.EffectVarsQuery, map[string]any{"path": "scratchpad.l.1"}),
	)
	mustComplete(t, run)
	for i, want := range []string{
		"{\n  \"path\": \"/scratchpad/a~1b/c~0d/1\",\n  \"type\": \"int\",\n  \"value\": 20\n}",
		"{\n  \"path\": \"scratchpad.l.1\",\n  \"type\": \"str\",\n  \"value\": \"y\"\n}",
	} {
		if r := res(t, run, i); r["success"] != true || r["output"] != want {
			t.Errorf("step %d: result %v; want output %q", i, r, want)
		}
	}
}

// Spec §3.5: "for `workflow` and `run` scopes the scope id is always the
// emitter's own `workflow_id` / `run_id`" (a payload session_id does not
// retarget them), and `global` uses the literal `global`.
func TestSpecEmitEventScopeIDIsTheEmittersOwn(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{SessionID: "s1"},
		step(durable.EffectEmitEvent, map[string]any{"name": "x", "scope": "run", "session_id": "other"}),
		step(durable.EffectEmitEvent, map[string]any{"name": "x", "scope": "workflow", "session_id": "other"}),
		step(durable.EffectEmitEvent, map[string]any{"name": "x", "scope": "global", "session_id": "other"}),
		step(durable.EffectEmitEvent, map[string]any{"name": " x ", "scope": " Session "}),
	)
	mustComplete(t, run)
	for i, want := range []string{"evt:run:" + run.RunID + ":x", "evt:workflow:mem:x", "evt:global:global:x", "evt:session:s1:x"} {
		r, _ := run.Vars[[]string{"r0", "r1", "r2", "r3"}[i]].(map[string]any)
		if r["wait_key"] != want {
			t.Errorf("step %d: wait_key %v; want %s", i, r["wait_key"], want)
		}
	}
}

// Spec §3.6 sync mode: a child left `waiting` parks the parent in waiting
// {reason:"subworkflow", wait_key:"subworkflow:<child>", details:{sub_run_id,
// sub_workflow_id, include_traces, sub_waiting:{reason, wait_key}}}.
func TestSpecSyncSubworkflowChildWaitingParksTheParent(t *testing.T) {
	f := memSetup(t, false)
	parent := f.runSteps(t, runtime.StartParams{WorkflowID: "parent", Vars: map[string]any{
		"child_steps": []any{step(durable.EffectAskUser, map[string]any{"prompt": "?"})},
	}})
	w := parent.Waiting
	if parent.Status != durable.RunWaiting || w == nil || w.Reason != durable.WaitSubworkflow {
		t.Fatalf("parent %s wait %+v; want waiting on its subworkflow", parent.Status, w)
	}
	child, _ := w.Details["sub_run_id"].(string)
	if child == "" || w.WaitKey != "subworkflow:"+child || w.ResultKey != "sub" || w.ResumeToNode != "done" {
		t.Errorf("wait %+v; want wait_key subworkflow:<child>, result_key sub, resume to done", w)
	}
	want := `{"include_traces":false,"sub_run_id":"` + child + `","sub_waiting":{"reason":"user","wait_key":"user:` + child + `:step"},"sub_workflow_id":"mem"}`
	if got := feJSON(w.Details); got != want {
		t.Errorf("details %s; want %s", got, want)
	}
}

// Spec §3.6 "Resuming the parent" as the v0.7 contract has it
// (compatibility.md "parent waiting on a child"): a parent waiting on an
// async child is resumed automatically when the child ends; a failed child
// gives {"sub_run_id", "output": {"success": false, "error", "status"}}.
func TestSpecParentOfFailedAsyncChildIsResumed(t *testing.T) {
	parent := &runtime.Workflow{ID: "p", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "bad", "async": true, "wait": true}, ResultKey: "sub"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	bad := &runtime.Workflow{ID: "bad", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.StepPlan{}, errors.New("kaput")
		},
	}}
	f := setup(t, parent, bad)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	run := mustGet(t, f.rt, id)
	if run.Status != durable.RunCompleted {
		t.Fatalf("parent %s (%s) waiting %+v; want resumed by its child's end and completed", run.Status, run.Error, run.Waiting)
	}
	sub, _ := run.Vars["sub"].(map[string]any)
	child, _ := sub["sub_run_id"].(string)
	want := `{"output":{"error":"node \"a\" failed: kaput","status":"failed","success":false},"sub_run_id":"` + child + `"}`
	if child == "" || feJSON(sub) != want {
		t.Errorf("vars.sub = %s; want %s", feJSON(sub), want)
	}
}

// Spec §3.5: for session scope `session_id` "defaults to the emitter's
// `session_id`, else its `run_id`".
func TestSpecEmitEventSessionScopeDefaultsToRunID(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectEmitEvent, map[string]any{"name": "x"}))
	mustComplete(t, run)
	r, _ := run.Vars["r0"].(map[string]any)
	if want := "evt:session:" + run.RunID + ":x"; r["wait_key"] != want || r["scope"] != "session" {
		t.Errorf("result %v; want wait_key %s and scope session", r, want)
	}
}

// Spec §3.1: ASK_USER requires a truthy prompt: "Error: `ask_user requires
// payload.prompt`".
func TestSpecAskUserRequiresAPrompt(t *testing.T) {
	f := memSetup(t, false)
	for _, prompt := range []any{nil, "", int64(0)} {
		run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectAskUser, map[string]any{"prompt": prompt}))
		if run.Status != durable.RunFailed || !strings.HasSuffix(run.Error, "ask_user requires payload.prompt") {
			t.Errorf("prompt %#v: run %s error %q; want failed with \"ask_user requires payload.prompt\"", prompt, run.Status, run.Error)
		}
	}
}

// Spec §3.5 event keys: "empty scope id → error `missing scope id for
// scope='<scope>'`".
func TestSpecEventKeyMissingScopeID(t *testing.T) {
	for _, scope := range []string{"session", "workflow", "run"} {
		_, err := runtime.EventKey(scope, "x", "  ")
		if want := "missing scope id for scope='" + scope + "'"; err == nil || err.Error() != want {
			t.Errorf("EventKey(%s, x, blank): %v; want %q", scope, err, want)
		}
	}
	if key, err := runtime.EventKey("global", "x", ""); err != nil || key != "evt:global:global:x" {
		t.Errorf("EventKey(global, x, \"\") = %q, %v; want evt:global:global:x", key, err)
	}
}

// Spec §3.6 async, no wait: `completed {"sub_run_id", "async": true}`;
// wrapped: a tool result whose output is {"rendered": "Started subworkflow
// <id>", "sub_run_id", "async": true}.
func TestSpecAsyncSubworkflowWithoutWaitResults(t *testing.T) {
	f := memSetup(t, false)
	child := map[string]any{"steps": []any{}}
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "mem", "async": true, "vars": child}),
		step(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "mem", "async": true, "vars": child, "wrap_as_tool_result": true}),
	)
	mustComplete(t, run)
	r0, _ := run.Vars["r0"].(map[string]any)
	id0, _ := r0["sub_run_id"].(string)
	if id0 == "" || feJSON(r0) != `{"async":true,"sub_run_id":"`+id0+`"}` {
		t.Errorf("r0 = %s; want {sub_run_id, async: true}", feJSON(r0))
	}
	r1 := res(t, run, 1)
	out, _ := r1["output"].(map[string]any)
	id1, _ := out["sub_run_id"].(string)
	want := `{"call_id":"subworkflow","error":null,"name":"start_subworkflow","output":{"async":true,"rendered":"Started subworkflow ` + id1 + `","sub_run_id":"` + id1 + `"},"success":true}`
	if id1 == "" || feJSON(r1) != want {
		t.Errorf("r1 result %s; want %s", feJSON(r1), want)
	}
}

// Spec §3.8 MEMORY_QUERY: `tags_mode` is `all`/`and` (default) or `any`/`or`,
// and authors are filtered by `authors`/`usernames`/`users`.
func TestSpecMemoryQueryTagsModeAndAuthorAliases(t *testing.T) {
	f := memSetup(t, true)
	two := map[string]any{"topic": "a", "person": "nobody"}
	run := f.runSteps(t, runtime.StartParams{ActorID: "alice"},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "tags": map[string]any{"topic": "a", "person": "p"}}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": two, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": two, "tags_mode": "and", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": two, "tags_mode": "all", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": two, "tags_mode": "any", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"usernames": []any{"Alice"}, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"users": []any{"alice"}, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"users": []any{"bob"}, "return": "meta"}),
	)
	mustComplete(t, run)
	for i, want := range []int{0, 0, 0, 1, 1, 1, 0} {
		if got := spanIDs(t, res(t, run, i+1)); len(got) != want {
			t.Errorf("query %d: span ids %v; want %d match(es)", i+1, got, want)
		}
	}
}
