package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// feBuiltinTypes are the built-in effect types the fuzz targets pick from.
var feBuiltinTypes = []durable.EffectType{
	durable.EffectAskUser, durable.EffectAnswerUser, durable.EffectWaitEvent,
	durable.EffectWaitUntil, durable.EffectEmitEvent, durable.EffectStartSubworkflow,
	durable.EffectVarsQuery, durable.EffectMemoryNote, durable.EffectMemoryQuery,
	durable.EffectMemoryTag, durable.EffectMemoryCompact, durable.EffectMemoryRehydrate,
}

const (
	feRunID   = "run-1"
	feSession = "s1"
)

var feNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// feWorkflows: "fz" notes a memory span (so that the memory effects have
// something to find), then asks for the fuzzed effect, then completes
// with what it finds at the result key. "child" is the registered
// subworkflow: it waits for a person when its vars ask it to, else
// completes with its vars.
func feWorkflows(eff *durable.Effect) []*runtime.Workflow {
	main := &runtime.Workflow{ID: "fz", Entry: "pre", Nodes: map[string]runtime.NodeFunc{
		"pre": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote,
				Payload: map[string]any{"note": "hello world", "tags": map[string]any{"topic": "greeting"}}, ResultKey: "_temp.pre"}, "n")
		}),
		"n": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(eff.Clone(), "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			v, found := feGetPath(run.Vars, eff.ResultKey)
			return runtime.Complete(map[string]any{"rk": v, "found": found})
		}),
	}}
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			if run.Vars["ask"] != nil {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "child?"}, ResultKey: "a"}, "d")
			}
			return runtime.Complete(map[string]any{"child": true, "x": run.Vars["x"]})
		}),
		"d": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"answered": run.Vars["a"]})
		}),
	}}
	return []*runtime.Workflow{main, child}
}

// feGetPath reads a dotted path as SetPath writes it.
func feGetPath(vars map[string]any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	cur := vars
	for {
		i := strings.IndexByte(path, '.')
		if i < 0 {
			v, ok := cur[path]
			return v, ok
		}
		next, ok := cur[path[:i]].(map[string]any)
		if !ok {
			return nil, false
		}
		cur, path = next, path[i+1:]
	}
}

func feJSON(v any) string {
	b, err := pyjson.Marshal(v, pyjson.Canonical)
	if err != nil {
		return fmt.Sprintf("<not JSON: %v>", err)
	}
	return string(b)
}

func feErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// feOutcome is what one store's run of the scenario gave.
type feOutcome struct {
	steps  []string // per call: status, error, output, call error
	vars   string
	ledger []string
}

type feScenario struct {
	eff        *durable.Effect
	resume     map[string]any
	viaEmit    bool
	initVars   map[string]any
	checkValue bool // the result key is the fuzzed effect's alone
}

