package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// memFixture is a runtime with an in-memory store, an in-memory artifact
// store and the "mem" workflow, which executes the effects listed in
// vars.steps ({type, payload}) one after another, writing the result of
// step i at vars.r<i>.
type memFixture struct {
	rt   *runtime.Runtime
	st   store.Store
	arts *artifact.Memory

	mu  sync.Mutex
	now time.Time
}

func memWorkflows() []*runtime.Workflow {
	mem := &runtime.Workflow{ID: "mem", Entry: "step", Nodes: map[string]runtime.NodeFunc{
		"step": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps, _ := run.Vars["steps"].([]any)
			i, _ := run.Vars["i"].(int64)
			if int(i) >= len(steps) {
				return runtime.Complete(map[string]any{"done": true}), nil
			}
			run.Vars["i"] = i + 1
			s := steps[i].(map[string]any)
			payload, _ := pyjson.Clone(s["payload"]).(map[string]any)
			return runtime.Request(&durable.Effect{
				Type: durable.EffectType(s["type"].(string)), Payload: payload, ResultKey: fmt.Sprintf("r%d", i),
			}, "step"), nil
		},
	}}
	// parent starts a sync child "mem" run with the steps in vars.child_steps.
	parent := &runtime.Workflow{ID: "parent", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{
				"workflow_id": "mem", "vars": map[string]any{"steps": pyjson.Clone(run.Vars["child_steps"])},
			}, ResultKey: "sub"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	return []*runtime.Workflow{mem, parent}
}

func memSetup(t *testing.T, withArtifacts bool) *memFixture {
	t.Helper()
	return memSetupStore(t, memory.New(), withArtifacts)
}

