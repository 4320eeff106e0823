package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/crashtest"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

type logTree struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *logTree) add(k string) { l.mu.Lock(); l.n[k]++; l.mu.Unlock() }

func nestedNode(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run), nil
	}
}

// A -> B -> C; midMode: how B calls C ("sync" or "async"); A calls B sync.
func nestedTree(midMode string) []*runtime.Workflow {
	call := func(child string, async bool) runtime.NodeFunc {
		p := map[string]any{"workflow_id": child}
		if async {
			p["async"], p["wait"] = true, true
		}
		return nestedNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: p, ResultKey: "sub"}, "charge")
		})
	}
	charge := func(amount int64) runtime.NodeFunc {
		return nestedNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge", Payload: map[string]any{"amount": amount}, ResultKey: "r"}, "done")
		})
	}
	done := nestedNode(func(run *durable.RunState) runtime.StepPlan {
		sub, _ := run.Vars["sub"].(map[string]any)
		r, _ := run.Vars["r"].(map[string]any)
		a, _ := run.Vars["a"].(map[string]any)
		return runtime.Complete(map[string]any{"sub": sub["output"], "r": r["id"], "a": a["text"]})
	})
	return []*runtime.Workflow{
		{ID: "A", Entry: "call", Nodes: map[string]runtime.NodeFunc{"call": call("B", false), "charge": charge(1), "done": done}},
		{ID: "B", Entry: "call", Nodes: map[string]runtime.NodeFunc{"call": call("C", midMode == "async"), "charge": charge(2), "done": done}},
		{ID: "C", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": nestedNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "charge")
			}),
			"charge": charge(3), "done": done}},
	}
}

func treeRuntime(t *testing.T, st store.Store, mid string, log *logTree) *runtime.Runtime {
	reg, err := runtime.NewRegistry(nestedTree(mid)...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		"charge": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			log.add(req.IdempotencyKey)
			return runtime.Completed(map[string]any{"id": fmt.Sprint("r", req.Effect.Payload["amount"])}), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func treeRuns(ctx context.Context, st store.Store, id string) []*durable.RunState {
	r, err := st.RunGet(ctx, id)
	if err != nil {
		return nil
	}
	out := []*durable.RunState{r}
	kids, _ := st.RunListChildren(ctx, id, "")
	for _, k := range kids {
		out = append(out, treeRuns(ctx, st, k.RunID)...)
	}
	return out
}

// driveTree: recover (optional), tick A, answer C's question.
func driveTree(ctx context.Context, st store.Store, rt *runtime.Runtime, recoverFirst bool) (*durable.RunState, error) {
	sch, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		return nil, err
	}
	for i := 0; i < 8; i++ {
		if recoverFirst {
			if err := sch.Recover(ctx); err != nil {
				return nil, err
			}
		}
		a, err := rt.Tick(ctx, "A", runtime.TickOptions{})
		if err != nil {
			return nil, err
		}
		if a.Status.Terminal() {
			return a, nil
		}
		for _, r := range treeRuns(ctx, st, "A") {
			if r.Status == durable.RunWaiting && r.Waiting != nil && r.Waiting.Reason == durable.WaitUser {
				if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: r.RunID, WaitKey: r.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}}); err != nil {
					return nil, err
				}
			}
		}
	}
	a, _ := st.RunGet(ctx, "A")
	return a, fmt.Errorf("A did not finish: %s", a.Status)
}

func checkTreeLedgers(t *testing.T, ctx context.Context, st store.Store) {
	t.Helper()
	for _, r := range treeRuns(ctx, st, "A") {
		recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: r.RunID})
		ends := map[string]int{}
		var started []string
		for _, rec := range recs {
			if rec.Status == durable.StepStarted {
				started = append(started, rec.StepID)
			} else if rec.StepID != "" {
				ends[rec.StepID]++
			}
		}
		for _, id := range started {
			if ends[id] != 1 {
				t.Errorf("run %s (%s, %s): attempt %s has %d ends", r.RunID, r.WorkflowID, r.Status, id, ends[id])
			}
		}
		kids, _ := st.RunListChildren(ctx, r.RunID, "")
		if r.WorkflowID != "C" && len(kids) != 1 {
			t.Errorf("run %s (%s) has %d children, want 1", r.RunID, r.WorkflowID, len(kids))
		}
		if !r.Status.Terminal() {
			t.Errorf("run %s (%s) left %s", r.RunID, r.WorkflowID, r.Status)
		}
	}
}