func feRuntime(t *testing.T, st store.Store, sc *feScenario) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(feWorkflows(sc.eff)...)
	if err != nil {
		t.Fatal(err)
	}
	var ids atomic.Int64
	llm := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"model": "scripted",
			"content": `{"summary": "They talked.", "key_points": ["k"], "confidence": 0.5}`}), nil
	}}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: artifact.NewMemory(),
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm},
		Clock:    func() time.Time { return feNow },
		NewID:    func() string { return fmt.Sprintf("id-%d", ids.Add(1)) },
		Sleep:    func(ctx context.Context, d time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// feCheckStored requires the stored run to equal what a call returned,
// and checks the properties every state must have.
func feCheckStored(t *testing.T, ctx context.Context, st store.Store, what string, got *durable.RunState) *durable.RunState {
	t.Helper()
	stored, err := st.RunGet(ctx, feRunID)
	if err != nil {
		t.Fatalf("%s: reloading the run: %v", what, err)
	}
	if got != nil {
		if got.Status != stored.Status || got.Error != stored.Error || feJSON(got.Output) != feJSON(stored.Output) ||
			feJSON(got.Vars) != feJSON(stored.Vars) {
			t.Fatalf("%s: the call returned %s (error %q, output %s) but the store holds %s (error %q, output %s)\nvars (returned, stored): %s",
				what, got.Status, got.Error, feJSON(got.Output), stored.Status, stored.Error, feJSON(stored.Output),
				feDiff(feJSON(got.Vars), feJSON(stored.Vars)))
		}
		if got.Status == durable.RunWaiting && feJSON(got.Waiting.Map()) != feJSON(stored.Waiting.Map()) {
			t.Fatalf("%s: the call returned the wait %s but the store holds %s", what, feJSON(got.Waiting.Map()), feJSON(stored.Waiting.Map()))
		}
	}
	if stored.Status == durable.RunFailed && strings.TrimSpace(stored.Error) == "" {
		t.Fatalf("%s: run failed with no error recorded", what)
	}
	if strings.Contains(stored.Error, "panic") {
		t.Fatalf("%s: a built-in handler panicked: %s", what, stored.Error)
	}
	if stored.Status == durable.RunWaiting && stored.Waiting == nil {
		t.Fatalf("%s: run waiting with no wait stored", what)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: feRunID})
	if err != nil {
		t.Fatalf("%s: ledger: %v", what, err)
	}
	terminal := 0
	for i, r := range recs {
		if strings.Contains(r.Error, "panic") {
			t.Fatalf("%s: ledger record %d (%s %s): a built-in handler panicked: %s", what, i, r.NodeID, r.Status, r.Error)
		}
		if runtime.IsTerminalStatusRecord(r) {
			terminal++
			if i != len(recs)-1 {
				t.Fatalf("%s: terminal status record at %d of %d", what, i, len(recs))
			}
			if txt := feJSON(r.Effect.Payload["payload"]); txt != feJSON(map[string]any{"text": string(stored.Status)}) {
				t.Fatalf("%s: terminal status record %s for a run %s", what, txt, stored.Status)
			}
		}
	}
	if stored.Status.Terminal() != (terminal == 1) || terminal > 1 {
		t.Fatalf("%s: run %s with %d terminal status records", what, stored.Status, terminal)
	}
	return stored
}

func feSummary(recs []*durable.StepRecord) []string {
	var out []string
	for _, r := range recs {
		typ := "-"
		if r.Effect != nil {
			typ = string(r.Effect.Type)
		}
		out = append(out, fmt.Sprintf("%s %s %s a%d key=%q err=%q result=%s", r.NodeID, typ, r.Status, r.Attempt,
			r.IdempotencyKey, r.Error, feJSON(r.Result)))
	}
	return out
}