func memSetupStore(t *testing.T, st store.Store, withArtifacts bool) *memFixture {
	t.Helper()
	f := &memFixture{st: st, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	reg, err := runtime.NewRegistry(memWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Store: st, Registry: reg, Clock: f.clock}
	if withArtifacts {
		f.arts = artifact.NewMemory()
		f.arts.SetClock(f.clock)
		cfg.Artifacts = f.arts
	}
	f.rt, err = runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// clock advances by one second per reading, so timestamps are ordered.
func (f *memFixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(time.Second)
	return f.now
}

func step(typ durable.EffectType, payload map[string]any) map[string]any {
	return map[string]any{"type": string(typ), "payload": payload}
}

// runSteps starts a "mem" run with the steps and ticks it to the end.
func (f *memFixture) runSteps(t *testing.T, p runtime.StartParams, steps ...map[string]any) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	if p.WorkflowID == "" {
		p.WorkflowID = "mem"
	}
	vars := map[string]any{}
	for k, v := range p.Vars {
		vars[k] = v
	}
	list := make([]any, len(steps))
	for i, s := range steps {
		list[i] = s
	}
	vars["steps"] = list
	p.Vars = vars
	id, err := f.rt.Start(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// mustComplete fails the test unless the run completed.
func mustComplete(t *testing.T, run *durable.RunState) {
	t.Helper()
	if run.Status != durable.RunCompleted {
		t.Fatalf("run %s: status %s, error %q", run.RunID, run.Status, run.Error)
	}
}

// res returns the single tool result of step i.
func res(t *testing.T, run *durable.RunState, i int) map[string]any {
	t.Helper()
	env, ok := run.Vars[fmt.Sprintf("r%d", i)].(map[string]any)
	if !ok {
		t.Fatalf("no result r%d in %v", i, run.Vars)
	}
	if env["mode"] != "executed" {
		t.Fatalf("r%d: not a tool envelope: %v", i, env)
	}
	return env["results"].([]any)[0].(map[string]any)
}

func metaOf(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	m, ok := r["meta"].(map[string]any)
	if !ok {
		t.Fatalf("no meta in %v", r)
	}
	return m
}

func spansOf(run *durable.RunState) []any {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	l, _ := rt["memory_spans"].([]any)
	return l
}

func spanIDs(t *testing.T, r map[string]any) []string {
	t.Helper()
	var out []string
	for _, x := range metaOf(t, r)["span_ids"].([]any) {
		out = append(out, x.(string))
	}
	return out
}

func (f *memFixture) state(t *testing.T, id string) *durable.RunState {
	t.Helper()
	run, err := f.rt.GetState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestMemoryNoteThenQuery(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{ActorID: "alice"},
		step(durable.EffectMemoryNote, map[string]any{
			"note": "  The deploy uses blue/green rollout.  ", "tags": map[string]any{"topic": "deploy", "kind": "ignored"},
			"location": "Paris", "sources": map[string]any{"span_ids": []any{"s1", "s1", " "}, "message_ids": []any{int64(7)}},
		}),
		step(durable.EffectMemoryNote, map[string]any{"note": "Lunch is at noon.", "tags": map[string]any{"topic": "food"}}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "BLUE/GREEN"}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"topic": []any{"food", "x"}}, "return": "meta"}),
		// Indices count the spans newest first, as Python's query does.
		step(durable.EffectMemoryQuery, map[string]any{"span_id": "2", "return": "both"}),
		step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{1}, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"authors": []any{"ALICE"}, "locations": "paris", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "nothing like this"}),
	)
	mustComplete(t, run)

	note := res(t, run, 0)
	if note["name"] != "remember_note" || note["call_id"] != "memory" || note["success"] != true || note["error"] != nil {
		t.Fatalf("note result: %v", note)
	}
	id := metaOf(t, note)["span_id"].(string)
	if want := `Stored memory_note span_id=` + id + ` tags={"topic": "deploy"}`; note["output"] != want {
		t.Fatalf("output %q, want %q", note["output"], want)
	}
	spans := spansOf(run)
	if len(spans) != 2 {
		t.Fatalf("spans: %v", spans)
	}
	s0 := spans[0].(map[string]any)
	if s0["kind"] != "memory_note" || s0["artifact_id"] != id || s0["note_preview"] != "The deploy uses blue/green rollout." ||
		s0["location"] != "Paris" || s0["created_by"] != "alice" || s0["from_timestamp"] != s0["created_at"] {
		t.Fatalf("span record: %v", s0)
	}
	if src := s0["sources"].(map[string]any); src["run_id"] != run.RunID || len(src["span_ids"].([]any)) != 1 || src["message_ids"].([]any)[0] != "7" {
		t.Fatalf("sources: %v", src)
	}
	meta, content, err := f.arts.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Tags["kind"] != "memory_note" || meta.Tags["topic"] != "deploy" || meta.RunID != run.RunID {
		t.Fatalf("artifact meta: %+v", meta)
	}
	body, _ := pyjson.DecodeObject(content)
	if body["note"] != "The deploy uses blue/green rollout." || body["actor_id"] != "alice" || body["location"] != "Paris" {
		t.Fatalf("artifact body: %s", content)
	}

	q := res(t, run, 2)
	if q["name"] != "recall_memory" || q["meta"] != nil {
		t.Fatalf("query result: %v", q)
	}
	out := q["output"].(string)
	for _, want := range []string{
		"Recalled memory spans (provenance-preserving):", "[1] span_id=" + id + " kind=memory_note msgs= created_at=",
		"    note: The deploy uses blue/green rollout.", "    location: Paris", "    created_by: alice",
		"    tags: topic=deploy", "    sources.run_id: " + run.RunID, "    sources.span_ids: s1", "    time_range: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Lunch") {
		t.Errorf("query matched the wrong note:\n%s", out)
	}
	second := s1ID(spans)
	if got := spanIDs(t, res(t, run, 3)); len(got) != 1 || got[0] != second {
		t.Errorf("tag query: %v, want [%s]", got, second)
	}
	if res(t, run, 3)["output"] != "" {
		t.Errorf("meta mode output: %q", res(t, run, 3)["output"])
	}
	both := res(t, run, 4)
	if got := spanIDs(t, both); len(got) != 1 || got[0] != id || !strings.Contains(both["output"].(string), "blue/green") {
		t.Errorf("span_id \"2\": %v", both)
	}
	match := metaOf(t, both)["matches"].([]any)[0].(map[string]any)
	if match["kind"] != "memory_note" || match["note_preview"] == nil || match["location"] != "Paris" {
		t.Errorf("match meta: %v", match)
	}
	if got := spanIDs(t, res(t, run, 5)); len(got) != 1 || got[0] != second {
		t.Errorf("span_ids [1]: %v", got)
	}
	if got := spanIDs(t, res(t, run, 6)); len(got) != 1 || got[0] != id {
		t.Errorf("authors+locations: %v", got)
	}
	if res(t, run, 7)["output"] != "No matching memory spans." {
		t.Errorf("no match output: %q", res(t, run, 7)["output"])
	}
}

