// Interleavings of subworkflows with cancel, pause and answers, on real
// stores: whatever wins each race, no run is left unfinished and no attempt
// is left open in a ledger.

package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

func ilWorkflows(async bool) []*Workflow {
	leaf := &Workflow{ID: "leaf", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "q?"}, ResultKey: "ans"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ans": run.Vars["ans"]}) }),
	}}
	top := &Workflow{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "leaf", "async": async, "wait": async}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
	return []*Workflow{top, leaf}
}

func ilStores(t *testing.T) map[string]func() store.Store {
	return map[string]func() store.Store{
		"memory": func() store.Store { return memory.New() },
		"sqlite": func() store.Store {
			st, err := sqlite.New(context.Background(), sqlite.Config{Path: t.TempDir() + "/db.sqlite"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

func ilSetup(t *testing.T, rt *Runtime) (top, child string) {
	ctx := context.Background()
	top, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, top, TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %+v", err, st)
	}
	child = WaitedChild(st)
	cs, err := rt.GetState(ctx, child)
	if err != nil || cs.Status != durable.RunWaiting {
		t.Fatalf("child: %v %+v", err, cs)
	}
	return top, child
}

func ilCheckNoOpenAttempt(t *testing.T, rt *Runtime, runID string) {
	ctx := context.Background()
	recs, err := rt.store.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]bool{}
	for _, r := range recs {
		if r.Status != durable.StepStarted {
			ended[r.StepID] = true
		}
	}
	for _, r := range recs {
		if r.Status == durable.StepStarted && !ended[r.StepID] {
			t.Errorf("run %s: attempt %s left open", runID, r.StepID)
		}
	}
}

// ilEachSetup calls race for rounds fresh parent/child pairs (the child
// waiting on an answer) on each store, child sync and async.
func ilEachSetup(t *testing.T, rounds int, race func(name string, async bool, i int, st store.Store, rt *Runtime, top, child string)) {
	for name, mk := range ilStores(t) {
		for _, async := range []bool{true, false} {
			for i := 0; i < rounds; i++ {
				st := mk()
				rt := errRuntime(t, st, Config{}, ilWorkflows(async)...)
				top, child := ilSetup(t, rt)
				race(name, async, i, st, rt, top, child)
			}
		}
	}
}

// ilRace runs a and b at once and returns when both have.
func ilRace(a, b func()) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a() }()
	go func() { defer wg.Done(); b() }()
	wg.Wait()
}

// ilTickIntoChildEffect starts the top run of ilBlockingWorkflows and
// ticks it in the background until its child's handler is entered; the
// tick's end arrives on done.
func ilTickIntoChildEffect(t *testing.T, rt *Runtime, entered <-chan struct{}) (top, child string, done <-chan *durable.RunState) {
	ctx := context.Background()
	top, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan *durable.RunState, 1)
	go func() { st, _ := rt.Tick(ctx, top, TickOptions{}); ended <- st }()
	<-entered
	kids, err := rt.store.RunListChildren(ctx, top, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of %s: %v %v", top, kids, err)
	}
	return top, kids[0].RunID, ended
}

// ilAwaitPauseRequest spins, at most looks times, until a Pause of runID
// has made its request to the tick driving it.
func ilAwaitPauseRequest(rt *Runtime, runID string, looks int) {
	for i := 0; i < looks; i++ {
		l := rt.ref(runID)
		l.sigMu.Lock()
		n := l.pauseRequests
		l.sigMu.Unlock()
		rt.unref(runID, l)
		if n > 0 {
			return
		}
	}
}

// ilLedgerStatuses returns the statuses of runID's ledger records, in order.
func ilLedgerStatuses(rt *Runtime, runID string) []string {
	recs, _ := rt.store.LedgerList(context.Background(), &store.LedgerListParams{RunID: runID})
	var sts []string
	for _, r := range recs {
		sts = append(sts, string(r.Status))
	}
	return sts
}

// Race: a cancel of the parent against the answer that ends its child.
func TestInterleavingCancelParentRacesChildAnswer(t *testing.T) {
	ilEachSetup(t, 6, func(name string, async bool, _ int, _ store.Store, rt *Runtime, top, child string) {
		ctx := context.Background()
		var cerr error
		ilRace(func() { _, cerr = rt.Cancel(ctx, top, "stop") },
			func() { _, _ = rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}}) })
		if cerr != nil {
			t.Fatalf("%s: cancel: %v", name, cerr)
		}
		ts, _ := rt.GetState(ctx, top)
		cs, _ := rt.GetState(ctx, child)
		if !ts.Status.Terminal() || !cs.Status.Terminal() {
			t.Fatalf("%s async=%v: top %s child %s left unfinished", name, async, ts.Status, cs.Status)
		}
		ilCheckNoOpenAttempt(t, rt, top)
		ilCheckNoOpenAttempt(t, rt, child)
	})
}

