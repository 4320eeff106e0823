package crashtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
)

// Opener opens the backend on the same data each time it is called, as a
// restarted process would. It returns the store and a close function.
type Opener func(t *testing.T) (store.Store, func())

// Backend is a fresh data location: Run calls it once per kill point.
type Backend func(t *testing.T) Opener

// effectLog records every handler invocation, across "processes".
type effectLog struct {
	mu    sync.Mutex
	calls map[string]int // idempotency key → invocations
}

func (l *effectLog) add(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[key]++
}

func (l *effectLog) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[key]
}

// snapshot returns a copy of the invocations so far, by idempotency key.
func (l *effectLog) snapshot() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.calls)
}

// checkOncePerLife checks that in one life of the data, the one that
// began when the log held before (nil: the first), no handler ran twice
// under an idempotency key, and returns the log as it is now, where the
// next life begins. In the scenarios every effect is one attempt (a
// charge never fails), so a second call in the same life is a handler
// run twice for the same attempt, whether or not its completion was
// durable when the process died; only a new life may run an interrupted
// attempt again.
func checkOncePerLife(t *testing.T, life string, log *effectLog, before map[string]int) map[string]int {
	t.Helper()
	now := log.snapshot()
	for k, n := range now {
		if n-before[k] > 1 {
			t.Errorf("%s: effect %s executed %d times, want at most once per life", life, k, n-before[k])
		}
	}
	return now
}

// planNode adapts a plan function to a NodeFunc.
func planNode(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run), nil
	}
}

// workflow: pure steps, an external effect (a "charge"), a person's
// answer, a local effect, a sync child run, a loop repeating an identical
// charge twice, then completion.
func workflows() []*runtime.Workflow {
	n := planNode
	parent := &runtime.Workflow{ID: "crash_parent", Entry: "prep", Nodes: map[string]runtime.NodeFunc{
		"prep": n(func(run *durable.RunState) runtime.StepPlan {
			run.Vars["amount"] = int64(42)
			return runtime.Next("charge")
		}),
		"charge": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge",
				Payload: map[string]any{"amount": run.Vars["amount"]}, ResultKey: "receipt"}, "confirm")
		}),
		"confirm": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Ship?"}, ResultKey: "answer"}, "notify")
		}),
		"notify": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser,
				Payload: map[string]any{"message": "shipping"}, ResultKey: "note"}, "child")
		}),
		"child": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload:   map[string]any{"workflow_id": "crash_child", "vars": map[string]any{"n": int64(2)}},
				ResultKey: "sub"}, "recharge")
		}),
		"recharge": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge",
				Payload: map[string]any{"amount": int64(1)}, ResultKey: "extra"}, "count")
		}),
		"count": n(func(run *durable.RunState) runtime.StepPlan {
			loops, _ := runtime.AsInt(run.Vars["loops"])
			run.Vars["loops"] = loops + 1
			if loops+1 < rechargeLoops {
				return runtime.Next("recharge")
			}
			return runtime.Next("done")
		}),
		"done": n(func(run *durable.RunState) runtime.StepPlan {
			receipt, _ := run.Vars["receipt"].(map[string]any)
			answer, _ := run.Vars["answer"].(map[string]any)
			sub, _ := run.Vars["sub"].(map[string]any)
			return runtime.Complete(map[string]any{
				"receipt": receipt["id"], "answer": answer["text"], "child": sub["output"],
			})
		}),
	}}
	child := &runtime.Workflow{ID: "crash_child", Entry: "work", Nodes: map[string]runtime.NodeFunc{
		"work": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge",
				Payload: map[string]any{"amount": run.Vars["n"]}, ResultKey: "r"}, "end")
		}),
		"end": n(func(run *durable.RunState) runtime.StepPlan {
			r, _ := run.Vars["r"].(map[string]any)
			return runtime.Complete(map[string]any{"child_receipt": r["id"]})
		}),
	}}
	// fanout: a child started asynchronously, the parent parked until it
	// ends (and resumed by it), then a charge of the parent's own.
	fanout := &runtime.Workflow{ID: "crash_fanout", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "crash_child", "vars": map[string]any{"n": int64(5)},
					"async": true, "wait": true},
				ResultKey: "sub"}, "after")
		}),
		"after": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge",
				Payload: map[string]any{"amount": int64(7)}, ResultKey: "post"}, "done")
		}),
		"done": n(func(run *durable.RunState) runtime.StepPlan {
			post, _ := run.Vars["post"].(map[string]any)
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"], "post": post["id"]})
		}),
	}}
	// cancel_root → cancel_mid → cancel_leaf: a tree of runs parked on
	// their children, the leaf asking a person (TestRealKillCancel).
	spawn := func(id, child string) *runtime.Workflow {
		return &runtime.Workflow{ID: id, Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": child, "async": true, "wait": true}, ResultKey: "sub"}, "")
			}),
		}}
	}
	leaf := &runtime.Workflow{ID: "cancel_leaf", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "")
		}),
	}}
	return []*runtime.Workflow{parent, child, fanout, spawn("cancel_root", "cancel_mid"), spawn("cancel_mid", "cancel_leaf"), leaf}
}