func s1ID(spans []any) string { return spans[1].(map[string]any)["artifact_id"].(string) }

func TestMemoryQueryNewestFirstLimitAndTimeRange(t *testing.T) {
	f := memSetup(t, true)
	var steps []map[string]any
	for i := 0; i < 4; i++ {
		steps = append(steps, step(durable.EffectMemoryNote, map[string]any{"note": fmt.Sprintf("note %d", i)}))
	}
	steps = append(steps,
		step(durable.EffectMemoryQuery, map[string]any{"query": "note", "limit_spans": 2, "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"since": "2099-01-01T00:00:00Z", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"until": "2000-01-01T00:00:00+00:00"}),
		step(durable.EffectMemoryQuery, map[string]any{"since": "2000-01-01", "return": "meta"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "note", "recall_level": "urgent", "limit_spans": 10, "return": "meta"}),
	)
	run := f.runSteps(t, runtime.StartParams{}, steps...)
	mustComplete(t, run)
	spans := spansOf(run)
	id := func(i int) string { return spans[i].(map[string]any)["artifact_id"].(string) }
	if got := spanIDs(t, res(t, run, 4)); len(got) != 2 || got[0] != id(3) || got[1] != id(2) {
		t.Errorf("newest first, limit 2: %v", got)
	}
	if got := spanIDs(t, res(t, run, 5)); len(got) != 0 {
		t.Errorf("since in the future: %v", got)
	}
	if res(t, run, 6)["output"] != "No matching memory spans." {
		t.Errorf("until in the past: %v", res(t, run, 6)["output"])
	}
	if got := spanIDs(t, res(t, run, 7)); len(got) != 4 {
		t.Errorf("since in the past: %v", got)
	}
	urgent := metaOf(t, res(t, run, 8))
	if got := spanIDs(t, res(t, run, 8)); len(got) != 3 {
		t.Errorf("urgent clamps limit_spans to 3: %v", got)
	}
	eff := urgent["effort"].(map[string]any)
	applied := eff["applied"].(map[string]any)
	if eff["recall_level"] != "urgent" || applied["limit_spans"] != int64(3) || applied["deep"] != false || applied["max_messages"] != int64(30) {
		t.Errorf("effort: %v", eff)
	}
	// Python's words, and its clamps of the defaults over the level's caps.
	if w := urgent["warnings"].([]any); len(w) != 5 || w[0] != "recall_level=urgent: clamped limit_spans from 10 to 3" ||
		w[1] != "recall_level=urgent: deep scan disabled (not allowed at this level)" {
		t.Errorf("warnings: %v", w)
	}
}

func TestMemoryQueryDeepScansConversationSpans(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	// A conversation span archived the way MEMORY_COMPACT archives one.
	meta, err := artifact.PutJSON(ctx, f.arts, map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "What is the launch codename?", "timestamp": "2026-01-01T00:00:00+00:00"},
		map[string]any{"role": "assistant", "content": "It is PELICAN."},
	}}, artifact.PutParams{Tags: map[string]string{"kind": "conversation_span"}})
	if err != nil {
		t.Fatal(err)
	}
	span := map[string]any{"kind": "conversation_span", "artifact_id": meta.ArtifactID, "created_at": "2026-01-01T00:00:01+00:00",
		"from_timestamp": "2026-01-01T00:00:00+00:00", "to_timestamp": "2026-01-01T00:00:01+00:00", "message_count": int64(2),
		"tags": map[string]any{"topic": "launch"}}
	evidence := map[string]any{"kind": "evidence", "artifact_id": "ev1", "created_at": "2026-01-01T00:00:02+00:00"}
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{span, evidence}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryQuery, map[string]any{"query": "pelican"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "pelican", "deep": false}),
		step(durable.EffectMemoryQuery, map[string]any{"span_id": meta.ArtifactID, "max_messages": 1}),
		step(durable.EffectMemoryQuery, map[string]any{"return": "meta"}),
	)
	mustComplete(t, run)
	out := res(t, run, 0)["output"].(string)
	for _, want := range []string{"kind=conversation_span msgs=2", "    - 2026-01-01T00:00:00+00:00 user: What is the launch codename?",
		"    - assistant: It is PELICAN."} {
		if !strings.Contains(out, want) {
			t.Errorf("deep query output lacks %q:\n%s", want, out)
		}
	}
	if res(t, run, 1)["output"] != "No matching memory spans." {
		t.Errorf("deep=false must not scan messages: %v", res(t, run, 1)["output"])
	}
	if out := res(t, run, 2)["output"].(string); !strings.Contains(out, "(remaining 1 messages omitted by max_messages=1)") {
		t.Errorf("max_messages: %s", out)
	}
	if got := spanIDs(t, res(t, run, 3)); len(got) != 1 || got[0] != meta.ArtifactID {
		t.Errorf("evidence must be excluded: %v", got)
	}
}