// fePlay runs the scenario on st and returns what it gave.
func fePlay(t *testing.T, st store.Store, sc *feScenario) feOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rt := feRuntime(t, st, sc)
	var out feOutcome
	step := func(what string, got *durable.RunState, err error) *durable.RunState {
		if ctx.Err() != nil {
			t.Fatalf("%s: did not return within its deadline (hang): %v", what, err)
		}
		stored := feCheckStored(t, ctx, st, what, got)
		out.steps = append(out.steps, fmt.Sprintf("%s: %s error=%q output=%s callerr=%q", what, stored.Status, stored.Error, feJSON(stored.Output), feErr(err)))
		return stored
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "fz", RunID: feRunID, SessionID: feSession, Vars: pyjson.CloneObject(sc.initVars)}); err != nil {
		t.Fatalf("start: %v", err)
	}
	got, err := rt.Tick(ctx, feRunID, runtime.TickOptions{})
	run := step("tick", got, err)
	if err == nil && run.Status == durable.RunRunning {
		t.Fatalf("tick returned no error but left the run running at node %s", run.CurrentNode)
	}
	if err != nil && run.Status == durable.RunRunning {
		t.Logf("tick error with the run left running: %v", err)
	}
	var completedResult any
	var completed bool
	recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: feRunID})
	for _, r := range recs {
		if r.NodeID == "n" && r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == sc.eff.Type {
			completedResult, completed = r.Result, true
		}
	}
	if run.Status == durable.RunCompleted && completed && sc.checkValue && completedResult != nil {
		if rk := feJSON(mapOf(run.Output)["rk"]); rk != feJSON(completedResult) {
			t.Fatalf("the effect completed with %s but the value at result key %q is %s", feJSON(completedResult), sc.eff.ResultKey, rk)
		}
	}
	if run.Status == durable.RunWaiting && (run.Waiting.Reason == durable.WaitUser || run.Waiting.Reason == durable.WaitEvent) {
		w := run.Waiting
		before := run.Version
		emitted := false
		if sc.viaEmit && w.Reason == durable.WaitEvent {
			for _, c := range []struct{ scope, sid string }{{"session", feSession}, {"workflow", "fz"}, {"run", feRunID}, {"global", "global"}} {
				prefix := "evt:" + c.scope + ":" + c.sid + ":"
				if !strings.HasPrefix(w.WaitKey, prefix) {
					continue
				}
				name := strings.TrimPrefix(w.WaitKey, prefix)
				if name == "" || name == "*" || strings.TrimSpace(name) != name {
					break
				}
				ids, eerr := rt.EmitEvent(ctx, runtime.EmitParams{Name: name, Scope: c.scope, SessionID: feSession,
					WorkflowID: "fz", RunID: feRunID, Payload: pyjson.CloneObject(sc.resume)})
				after := step("emit", nil, eerr)
				if eerr == nil {
					if len(ids) != 1 || ids[0] != feRunID {
						t.Fatalf("EmitEvent of %q (scope %s) to a run waiting on %q delivered to %v", name, c.scope, w.WaitKey, ids)
					}
					if after.Status == durable.RunWaiting && after.Waiting != nil && after.Waiting.WaitKey == w.WaitKey && after.Version == before {
						t.Fatalf("EmitEvent delivered to the run but it still waits on %q unchanged", w.WaitKey)
					}
				} else if after.Version != before {
					t.Fatalf("EmitEvent failed (%v) but the run changed (version %d to %d, %s)", eerr, before, after.Version, after.Status)
				}
				emitted = true
				break
			}
		}
		if !emitted {
			got, rerr := rt.Resume(ctx, runtime.ResumeParams{RunID: feRunID, WaitKey: w.WaitKey, Payload: pyjson.CloneObject(sc.resume)})
			after := step("resume", got, rerr)
			if rerr != nil {
				if after.Version != before || after.Status != durable.RunWaiting {
					t.Fatalf("Resume failed (%v) but the run changed (version %d to %d, %s)", rerr, before, after.Version, after.Status)
				}
				if !strings.Contains(rerr.Error(), "payload") {
					t.Fatalf("Resume refused with an error that does not name the payload: %v", rerr)
				}
			} else {
				if after.Status == durable.RunRunning {
					t.Fatalf("Resume returned no error but left the run running at node %s", after.CurrentNode)
				}
				if after.Status == durable.RunCompleted && sc.checkValue && sc.eff.Type != durable.EffectStartSubworkflow {
					if rk := feJSON(mapOf(after.Output)["rk"]); rk != feJSON(sc.resume) {
						t.Fatalf("resumed with %s but the value at result key %q is %s", feJSON(sc.resume), sc.eff.ResultKey, rk)
					}
				}
				// A wait is answered at most once.
				_, again := rt.Resume(ctx, runtime.ResumeParams{RunID: feRunID, WaitKey: w.WaitKey, Payload: pyjson.CloneObject(sc.resume)})
				var stale *runtime.StaleResumeError
				final := step("resume again", nil, again)
				if !errors.As(again, &stale) && !(final.Status == durable.RunWaiting && final.Waiting != nil && final.Waiting.WaitKey == w.WaitKey) {
					t.Fatalf("a second resume of %q: error %v, want a StaleResumeError", w.WaitKey, again)
				}
				if final.Version != after.Version && stale != nil {
					t.Fatalf("a refused second resume changed the run (version %d to %d)", after.Version, final.Version)
				}
			}
		}
	}
	if run.Status == durable.RunWaiting && run.Waiting.Reason == durable.WaitSubworkflow {
		// A sync or async+wait child that waits for a person: answer it,
		// and its end must reach the parent.
		childID, _ := run.Waiting.Details["sub_run_id"].(string)
		child, cerr := st.RunGet(ctx, childID)
		if cerr != nil {
			t.Fatalf("the parent waits on child %q, which cannot be read: %v", childID, cerr)
		}
		if child.Status == durable.RunWaiting && child.Waiting != nil && child.Waiting.Reason == durable.WaitUser {
			cgot, rerr := rt.Resume(ctx, runtime.ResumeParams{RunID: childID, WaitKey: child.Waiting.WaitKey, Payload: pyjson.CloneObject(sc.resume)})
			if ctx.Err() != nil {
				t.Fatalf("resume of the child did not return within its deadline (hang): %v", rerr)
			}
			parent := step("child resume", nil, rerr)
			cstored, _ := st.RunGet(ctx, childID)
			if cgot != nil && cgot.Status != cstored.Status {
				t.Fatalf("child resume returned %s, the store holds %s", cgot.Status, cstored.Status)
			}
			if rerr == nil && cstored.Status.Terminal() && parent.Status != durable.RunCompleted && parent.Status != durable.RunFailed {
				t.Fatalf("the child ended %s but its parent is %s (wait %v)", cstored.Status, parent.Status, parent.Waiting)
			}
			out.steps = append(out.steps, fmt.Sprintf("child: %s error=%q output=%s", cstored.Status, cstored.Error, feJSON(cstored.Output)))
		}
	}
	final, err := st.RunGet(ctx, feRunID)
	if err != nil {
		t.Fatal(err)
	}
	out.vars = feJSON(feScrub(pyjson.Clone(final.Vars)))
	recs, _ = st.LedgerList(ctx, &store.LedgerListParams{RunID: feRunID})
	out.ledger = feSummary(recs)
	return out
}