// Race: a pause of the parent against the answer that ends its child; then
// ResumeRun (on a fresh Runtime over the same store, as after a restart)
// must hand the parent its child's end and complete it.
func TestInterleavingPauseParentRacesChildAnswer(t *testing.T) {
	ilEachSetup(t, 6, func(name string, async bool, i int, st store.Store, rt *Runtime, top, child string) {
		ctx := context.Background()
		var perr error
		ilRace(func() { _, perr = rt.Pause(ctx, top, "hold") },
			func() { _, _ = rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}}) })
		if perr != nil {
			t.Fatalf("pause: %v", perr)
		}
		rt2 := rt
		if i%2 == 1 {
			rt2 = errRuntime(t, st, Config{}, ilWorkflows(async)...)
		}
		ts, err := rt2.ResumeRun(ctx, top)
		if err != nil {
			t.Fatalf("resume-run: %v", err)
		}
		if ts.Status != durable.RunCompleted {
			t.Fatalf("%s async=%v i=%d: top %s (waiting %+v), want completed", name, async, i, ts.Status, ts.Waiting)
		}
		ilCheckNoOpenAttempt(t, rt, top)
	})
}

func ilBlockingWorkflows(async bool) ([]*Workflow, map[durable.EffectType]Handler, chan struct{}, chan struct{}) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	h := Handler{Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return Completed(map[string]any{"text": "ok"}), nil
		case <-ctx.Done():
			return Failed("interrupted"), nil
		}
	}}
	leaf := &Workflow{ID: "leaf", Entry: "llm", Nodes: map[string]NodeFunc{
		"llm": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "mid")
		}),
		"mid":  errNode(func(run *durable.RunState) StepPlan { return Next("done") }),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"r": run.Vars["r"]}) }),
	}}
	wfs := ilWorkflows(async)
	return []*Workflow{wfs[0], leaf}, map[durable.EffectType]Handler{durable.EffectLLMCall: h}, entered, release
}

func TestInterleavingPauseSyncChildMidEffect(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, target := range []string{"child", "top"} {
			ctx := context.Background()
			wfs, hs, entered, release := ilBlockingWorkflows(false)
			rt := errRuntime(t, mk(), Config{Handlers: hs}, wfs...)
			top, child, done := ilTickIntoChildEffect(t, rt, entered)
			pid := child
			if target == "top" {
				pid = top
			}
			perr := make(chan error, 1)
			go func() { _, err := rt.Pause(ctx, pid, "hold"); perr <- err }()
			for !rt.Busy(pid) {
			}
			ilAwaitPauseRequest(rt, pid, 1000)
			close(release)
			st := <-done
			if err := <-perr; err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: after pause top=%s", name, target, st.Status)
			if _, err := rt.ResumeRun(ctx, pid); err != nil {
				t.Fatal(err)
			}
			ts, _ := rt.GetState(ctx, top)
			cs, _ := rt.GetState(ctx, child)
			if ts.Status != durable.RunCompleted || cs.Status != durable.RunCompleted {
				t.Fatalf("%s pause %s: top %s (%+v) child %s, want both completed", name, target, ts.Status, ts.Waiting, cs.Status)
			}
			ilCheckNoOpenAttempt(t, rt, top)
			ilCheckNoOpenAttempt(t, rt, child)
		}
	}
}

func TestInterleavingCancelTopMidSyncChildEffect(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, async := range []bool{false, true} {
			ctx := context.Background()
			wfs, hs, entered, _ := ilBlockingWorkflows(async)
			rt := errRuntime(t, mk(), Config{Handlers: hs}, wfs...)
			top, child, done := ilTickIntoChildEffect(t, rt, entered)
			if _, err := rt.Cancel(ctx, top, "stop"); err != nil {
				t.Fatal(err)
			}
			<-done
			ts, _ := rt.GetState(ctx, top)
			cs, _ := rt.GetState(ctx, child)
			if ts.Status != durable.RunCancelled || cs.Status != durable.RunCancelled {
				t.Fatalf("%s: top %s child %s", name, ts.Status, cs.Status)
			}
			t.Logf("%s async=%v child ledger %v", name, async, ilLedgerStatuses(rt, child))
			t.Logf("%s async=%v top ledger %v", name, async, ilLedgerStatuses(rt, top))
			ilCheckNoOpenAttempt(t, rt, top)
			ilCheckNoOpenAttempt(t, rt, child)
		}
	}
}