func TestMemoryTagMergeReplaceAndErrors(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{ActorID: "bob"},
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "tags": map[string]any{"topic": "a", "person": "p"}}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": 1, "tags": map[string]any{"topic": "b", "kind": "x"}}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"topic": "b"}, "return": "meta"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": "1", "tags": map[string]any{"project": "z"}, "merge": false}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"project": "z", "person": "nobody"}, "tags_mode": "or", "return": "meta"}),
	)
	mustComplete(t, run)
	tag := res(t, run, 1)
	if tag["name"] != "remember" || tag["call_id"] != "memory" {
		t.Fatalf("tag result: %v", tag)
	}
	applied := metaOf(t, tag)["applied"].([]any)[0].(map[string]any)
	tags := applied["tags"].(map[string]any)
	if applied["run_id"] != run.RunID || tags["topic"] != "b" || tags["person"] != "p" || len(tags) != 2 {
		t.Fatalf("merge: %v", applied)
	}
	if !strings.HasPrefix(tag["output"].(string), "Tagged span_id=") || !strings.Contains(tag["output"].(string),
		`scope=run runs=[`+run.RunID+`] tags={"person": "p", "topic": "b"}`) {
		t.Fatalf("tag output: %q", tag["output"])
	}
	if got := spanIDs(t, res(t, run, 2)); len(got) != 1 {
		t.Errorf("query by merged tag: %v", got)
	}
	span := spansOf(run)[0].(map[string]any)
	if tags := span["tags"].(map[string]any); len(tags) != 1 || tags["project"] != "z" {
		t.Errorf("replace: %v", span["tags"])
	}
	if span["tagged_by"] != "bob" || span["tagged_at"] == nil {
		t.Errorf("tag stamp: %v", span)
	}
	if got := spanIDs(t, res(t, run, 4)); len(got) != 1 {
		t.Errorf("tags_mode any: %v", got)
	}

	for _, c := range []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"span_id": "nope", "tags": map[string]any{"a": "b"}}, "Unknown span_id: nope"},
		{map[string]any{"span_id": 9, "tags": map[string]any{"a": "b"}}, "Unknown span index: 9"},
		{map[string]any{"tags": map[string]any{"a": "b"}}, "MEMORY_TAG requires payload.span_id"},
		{map[string]any{"span_id": "x", "tags": map[string]any{"kind": "b"}}, "MEMORY_TAG requires at least one non-empty string tag"},
		{map[string]any{"span_id": 1, "scope": "all", "tags": map[string]any{"a": "b"}}, "requires span_id as artifact id"},
		{map[string]any{"span_id": "x", "scope": "galaxy", "tags": map[string]any{"a": "b"}}, "Unknown memory_tag scope: galaxy"},
	} {
		bad := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryTag, c.payload))
		if bad.Status != durable.RunFailed || !strings.Contains(bad.Error, c.want) {
			t.Errorf("%v: status %s error %q, want %q", c.payload, bad.Status, bad.Error, c.want)
		}
	}
}

