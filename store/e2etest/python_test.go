package e2etest_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// The data dirs under testdata/python were written by the Python
// AbstractRuntime 0.4.28 kernel (testdata/python/generate.py) on its JSON
// files and on its SQLite database. These tests open them with the Go
// stores and let the Go runtime take over every run where Python left it:
// the waits resume, the interrupted runs finish, the finished ones read
// back, and each Python ledger is continued, never rewritten.

// compatWorkflows are generate.py's workflows, plus compat_emit, which
// emits the event compat_event waits for.
func compatWorkflows() []*runtime.Workflow {
	done := func(out func(run *durable.RunState) map[string]any) runtime.NodeFunc {
		return compatNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Complete(out(run))
		})
	}
	wait := func(t durable.EffectType, payload map[string]any, key string) runtime.NodeFunc {
		return compatNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: t, Payload: payload, ResultKey: key}, "done")
		})
	}
	chain := map[string]runtime.NodeFunc{}
	for i := range 10 {
		chain["n"+strconv.Itoa(i)] = compatNode(func(run *durable.RunState) runtime.StepPlan {
			run.Vars["k"+strconv.Itoa(i)] = strings.Repeat("x", 32)
			if i == 9 {
				return runtime.Complete(map[string]any{"ok": true, "nodes": 10})
			}
			return runtime.Next("n" + strconv.Itoa(i+1))
		})
	}
	return []*runtime.Workflow{
		{ID: "compat_ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": wait(durable.EffectAskUser, map[string]any{"prompt": "Continue?", "choices": []any{"yes", "no"}}, "answer"),
			"done": done(func(run *durable.RunState) map[string]any {
				return map[string]any{"answer": run.Vars["answer"].(map[string]any)["text"], "task": run.Vars["task"]}
			}),
		}},
		{ID: "compat_until", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": wait(durable.EffectWaitUntil, map[string]any{"until": "2030-01-01T00:00:00+00:00"}, "woke"),
			"done": done(func(*durable.RunState) map[string]any { return map[string]any{"ok": true} }),
		}},
		{ID: "compat_event", Entry: "listen", Nodes: map[string]runtime.NodeFunc{
			"listen": wait(durable.EffectWaitEvent, map[string]any{"name": "approval", "scope": "session"}, "evt"),
			"done":   done(func(run *durable.RunState) map[string]any { return map[string]any{"event": run.Vars["evt"]} }),
		}},
		{ID: "compat_chain", Entry: "n0", Nodes: chain},
		{ID: "compat_parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": wait(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "compat_ask", "vars": map[string]any{"task": "child"}}, "child"),
			"done":  done(func(run *durable.RunState) map[string]any { return map[string]any{"child": run.Vars["child"]} }),
		}},
		{ID: "compat_fail", Entry: "missing", Nodes: map[string]runtime.NodeFunc{
			"missing": wait(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "no_such_workflow"}, "r"),
			"done":    done(func(*durable.RunState) map[string]any { return map[string]any{"ok": true} }),
		}},
		{ID: "compat_crash", Entry: "boom", Nodes: map[string]runtime.NodeFunc{
			"boom": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.StepPlan{}, errors.New("boom: node failed on purpose")
			},
		}},
		{ID: "compat_emit", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
			"emit": compatNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, Payload: map[string]any{
					"name": "approval", "scope": "session", "payload": map[string]any{"approved": true}}}, "done")
			}),
			"done": done(func(*durable.RunState) map[string]any { return map[string]any{"emitted": true} }),
		}},
	}
}

// compatNode is a node that cannot fail.
func compatNode(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run), nil
	}
}

func TestPythonData_JSONFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "python", "json"), dir)
	open := func() store.Store {
		st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	takeOverPythonRuns(t, open)
}

func TestPythonData_SQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "python", "sqlite"), dir)
	open := func() store.Store {
		st, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3")})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	takeOverPythonRuns(t, open)
}