// scenarios are the workflows Run drives through every kill.
var scenarios = []string{"crash_parent", "crash_fanout"}

// newRuntime builds a runtime over st whose "charge" handler calls
// executed with the effect's idempotency key.
func newRuntime(t *testing.T, st store.Store, executed func(key string)) *runtime.Runtime {
	t.Helper()
	rt, err := buildRuntime(st, executed, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// buildRuntime is newRuntime for callers without a *testing.T; with
// claims (nil: none), the runtime claims the runs it works on.
func buildRuntime(st store.Store, executed func(key string), claims *runtime.Claims) (*runtime.Runtime, error) {
	reg, err := runtime.NewRegistry(workflows()...)
	if err != nil {
		return nil, err
	}
	return runtime.New(runtime.Config{Store: st, Registry: reg, Claims: claims,
		Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			executed(req.IdempotencyKey)
			return runtime.Completed(map[string]any{"id": fmt.Sprintf("rcpt-%v", req.Effect.Payload["amount"])}), nil
		}}}})
}

// drive advances the run as a host would: recover interrupted runs,
// answer the person's wait, until the run ends.
func drive(ctx context.Context, rt *runtime.Runtime, runID string) (*durable.RunState, error) {
	sch, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		return nil, err
	}
	for i := 0; i < 10; i++ {
		if err := sch.Recover(ctx); err != nil {
			return nil, err
		}
		st, err := rt.Tick(ctx, runID, runtime.TickOptions{})
		if err != nil {
			return nil, err
		}
		switch {
		case st.Status.Terminal():
			return st, nil
		case st.Status == durable.RunWaiting && st.Waiting.Reason == durable.WaitUser:
			if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: runID, WaitKey: st.Waiting.WaitKey,
				Payload: map[string]any{"text": "yes"}}); err != nil {
				return nil, err
			}
		}
	}
	return nil, errors.New("run did not finish")
}

// Run executes each scenario once cleanly to count persistence points,
// then once per (point, phase) with a kill, restarting after each, and
// checks the invariants.
func Run(t *testing.T, backend Backend) {
	for _, wf := range scenarios {
		t.Run(wf, func(t *testing.T) { runScenario(t, backend, wf) })
	}
}

func runScenario(t *testing.T, backend Backend, workflowID string) {
	ctx := context.Background()
	const runID = "crash-run"
	// Clean run: the reference output and the number of points.
	open := backend(t)
	st, closeFn := open(t)
	log := &effectLog{calls: map[string]int{}}
	probe := Wrap(st, -1, Before)
	rt := newRuntime(t, probe, log.add)
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, RunID: runID}); err != nil {
		t.Fatal(err)
	}
	want, err := drive(ctx, rt, runID)
	if err != nil {
		t.Fatalf("clean run: %v", err)
	}
	points := probe.Calls()
	children := len(runIDs(ctx, t, st, runID)) - 1
	closeFn()
	checkOncePerLife(t, "clean run", log, nil)
	if want.Status != durable.RunCompleted {
		t.Fatalf("clean run ended %s: %s", want.Status, want.Error)
	}
	phases := []Phase{Before, After}
	if !store.IsAtomic(st) {
		phases = append(phases, Between)
	}
	for point := 0; point < points; point++ {
		for _, phase := range phases {
			t.Run(fmt.Sprintf("kill-%02d-%s", point, phase), func(t *testing.T) {
				checkKill(t, backend, workflowID, runID, point, phase, want, children)
			})
		}
	}
}