func TestMemorySessionScope(t *testing.T) {
	f := memSetup(t, true)
	run1 := f.runSteps(t, runtime.StartParams{SessionID: "s1"},
		step(durable.EffectMemoryNote, map[string]any{"note": "The user prefers tea.", "scope": "session"}))
	mustComplete(t, run1)
	id := metaOf(t, res(t, run1, 0))["span_id"].(string)
	if len(spansOf(run1)) != 0 {
		t.Fatalf("session note must not be in the run's own index")
	}
	owner := f.state(t, "session_memory_s1")
	if owner.WorkflowID != "__session_memory__" || owner.Status != durable.RunCompleted || owner.CurrentNode != "done" ||
		owner.SessionID != "s1" || len(spansOf(owner)) != 1 || owner.Output["messages"] == nil {
		t.Fatalf("owner: %+v", owner)
	}
	if meta, err := f.arts.Metadata(context.Background(), id); err != nil || meta.RunID != "session_memory_s1" {
		t.Fatalf("artifact run id: %v %v", meta, err)
	}

	run2 := f.runSteps(t, runtime.StartParams{SessionID: "s1"},
		step(durable.EffectMemoryQuery, map[string]any{"query": "tea", "scope": "session"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "tea"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "tea", "scope": "all", "return": "meta"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "Second.", "scope": "session"}),
		step(durable.EffectMemoryTag, map[string]any{"span_id": id, "scope": "session", "tags": map[string]any{"topic": "drinks"}}),
	)
	mustComplete(t, run2)
	if !strings.Contains(res(t, run2, 0)["output"].(string), "note: The user prefers tea.") {
		t.Errorf("second run of the session must see the note: %v", res(t, run2, 0)["output"])
	}
	if res(t, run2, 1)["output"] != "No matching memory spans." {
		t.Errorf("scope run must not see session notes")
	}
	if got := spanIDs(t, res(t, run2, 2)); len(got) != 1 || got[0] != id {
		t.Errorf("scope all: %v", got)
	}
	owner = f.state(t, "session_memory_s1")
	if spans := spansOf(owner); len(spans) != 2 || spans[0].(map[string]any)["tags"].(map[string]any)["topic"] != "drinks" {
		t.Errorf("owner after note+tag: %v", spans)
	}

	// An id outside [A-Za-z0-9_-] is hashed.
	run3 := f.runSteps(t, runtime.StartParams{SessionID: "a b/c"},
		step(durable.EffectMemoryNote, map[string]any{"note": "x", "scope": "session"}))
	mustComplete(t, run3)
	want := runtime.SessionMemoryRunID("a b/c")
	if !strings.HasPrefix(want, "session_memory_sha_") || len(want) != len("session_memory_sha_")+32 {
		t.Fatalf("hashed owner id %q", want)
	}
	if o := f.state(t, want); o.SessionID != "a b/c" || len(spansOf(o)) != 1 {
		t.Errorf("hashed owner: %+v", o)
	}
}

func TestMemorySessionScopeWithoutSessionUsesRoot(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	root := f.runSteps(t, runtime.StartParams{})
	mustComplete(t, root)
	mid, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "mem", ParentRunID: root.RunID})
	if err != nil {
		t.Fatal(err)
	}
	leaf := f.runSteps(t, runtime.StartParams{ParentRunID: mid},
		step(durable.EffectMemoryNote, map[string]any{"note": "rooted", "scope": "session"}),
		step(durable.EffectMemoryQuery, map[string]any{"query": "rooted", "scope": "session", "return": "meta"}),
	)
	mustComplete(t, leaf)
	if spans := spansOf(f.state(t, root.RunID)); len(spans) != 1 {
		t.Fatalf("root spans: %v", spans)
	}
	if got := spanIDs(t, res(t, leaf, 1)); len(got) != 1 {
		t.Errorf("query through root: %v", got)
	}
}