// takeOverPythonRuns checks what Python left, drives every run to its end
// with the Go runtime, and checks the result, again after a reopen.
func takeOverPythonRuns(t *testing.T, open func() store.Store) {
	ctx := t.Context()
	st := open()
	reg, err := runtime.NewRegistry(compatWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	// Past WAIT_UNTIL's 2030-01-01 deadline.
	now := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}

	// What Python left: one root run per workflow (two chains) and the
	// parent's child, statuses as the 0.4.28 kernel wrote them.
	rows, err := st.RunIndex(ctx, &store.RunIndexParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	byWorkflow := map[string][]store.RunIndexRow{}
	for _, row := range rows {
		byWorkflow[row.WorkflowID] = append(byWorkflow[row.WorkflowID], row)
	}
	one := func(wf string, status durable.RunStatus) string {
		t.Helper()
		for _, row := range byWorkflow[wf] {
			if row.Status == status && row.ParentRunID == "" {
				return row.RunID
			}
		}
		t.Fatalf("no %s run of %s among %+v", status, wf, byWorkflow[wf])
		return ""
	}
	ask := one("compat_ask", durable.RunWaiting)
	until := one("compat_until", durable.RunWaiting)
	listener := one("compat_event", durable.RunWaiting)
	chain := one("compat_chain", durable.RunRunning)
	finished := one("compat_chain", durable.RunCompleted)
	parent := one("compat_parent", durable.RunWaiting)
	failed := one("compat_fail", durable.RunFailed)
	crashed := one("compat_crash", durable.RunRunning)
	children, err := st.RunListChildren(ctx, parent, "")
	if err != nil || len(children) != 1 || children[0].WorkflowID != "compat_ask" || children[0].Status != durable.RunWaiting {
		t.Fatalf("children of the parent = %v, %v; want one waiting compat_ask", children, err)
	}
	child := children[0].RunID
	if len(rows) != 9 {
		t.Fatalf("%d runs listed, want 9", len(rows))
	}
	pythonLedgers := map[string][]*durable.StepRecord{}
	for _, id := range []string{ask, until, listener, chain, finished, parent, child, failed, crashed} {
		recs, err := rt.GetLedger(ctx, id)
		if err != nil {
			t.Fatalf("ledger of %s: %v", id, err)
		}
		pythonLedgers[id] = recs
	}
	due, err := st.RunListDue(ctx, &store.RunListDueParams{Now: now})
	if err != nil || len(due) != 1 || due[0].RunID != until {
		t.Fatalf("due runs = %+v, %v; want only %s", due, err, until)
	}

	// The Go runtime takes over.
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: ask, WaitKey: "user:" + ask + ":ask",
		Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatalf("resuming the user wait: %v", err)
	}
	if _, err := rt.Tick(ctx, until, runtime.TickOptions{}); err != nil {
		t.Fatalf("ticking the due wait: %v", err)
	}
	emitter, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "compat_emit", SessionID: "sess_1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, emitter, runtime.TickOptions{}); err != nil {
		t.Fatalf("emitting the event: %v", err)
	}
	if _, err := rt.Tick(ctx, chain, runtime.TickOptions{}); err != nil {
		t.Fatalf("finishing the interrupted chain: %v", err)
	}
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: child, WaitKey: "user:" + child + ":ask",
		Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatalf("resuming the child: %v", err)
	}
	if _, err := rt.Tick(ctx, crashed, runtime.TickOptions{}); err != nil {
		t.Fatalf("ticking the run whose node raised: %v", err)
	}

	want := map[string]struct {
		status durable.RunStatus
		output map[string]any
	}{
		ask:      {durable.RunCompleted, map[string]any{"answer": "yes", "task": "démo — ünïcode"}},
		until:    {durable.RunCompleted, map[string]any{"ok": true}},
		listener: {durable.RunCompleted, nil}, // checked below: the event's payload
		chain:    {durable.RunCompleted, map[string]any{"ok": true, "nodes": 10}},
		finished: {durable.RunCompleted, map[string]any{"ok": true, "nodes": 10}},
		child:    {durable.RunCompleted, map[string]any{"answer": "yes", "task": "child"}},
		parent:   {durable.RunCompleted, nil}, // checked below: the child's output
		failed:   {durable.RunFailed, nil},
		crashed:  {durable.RunFailed, nil},
		emitter:  {durable.RunCompleted, map[string]any{"emitted": true}},
	}
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			run, err := rt.GetState(ctx, id)
			if err != nil {
				t.Fatalf("%s: %s: %v", when, id, err)
			}
			if run.Status != w.status {
				t.Fatalf("%s: run %s of %s is %s (error %q), want %s", when, id, run.WorkflowID, run.Status, run.Error, w.status)
			}
			if w.output != nil && !sameJSON(t, run.Output, w.output) {
				t.Fatalf("%s: run %s of %s output %v, want %v", when, id, run.WorkflowID, run.Output, w.output)
			}
			if w.status == durable.RunFailed && run.Error == "" {
				t.Fatalf("%s: failed run %s of %s has no error", when, id, run.WorkflowID)
			}
		}
		run, _ := rt.GetState(ctx, listener)
		if ev, _ := run.Output["event"].(map[string]any); !strings.Contains(mustJSON(t, ev), `"approved": true`) {
			t.Fatalf("%s: listener output %v lacks the event payload", when, run.Output)
		}
		run, _ = rt.GetState(ctx, parent)
		if !strings.Contains(mustJSON(t, run.Output), `"answer": "yes"`) {
			t.Fatalf("%s: parent output %v lacks the child's answer", when, run.Output)
		}
		run, _ = rt.GetState(ctx, crashed)
		if !strings.Contains(run.Error, "boom") {
			t.Fatalf("%s: crashed run's error %q does not name the node's error", when, run.Error)
		}
		run, _ = rt.GetState(ctx, chain)
		for i := range 10 {
			if run.Vars["k"+strconv.Itoa(i)] != strings.Repeat("x", 32) {
				t.Fatalf("%s: chain vars lack k%d: %v", when, i, run.Vars)
			}
		}
		// Each Python ledger is the unchanged prefix of the ledger now.
		for id, before := range pythonLedgers {
			after, err := rt.GetLedger(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(after) < len(before) {
				t.Fatalf("%s: ledger of %s shrank from %d to %d records", when, id, len(before), len(after))
			}
			for i, rec := range before {
				if mustJSON(t, rec) != mustJSON(t, after[i]) {
					t.Fatalf("%s: record %d of %s changed:\n was %s\n now %s", when, i+1, id, mustJSON(t, rec), mustJSON(t, after[i]))
				}
			}
			for i, rec := range after {
				if rec.Seq != int64(i+1) {
					t.Fatalf("%s: record %d of %s has seq %d", when, i+1, id, rec.Seq)
				}
			}
			resumedOrRan := id != finished && id != failed
			if resumedOrRan && len(after) == len(before) {
				t.Fatalf("%s: the Go runtime appended nothing to the ledger of %s", when, id)
			}
			if !resumedOrRan && len(after) != len(before) {
				t.Fatalf("%s: the ledger of the ended run %s grew", when, id)
			}
		}
	}
	check("after the take-over")

	if c, ok := st.(io.Closer); ok {
		c.Close()
	}
	st = open()
	defer st.Close()
	rt, err = runtime.New(runtime.Config{Store: st, Registry: reg, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	check("after a reopen")
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	switch x := v.(type) {
	case *durable.StepRecord:
		b, err := durable.MarshalRecord(x, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	return reflect.DeepEqual(mustJSON(t, a), mustJSON(t, b))
}