// feScrub drops the wall-clock durations of the node traces, which
// differ between any two runs.
func feScrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "duration_ms")
		for _, c := range x {
			feScrub(c)
		}
	case []any:
		for _, c := range x {
			feScrub(c)
		}
	}
	return v
}

// feDiff shows where a and b first differ.
// feSQLite opens a throw-away SQLite store, closed with the test; without
// syncs, as the targets compare outcomes, not durability.
func feSQLite(t *testing.T) store.Store {
	t.Helper()
	lite, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite"), Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	return lite
}

// feStoresAgree plays on a fresh in-memory store, then on a fresh SQLite
// one, and fails when their transcripts differ.
func feStoresAgree(t *testing.T, play func(st store.Store) []string) {
	t.Helper()
	mem := memory.New()
	defer mem.Close()
	a := play(mem)
	b := play(feSQLite(t))
	if x, y := strings.Join(a, "\n"), strings.Join(b, "\n"); x != y {
		t.Fatalf("the stores disagree (memory, then sqlite): %s", feDiff(x, y))
	}
}

func feDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("first difference at %d:\n  %s\n  %s", i, a[lo:min(len(a), i+300)], b[lo:min(len(b), i+300)])
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// FuzzBuiltinEffectStoresAgree runs a workflow whose node asks for a
// built-in effect (type, payload and result key fuzzed), ticks it and,
// when it waits on a person or an event, answers it (Resume, or EmitEvent
// for an event wait when viaEmit), on the in-memory store and on SQLite.
// Properties: no call hangs; what each call returned is what the store
// holds; a run never stays running after a call that returned no error; a
// failed run has an error; no handler panicked; the ledger holds exactly
// one terminal status record, last, for an ended run (none otherwise),
// naming its status; a completed effect's result (or a resume's payload)
// is what the next node reads at the result key; a refused resume or
// event changes nothing and names the payload; a second resume of the
// same wait is a StaleResumeError that changes nothing; and both stores
// give the same steps, vars and ledger.
func FuzzBuiltinEffectStoresAgree(f *testing.F) {
	seeds := []struct {
		typ     uint8
		payload string
		key     string
		resume  string
		viaEmit bool
	}{
		{0, `{"prompt": "Continue?"}`, "answer", `{"text": "yes"}`, false},
		{0, `{"prompt": "Pick", "choices": ["a", "b"], "wait_key": "k1"}`, "a.b.c", `{"text": "a"}`, false},
		{0, `{"prompt": ""}`, "x", `{}`, false},
		{1, `{"message": "hi", "level": "WARN"}`, "out", `{}`, false},
		{1, `{}`, "out", `{}`, false},
		{2, `{"name": "ping", "scope": "session"}`, "evt", `{"n": 1}`, true},
		{2, `{"name": "ping", "scope": "workflow"}`, "e.v.t", `{"n": 1}`, true},
		{2, `{"wait_key": "k", "timeout_s": 0}`, "evt", `{"n": 1}`, false},
		{2, `{"name": "ping", "until": 17}`, "evt", `{}`, false},
		{3, `{"until": "2026-11-30T11:00:00+00:00"}`, "w", `{}`, false},
		{3, `{"until": "2027-01-01T00:00:00Z"}`, "w", `{}`, false},
		{3, `{"until": "not a time"}`, "w", `{}`, false},
		{4, `{"name": "ping", "payload": {"a": 1}}`, "emitted", `{}`, false},
		{4, `{"name": "ping", "scope": "nope"}`, "emitted", `{}`, false},
		{5, `{"workflow_id": "child", "vars": {"x": 1}}`, "sub", `{}`, false},
		{5, `{"workflow_id": "child", "vars": {"ask": true}}`, "sub", `{"text": "child answer"}`, false},
		{5, `{"workflow_id": "child", "async": true, "wait": true}`, "sub", `{}`, false},
		{5, `{"workflow_id": "child", "wrap_as_tool_result": true, "run_id": "bad id\u0000"}`, "sub", `{}`, false},
		{5, `{"workflow_id": "nope"}`, "sub", `{}`, false},
		{6, `{"path": "context"}`, "q", `{}`, false},
		{6, `{"path": "_temp.pre", "keys_only": true}`, "q", `{}`, false},
		{7, `{"note": "remember this", "tags": {"k": "v"}}`, "note", `{}`, false},
		{7, `{"note": 5}`, "note", `{}`, false},
		{8, `{"query": "hello", "limit": 3}`, "mq", `{}`, false},
		{8, `{"tags": {"topic": "greeting"}, "return": "both"}`, "mq", `{}`, false},
		{9, `{"span_id": 1, "tags": {"a": "b"}}`, "tag", `{}`, false},
		{10, `{"preserve_recent": 1}`, "cmp", `{}`, false},
		{11, `{"span_ids": [1]}`, "rh", `{}`, false},
		{11, `{"span_ids": []}`, "", `{}`, false},
		{0, `{"prompt": "x"}`, "..", `{"text": "y"}`, false},
		{0, `{"prompt": "x"}`, "ключ.ü.é", `{"text": "y"}`, false},
		{1, `{"message": "x"}`, "_runtime", `{}`, false},
		{1, `{"message": "x"}`, "context", `{}`, false},
		{0, `{"prompt": "x"}`, "a.", `{"x": NaN}`, false},
	}
	for _, s := range seeds {
		f.Add(s.typ, s.payload, s.key, s.resume, s.viaEmit)
	}
	f.Fuzz(func(t *testing.T, typ uint8, payloadJSON, resultKey, resumeJSON string, viaEmit bool) {
		if len(payloadJSON) > 4096 || len(resumeJSON) > 4096 || len(resultKey) > 2048 {
			t.Skip()
		}
		payload, err := pyjson.DecodeObject([]byte(payloadJSON))
		if err != nil {
			t.Skip()
		}
		resume, err := pyjson.DecodeObject([]byte(resumeJSON))
		if err != nil {
			t.Skip()
		}
		first, _, _ := strings.Cut(resultKey, ".")
		sc := &feScenario{
			eff:      &durable.Effect{Type: feBuiltinTypes[int(typ)%len(feBuiltinTypes)], Payload: payload, ResultKey: resultKey},
			resume:   resume,
			viaEmit:  viaEmit,
			initVars: map[string]any{"context": map[string]any{"messages": conversation(4)}, "x": "y"},
			// Kernel namespaces are written again after the result (the
			// effect sequence, the memory spans, ...).
			// A key that is not UTF-8 is stored with U+FFFD in place of its
			// bad bytes (docs/compatibility.md, Formats): a node reading it
			// back by its raw spelling after a reload misses it.
			checkValue: utf8.ValidString(resultKey) && resultKey != "" && !strings.HasPrefix(first, "_") && first != "context" && first != "scratchpad",
		}
		defer func() { t.Logf("steps: %s", feLastSteps) }()
		mem := memory.New()
		defer mem.Close()
		feLastSteps = ""
		a := fePlay(t, mem, sc)
		feLastSteps = strings.Join(a.steps, " | ")
		b := fePlay(t, feSQLite(t), sc)
		feLastSteps = strings.Join(b.steps, " | ")
		if strings.Join(a.steps, "\n") != strings.Join(b.steps, "\n") {
			t.Fatalf("the stores disagree on the calls:\nmemory:\n%s\nsqlite:\n%s", strings.Join(a.steps, "\n"), strings.Join(b.steps, "\n"))
		}
		if a.vars != b.vars {
			t.Fatalf("the stores disagree on the vars (memory, then sqlite): %s", feDiff(a.vars, b.vars))
		}
		if strings.Join(a.ledger, "\n") != strings.Join(b.ledger, "\n") {
			t.Fatalf("the stores disagree on the ledger:\nmemory:\n%s\nsqlite:\n%s", strings.Join(a.ledger, "\n"), strings.Join(b.ledger, "\n"))
		}
	})
}

var feLastSteps string