func TestMemoryGlobalScope(t *testing.T) {
	f := memSetup(t, true)
	run1 := f.runSteps(t, runtime.StartParams{SessionID: "a"},
		step(durable.EffectMemoryNote, map[string]any{"note": "Company holiday on Friday.", "scope": "global", "tags": map[string]any{"topic": "hr"}}))
	mustComplete(t, run1)
	owner := f.state(t, "global_memory")
	if owner.WorkflowID != "__global_memory__" || owner.SessionID != "" || len(spansOf(owner)) != 1 {
		t.Fatalf("global owner: %+v", owner)
	}
	run2 := f.runSteps(t, runtime.StartParams{SessionID: "b"},
		step(durable.EffectMemoryQuery, map[string]any{"query": "holiday", "scope": "global"}),
		step(durable.EffectMemoryQuery, map[string]any{"tags": map[string]any{"topic": "hr"}, "scope": "all", "return": "meta"}),
	)
	mustComplete(t, run2)
	if !strings.Contains(res(t, run2, 0)["output"].(string), "Company holiday") {
		t.Errorf("global query: %v", res(t, run2, 0)["output"])
	}
	if got := spanIDs(t, res(t, run2, 1)); len(got) != 1 {
		t.Errorf("scope all: %v", got)
	}

	t.Setenv(runtime.GlobalMemoryRunEnv, "tenant_memory")
	run3 := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "x", "scope": "global"}))
	mustComplete(t, run3)
	if o := f.state(t, "tenant_memory"); o.WorkflowID != "__global_memory__" {
		t.Errorf("override owner: %+v", o)
	}
}

func TestMemoryErrors(t *testing.T) {
	f := memSetup(t, true)
	for _, c := range []struct {
		typ     durable.EffectType
		payload map[string]any
		want    string
	}{
		{durable.EffectMemoryNote, map[string]any{"note": "   "}, "MEMORY_NOTE requires payload.note (non-empty string)"},
		{durable.EffectMemoryNote, map[string]any{"note": "x", "scope": "all"}, "Unknown memory scope: all"},
		{durable.EffectMemoryNote, map[string]any{"note": "x", "target_run_id": "ghost"}, "Unknown target_run_id: ghost"},
		{durable.EffectMemoryQuery, map[string]any{"scope": "nowhere"}, "Unknown memory_query scope: nowhere"},
		{durable.EffectMemoryQuery, map[string]any{"return": "xml"}, "Unknown memory_query return mode: xml"},
		{durable.EffectMemoryQuery, map[string]any{"recall_level": "fast"}, "Unknown recall_level: fast"},
		{durable.EffectMemoryQuery, map[string]any{"scope": "all", "span_ids": []any{"3"}}, "requires explicit span_ids as artifact ids"},
		{durable.EffectMemoryRehydrate, map[string]any{}, "MEMORY_REHYDRATE requires payload.span_ids"},
	} {
		run := f.runSteps(t, runtime.StartParams{}, step(c.typ, c.payload))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, c.want) {
			t.Errorf("%s %v: status %s error %q, want %q", c.typ, c.payload, run.Status, run.Error, c.want)
		}
	}
	// As in Python, an explicit id nothing has is kept and rendered as
	// unavailable; an index out of range is dropped; nothing is warned.
	run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryQuery, map[string]any{"span_ids": []any{"ghost", 4}, "return": "both"}))
	mustComplete(t, run)
	r := res(t, run, 0)
	if got := spanIDs(t, r); len(got) != 1 || got[0] != "ghost" || metaOf(t, r)["warnings"] != nil ||
		!strings.Contains(r["output"].(string), "[1] span_id=ghost kind=span") ||
		!strings.Contains(r["output"].(string), "(artifact payload unavailable)") {
		t.Errorf("unknown explicit ids: %v", r)
	}

	noArts := memSetup(t, false)
	for _, typ := range []durable.EffectType{durable.EffectMemoryNote, durable.EffectMemoryQuery, durable.EffectMemoryRehydrate} {
		run := noArts.runSteps(t, runtime.StartParams{}, step(typ, map[string]any{"note": "x", "span_ids": []any{"a"}}))
		want := strings.ToUpper(string(typ)) + " requires an ArtifactStore; "
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, want) {
			t.Errorf("%s without artifact store: %s %q", typ, run.Status, run.Error)
		}
	}
	// MEMORY_TAG works without an artifact store.
	vars := map[string]any{"_runtime": map[string]any{"memory_spans": []any{
		map[string]any{"kind": "conversation_span", "artifact_id": "span1", "created_at": "2026-01-01T00:00:00+00:00"},
	}}}
	run = noArts.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryTag, map[string]any{"span_id": "span1", "tags": map[string]any{"topic": "t"}}))
	mustComplete(t, run)
	if tags := spansOf(run)[0].(map[string]any)["tags"].(map[string]any); tags["topic"] != "t" {
		t.Errorf("tag without artifact store: %v", tags)
	}
}