func checkKill(t *testing.T, backend Backend, workflowID, runID string, point int, phase Phase, want *durable.RunState, children int) {
	ctx := context.Background()
	open := backend(t)
	log := &effectLog{calls: map[string]int{}}

	// First life: runs until the kill.
	st, closeFn := open(t)
	killer := Wrap(st, point, phase)
	rt := newRuntime(t, killer, log.add)
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, RunID: runID}); err == nil {
		_, _ = drive(ctx, rt, runID)
	}
	if !killer.Dead() {
		t.Fatalf("the kill at point %d never happened", point)
	}
	closeFn()
	atKill := checkOncePerLife(t, "life before the kill", log, nil)

	// What was durable at the kill: completed effect keys.
	st, closeFn = open(t)
	defer closeFn()
	done := durableEffects(ctx, t, st, runIDs(ctx, t, st, runID), log)

	// Second life: restart on the same data and finish.
	rt = newRuntime(t, st, log.add)
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, RunID: runID}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	got, err := drive(ctx, rt, runID)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	checkRestarted(ctx, t, st, runID, got, want, children, done, log)
	checkOncePerLife(t, "life after the restart", log, atKill)
}

// durableEffects returns the effects whose completion is durable in the
// ledgers of ids, with how many times each had run when it was read.
func durableEffects(ctx context.Context, t *testing.T, st store.Store, ids []string, log *effectLog) map[string]int {
	t.Helper()
	done := map[string]int{}
	for _, id := range ids {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
				done[r.IdempotencyKey] = log.count(r.IdempotencyKey)
			}
		}
	}
	return done
}

// checkRestarted checks the invariants after a restart: the run (got)
// ended as the clean run (want), with as many child runs as the clean run
// made (wantChildren), no effect of done ran again, and the run and its
// children have one terminal status record and one key per node visit
// (checkOneCharge). A replay that starts a child again, under another id,
// runs the child's effects again under keys of the new child's: only the
// count of children shows it.
func checkRestarted(ctx context.Context, t *testing.T, st store.Store, runID string, got, want *durable.RunState, wantChildren int, done map[string]int, log *effectLog) {
	t.Helper()
	if got.Status != want.Status || !reflect.DeepEqual(normalize(got.Output), normalize(want.Output)) {
		t.Fatalf("after restart: %s %v, want %s %v", got.Status, got.Output, want.Status, want.Output)
	}
	if n := len(runIDs(ctx, t, st, runID)) - 1; n != wantChildren {
		t.Errorf("after restart: run %s has %d child runs where the clean run had %d: a child was started again", runID, n, wantChildren)
	}
	for k, n := range done {
		if log.count(k) != n {
			t.Errorf("effect %s re-executed after its completion was durable", k)
		}
	}
	for _, id := range runIDs(ctx, t, st, runID) {
		recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		terminal := 0
		for _, r := range recs {
			if r.IdempotencyKey == "system:terminal_status:completed" {
				terminal++
			}
		}
		if terminal != 1 {
			t.Errorf("run %s: %d terminal status records, want exactly 1", id, terminal)
		}
		checkOneCharge(ctx, t, st, id)
	}
}

// rechargeLoops is how many times the crash workflow's recharge node runs
// its identical effect.
const rechargeLoops = 2

// checkOneCharge checks the effects of a run: every visit of a node with
// an effect is recorded under one idempotency key across all its attempts
// (a replay after a kill hands the handler the same key) and completed at
// most once, so a node has one key per visit (recharge: rechargeLoops, as
// identical effects in a loop get distinct keys). That the charges
// completed shows in the run's output, which carries their receipts.
func checkOneCharge(ctx context.Context, t *testing.T, st store.Store, id string) {
	t.Helper()
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	keys, completions := map[string]map[string]bool{}, map[string]int{}
	for _, rec := range recs {
		if rec.IdempotencyKey == "" {
			continue // resume records
		}
		if keys[rec.NodeID] == nil {
			keys[rec.NodeID] = map[string]bool{}
		}
		keys[rec.NodeID][rec.IdempotencyKey] = true
		if rec.Status == durable.StepCompleted {
			completions[rec.NodeID]++
		}
	}
	for node, ks := range keys {
		visits := 1
		if node == "recharge" {
			visits = rechargeLoops
		}
		if len(ks) != visits || completions[node] > visits {
			t.Errorf("run %s: node %s recorded under %d keys with %d completions, want %d and at most %d",
				id, node, len(ks), completions[node], visits, visits)
		}
	}
}

// runIDs returns the run and its children.
func runIDs(ctx context.Context, t *testing.T, st store.Store, runID string) []string {
	ids := []string{runID}
	kids, err := st.RunListChildren(ctx, runID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		ids = append(ids, k.RunID)
	}
	return ids
}

// normalize makes a value comparable across a round trip through a store
// (numbers and other scalars as their text); object members named drop,
// when given, are left out.
func normalize(v any, drop ...string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if !slices.Contains(drop, k) {
				out[k] = normalize(e, drop...)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, drop...)
		}
		return out
	case nil:
		return nil
	default:
		return fmt.Sprint(x)
	}
}