func TestInterleavingCancelChildRacesAnswer(t *testing.T) {
	ilEachSetup(t, 6, func(name string, async bool, _ int, _ store.Store, rt *Runtime, top, child string) {
		ctx := context.Background()
		ilRace(func() { _, _ = rt.Cancel(ctx, child, "stop") },
			func() { _, _ = rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}}) })
		ts, _ := rt.GetState(ctx, top)
		cs, _ := rt.GetState(ctx, child)
		if ts.Status != durable.RunCompleted || !cs.Status.Terminal() {
			t.Fatalf("%s async=%v: top %s child %s", name, async, ts.Status, cs.Status)
		}
	})
}

func TestInterleavingCancelRacesResumeRun(t *testing.T) {
	ilEachSetup(t, 6, func(name string, async bool, _ int, _ store.Store, rt *Runtime, top, child string) {
		ctx := context.Background()
		if _, err := rt.Pause(ctx, top, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}}); err != nil {
			t.Fatal(err)
		}
		var cerr error
		ilRace(func() { _, cerr = rt.Cancel(ctx, top, "stop") }, func() { _, _ = rt.ResumeRun(ctx, top) })
		if cerr != nil {
			t.Fatal(cerr)
		}
		ts, _ := rt.GetState(ctx, top)
		if !ts.Status.Terminal() {
			t.Fatalf("%s async=%v: top %s", name, async, ts.Status)
		}
		ilCheckNoOpenAttempt(t, rt, top)
	})
}

func TestInterleavingTwoRunnersCancelParentRacesChildAnswer(t *testing.T) {
	for _, async := range []bool{true, false} {
		for i := 0; i < 4; i++ {
			ctx := context.Background()
			st, err := sqlite.New(ctx, sqlite.Config{Path: t.TempDir() + "/db.sqlite"})
			if err != nil {
				t.Fatal(err)
			}
			a := errRuntime(t, st, Config{Claims: &Claims{Owner: "a"}}, ilWorkflows(async)...)
			b := errRuntime(t, st, Config{Claims: &Claims{Owner: "b"}}, ilWorkflows(async)...)
			top, child := ilSetup(t, a)
			var cerr, rerr error
			ilRace(func() { _, cerr = a.Cancel(ctx, top, "stop") },
				func() { _, rerr = b.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}}) })
			if cerr != nil {
				t.Fatalf("cancel: %v", cerr)
			}
			ts, _ := a.GetState(ctx, top)
			cs, _ := a.GetState(ctx, child)
			if !ts.Status.Terminal() || !cs.Status.Terminal() {
				t.Fatalf("async=%v i=%d: top %s child %s left unfinished (resume err %v)", async, i, ts.Status, cs.Status, rerr)
			}
			ilCheckNoOpenAttempt(t, a, top)
			ilCheckNoOpenAttempt(t, a, child)
			st.Close()
		}
	}
}

func TestInterleavingPauseThenCancelMidSyncChildEffect(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, pauseTarget := range []string{"child", "top"} {
			for _, async := range []bool{false, true} {
				ctx := context.Background()
				wfs, hs, entered, _ := ilBlockingWorkflows(async)
				rt := errRuntime(t, mk(), Config{Handlers: hs}, wfs...)
				top, child, done := ilTickIntoChildEffect(t, rt, entered)
				pid := child
				if pauseTarget == "top" {
					pid = top
				}
				perr := make(chan error, 1)
				go func() { _, err := rt.Pause(ctx, pid, "hold"); perr <- err }()
				ilAwaitPauseRequest(rt, pid, 100000)
				if _, err := rt.Cancel(ctx, top, "stop"); err != nil {
					t.Fatal(err)
				}
				<-done
				if err := <-perr; err != nil {
					t.Logf("pause: %v", err)
				}
				ts, _ := rt.GetState(ctx, top)
				cs, _ := rt.GetState(ctx, child)
				if ts.Status != durable.RunCancelled || cs.Status != durable.RunCancelled {
					t.Fatalf("%s pause %s async=%v: top %s child %s", name, pauseTarget, async, ts.Status, cs.Status)
				}
				if IsPaused(ts) || IsPaused(cs) {
					t.Fatalf("%s: cancelled run still flagged paused", name)
				}
				ilCheckNoOpenAttempt(t, rt, top)
				ilCheckNoOpenAttempt(t, rt, child)
			}
		}
	}
}