func TestMemoryNoteKeepInContextAndRehydrate(t *testing.T) {
	f := memSetup(t, true)
	vars := map[string]any{"context": map[string]any{"messages": []any{
		map[string]any{"role": "system", "content": "You are helpful."},
		map[string]any{"role": "user", "content": "hi"},
	}}}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryNote, map[string]any{"note": "Remember the milk.", "keep_in_context": "yes"}),
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{1}, "placement": "after_system"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "Session fact.", "scope": "session", "keepInContext": true}),
	)
	mustComplete(t, run)
	meta := metaOf(t, res(t, run, 0))
	id := meta["span_id"].(string)
	kept := meta["kept_in_context"].(map[string]any)
	if kept["inserted"] != int64(1) || kept["skipped"] != int64(0) {
		t.Fatalf("kept_in_context: %v", kept)
	}
	msgs := run.Vars["context"].(map[string]any)["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("messages: %v", msgs)
	}
	m := msgs[2].(map[string]any)
	md := m["metadata"].(map[string]any)
	if m["role"] != "system" || m["content"] != "[MEMORY NOTE]\nRemember the milk." || md["message_id"] != "memory_note:"+id ||
		md["kind"] != "memory_note" || md["source_artifact_id"] != id || md["rehydrated"] != true {
		t.Fatalf("inserted message: %v", m)
	}
	// Rehydrating the same note again is deduplicated.
	rh, ok := run.Vars["r1"].(map[string]any)
	if !ok || rh["inserted"] != int64(0) || rh["skipped"] != int64(1) {
		t.Fatalf("rehydrate result: %v", run.Vars["r1"])
	}
	a := rh["artifacts"].([]any)[0].(map[string]any)
	if a["span_id"] != id || a["kind"] != "memory_note" || a["error"] != nil {
		t.Errorf("rehydrate artifact entry: %v", a)
	}
	// A session-scoped note kept in context goes into this run's messages.
	last := msgs[3].(map[string]any)
	if last["content"] != "[MEMORY NOTE]\nSession fact." {
		t.Errorf("session note kept in context: %v", last)
	}
}

func TestMemoryRehydrateConversationSpan(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	meta, err := artifact.PutJSON(ctx, f.arts, map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "old question", "metadata": map[string]any{"message_id": "m1"}},
		map[string]any{"role": "assistant", "content": "old answer", "metadata": map[string]any{"message_id": "m2"}},
	}}, artifact.PutParams{})
	if err != nil {
		t.Fatal(err)
	}
	span := map[string]any{"kind": "conversation_span", "artifact_id": meta.ArtifactID, "created_at": "2026-01-01T00:00:00+00:00"}
	ev := map[string]any{"kind": "evidence", "artifact_id": "ev1", "created_at": "2026-01-01T00:00:00+00:00"}
	vars := map[string]any{
		"_runtime": map[string]any{"memory_spans": []any{span, ev}},
		"context": map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "system", "content": "[CONVERSATION HISTORY SUMMARY]", "metadata": map[string]any{
				"kind": "memory_summary", "source_artifact_id": meta.ArtifactID}},
			map[string]any{"role": "system", "content": "other system"},
			map[string]any{"role": "user", "content": "new", "metadata": map[string]any{"message_id": "m2"}},
		}},
	}
	run := f.runSteps(t, runtime.StartParams{Vars: vars},
		step(durable.EffectMemoryRehydrate, map[string]any{"span_ids": []any{meta.ArtifactID, "ev1"}, "recall_level": "urgent", "max_messages": 100}))
	mustComplete(t, run)
	r := run.Vars["r0"].(map[string]any)
	if r["inserted"] != int64(1) || r["skipped"] != int64(1) {
		t.Fatalf("result: %v", r)
	}
	arts := r["artifacts"].([]any)
	if len(arts) != 2 || arts[1].(map[string]any)["kind"] != "evidence" {
		t.Errorf("artifacts: %v", arts)
	}
	if r["effort"].(map[string]any)["applied"].(map[string]any)["max_messages"] != int64(60) || len(r["warnings"].([]any)) != 1 {
		t.Errorf("effort: %v %v", r["effort"], r["warnings"])
	}
	msgs := run.Vars["context"].(map[string]any)["messages"].([]any)
	if len(msgs) != 5 || msgs[2].(map[string]any)["content"] != "old question" {
		t.Errorf("after_summary placement: %v", msgs)
	}
}