func TestNestedKillEveryPoint(t *testing.T) {
	for _, backend := range []string{"memory", "jsonfile"} {
		for _, mid := range []string{"sync", "async"} {
			// Without a Recover after the restart nothing drives a run a
			// kill left running mid-tick (by design): only recover=true.
			nestedKillPoints(t, backend, mid, true)
		}
	}
}

func openTreeStore(t *testing.T, backend, dir string) (store.Store, func()) {
	if backend == "memory" {
		return memory.New(), func() {}
	}
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return js, func() { js.Close() }
}

func nestedKillPoints(t *testing.T, backend, mid string, recoverFirst bool) {
	ctx := context.Background()
	st, closeFn := openTreeStore(t, backend, filepath.Join(t.TempDir(), "clean"))
	probe := crashtest.Wrap(st, -1, crashtest.Before)
	log := &logTree{n: map[string]int{}}
	rt := treeRuntime(t, probe, mid, log)
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "A", RunID: "A"}); err != nil {
		t.Fatal(err)
	}
	want, err := driveTree(ctx, probe, rt, recoverFirst)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	points := probe.Calls()
	closeFn()
	phases := []crashtest.Phase{crashtest.Before, crashtest.After}
	if backend == "jsonfile" {
		phases = append(phases, crashtest.Between)
	}
	for p := 0; p < points; p++ {
		for _, ph := range phases {
			name := fmt.Sprintf("%s/%s/recover=%v/kill-%02d-%s", backend, mid, recoverFirst, p, ph)
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "d")
				var base store.Store
				var closeB func()
				if backend == "memory" {
					base, closeB = memory.New(), func() {}
				} else {
					base, closeB = openTreeStore(t, backend, dir)
				}
				log := &logTree{n: map[string]int{}}
				killer := crashtest.Wrap(base, p, ph)
				rtA := treeRuntime(t, killer, mid, log)
				if _, err := rtA.Start(ctx, runtime.StartParams{WorkflowID: "A", RunID: "A"}); err == nil {
					_, _ = driveTree(ctx, killer, rtA, recoverFirst)
				}
				if !killer.Dead() {
					t.Fatalf("no kill")
				}
				if backend == "jsonfile" {
					closeB()
					base, closeB = openTreeStore(t, backend, dir)
				}
				defer closeB()
				rtB := treeRuntime(t, base, mid, log)
				if _, err := rtB.Start(ctx, runtime.StartParams{WorkflowID: "A", RunID: "A"}); err != nil {
					t.Fatalf("restart: %v", err)
				}
				got, err := driveTree(ctx, base, rtB, recoverFirst)
				if err != nil {
					for _, r := range treeRuns(ctx, base, "A") {
						w := ""
						if r.Waiting != nil {
							w = string(r.Waiting.Reason) + " " + r.Waiting.WaitKey
						}
						t.Logf("  run %s %s %s at %s wait %q err %q", r.RunID, r.WorkflowID, r.Status, r.CurrentNode, w, r.Error)
					}
					t.Fatalf("after restart: %v", err)
				}
				if got.Status != want.Status || fmt.Sprint(got.Output) != fmt.Sprint(want.Output) {
					if !reflect.DeepEqual(fmt.Sprint(got.Output), fmt.Sprint(want.Output)) {
						t.Errorf("A ended %s %v, want %s %v", got.Status, got.Output, want.Status, want.Output)
					}
				}
				for k, n := range log.n {
					if n > 1 {
						t.Logf("charge %s ran %d times", k, n)
					}
				}
				checkTreeLedgers(t, ctx, base)
			})
		}
	}
}

// Cancel(A) of A -> B -> C (C asking a person), killed at each of its
// persistence points; after the restart a scheduler's Recover must leave
// no live run in the tree and every attempt ended once.
func TestNestedCancelKillEveryPoint(t *testing.T) {
	for _, backend := range []string{"memory", "jsonfile"} {
		for _, mid := range []string{"sync", "async"} {
			cancelKillPoints(t, backend, mid)
		}
	}
}