// TestMemoryBusyOwner: a sync child whose session owner is its parent
// (no session id) cannot write into the parent while the parent's tick
// runs it; the effect fails instead of deadlocking or breaking the parent.
func TestMemoryBusyOwner(t *testing.T) {
	f := memSetup(t, true)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "parent", Vars: map[string]any{"child_steps": []any{
		step(durable.EffectMemoryNote, map[string]any{"note": "x", "scope": "session"}),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var run *durable.RunState
	go func() {
		defer close(done)
		run, err = f.rt.Tick(ctx, id, runtime.TickOptions{})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock: tick did not return")
	}
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "busy") {
		t.Fatalf("parent: %s %q", run.Status, run.Error)
	}
}

// memRunnerA is runner "a" (claims on) over a fresh memory store, with a
// started "mem" run of no steps for memory writes to target.
func memRunnerA(t *testing.T) (rt *runtime.Runtime, st *memory.Store, target string) {
	t.Helper()
	st = memory.New()
	reg, _ := runtime.NewRegistry(memWorkflows()...)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: artifact.NewMemory(), Claims: &runtime.Claims{Owner: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	target, err = rt.Start(context.Background(), runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"steps": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st, target
}

// tickSteps starts a "mem" run of steps on rt and ticks it once.
func tickSteps(t *testing.T, rt *runtime.Runtime, steps ...map[string]any) *durable.RunState {
	t.Helper()
	list := make([]any, len(steps))
	for i, s := range steps {
		list[i] = s
	}
	return wevStartTick(t, rt, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"steps": list}})
}

// TestMemoryOwnerHeldByAnotherRunner: with several runners, a memory
// write into a run another runner holds fails as busy (the caller may
// retry) instead of committing beside that runner's tick; once it lets go
// the write goes through.
func TestMemoryOwnerHeldByAnotherRunner(t *testing.T) {
	ctx := context.Background()
	rt, st, owner := memRunnerA(t)
	note := func() *durable.RunState {
		return tickSteps(t, rt, step(durable.EffectMemoryNote, map[string]any{"note": "x", "target_run_id": owner}))
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: owner, Owner: "b", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if run := note(); run.Status != durable.RunFailed || !strings.Contains(run.Error, "another runner") {
		t.Fatalf("note into a run held elsewhere: %s %q", run.Status, run.Error)
	}
	if err := st.RunRelease(ctx, owner, "b"); err != nil {
		t.Fatal(err)
	}
	if run := note(); run.Status != durable.RunCompleted {
		t.Fatalf("note once released: %s %q", run.Status, run.Error)
	}
}

// conflictStore refuses the first update of a chosen run with a version
// conflict, as if another process had written it meanwhile.
type conflictStore struct {
	store.Store
	mu      sync.Mutex
	runID   string
	pending int
}

func (s *conflictStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	hit := p.Run.RunID == s.runID && !p.Create && s.pending > 0
	if hit {
		s.pending--
	}
	s.mu.Unlock()
	if hit {
		return fmt.Errorf("injected: %w", store.ErrConflict)
	}
	return s.Store.RunCommit(ctx, p)
}

func TestMemoryOwnerWritesRetryConflictsAndConcurrentWriters(t *testing.T) {
	cs := &conflictStore{Store: memory.New(), runID: "global_memory"}
	f := memSetupStore(t, cs, true)
	mustComplete(t, f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryNote, map[string]any{"note": "first", "scope": "global"})))
	cs.mu.Lock()
	cs.pending = 2
	cs.mu.Unlock()
	mustComplete(t, f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryNote, map[string]any{"note": "second", "scope": "global"})))
	if n := len(spansOf(f.state(t, "global_memory"))); n != 2 {
		t.Fatalf("spans after conflicts: %d", n)
	}

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryNote, map[string]any{"note": fmt.Sprintf("n%d", i), "scope": "global"}))
			if run.Status != durable.RunCompleted {
				t.Errorf("concurrent note: %s %q", run.Status, run.Error)
			}
		}()
	}
	wg.Wait()
	if n := len(spansOf(f.state(t, "global_memory"))); n != 10 {
		t.Fatalf("spans after concurrent writers: %d", n)
	}
}