func cancelKillPoints(t *testing.T, backend, mid string) {
	ctx := context.Background()
	setup := func(st store.Store, rt *runtime.Runtime) {
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "A", RunID: "A"}); err != nil {
			t.Fatal(err)
		}
		if a, err := rt.Tick(ctx, "A", runtime.TickOptions{}); err != nil || a.Status != durable.RunWaiting {
			t.Fatalf("setup: %v %v", a, err)
		}
	}
	st, closeFn := openTreeStore(t, backend, filepath.Join(t.TempDir(), "clean"))
	probe := crashtest.Wrap(st, -1, crashtest.Before)
	log := &logTree{n: map[string]int{}}
	rt := treeRuntime(t, probe, mid, log)
	setup(probe, rt)
	before := probe.Calls()
	if _, err := rt.Cancel(ctx, "A", "stop"); err != nil {
		t.Fatal(err)
	}
	points := probe.Calls()
	closeFn()
	phases := []crashtest.Phase{crashtest.Before, crashtest.After}
	if backend == "jsonfile" {
		phases = append(phases, crashtest.Between)
	}
	for p := before; p < points; p++ {
		for _, ph := range phases {
			t.Run(fmt.Sprintf("cancel/%s/%s/kill-%02d-%s", backend, mid, p, ph), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "d")
				base, closeB := openTreeStore(t, backend, dir)
				log := &logTree{n: map[string]int{}}
				killer := crashtest.Wrap(base, p, ph)
				rtA := treeRuntime(t, killer, mid, log)
				setup(killer, rtA)
				_, _ = rtA.Cancel(ctx, "A", "stop")
				if !killer.Dead() {
					t.Fatalf("no kill")
				}
				if backend == "jsonfile" {
					closeB()
					base, closeB = openTreeStore(t, backend, dir)
				}
				defer closeB()
				rtB := treeRuntime(t, base, mid, log)
				sch, err := scheduler.New(scheduler.Config{Runtime: rtB})
				if err != nil {
					t.Fatal(err)
				}
				if err := sch.Recover(ctx); err != nil {
					t.Fatal(err)
				}
				anyCancelled := false
				for _, r := range treeRuns(ctx, base, "A") {
					anyCancelled = anyCancelled || r.Status == durable.RunCancelled
				}
				for _, r := range treeRuns(ctx, base, "A") {
					if anyCancelled && !r.Status.Terminal() {
						t.Errorf("run %s (%s) %s after Recover", r.RunID, r.WorkflowID, r.Status)
					}
				}
				if a, _ := base.RunGet(ctx, "A"); a.Status != durable.RunCancelled {
					// the kill may have come before anything was cancelled:
					// the Cancel is then made again by the host.
					if _, err := rtB.Cancel(ctx, "A", "stop"); err != nil {
						t.Fatal(err)
					}
				}
				for _, r := range treeRuns(ctx, base, "A") {
					if r.Status != durable.RunCancelled {
						t.Errorf("run %s (%s) %s %q, want cancelled", r.RunID, r.WorkflowID, r.Status, r.Error)
					}
				}
				checkTreeLedgersNoTerminal(t, ctx, base)
			})
		}
	}
}

func checkTreeLedgersNoTerminal(t *testing.T, ctx context.Context, st store.Store) {
	t.Helper()
	for _, r := range treeRuns(ctx, st, "A") {
		recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: r.RunID})
		ends := map[string]int{}
		var started []string
		terminal := 0
		for _, rec := range recs {
			if rec.Status == durable.StepStarted {
				started = append(started, rec.StepID)
			} else if rec.StepID != "" {
				ends[rec.StepID]++
			}
			if runtime.IsTerminalStatusRecord(rec) {
				terminal++
			}
		}
		for _, id := range started {
			if ends[id] != 1 {
				t.Errorf("run %s (%s, %s): attempt %s has %d ends", r.RunID, r.WorkflowID, r.Status, id, ends[id])
			}
		}
		if terminal != 1 {
			t.Errorf("run %s (%s, %s): %d terminal status records", r.RunID, r.WorkflowID, r.Status, terminal)
		}
	}
}
