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

// Race: a cancel of the parent against the answer that ends its child.
func TestInterleavingCancelParentRacesChildAnswer(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, async := range []bool{true, false} {
			for i := 0; i < 6; i++ {
				ctx := context.Background()
				rt := errRuntime(t, mk(), Config{}, ilWorkflows(async)...)
				top, child := ilSetup(t, rt)
				var wg sync.WaitGroup
				wg.Add(2)
				var cerr, rerr error
				go func() { defer wg.Done(); _, cerr = rt.Cancel(ctx, top, "stop") }()
				go func() {
					defer wg.Done()
					_, rerr = rt.Resume(ctx, ResumeParams{RunID: child, WaitKey: "", Payload: map[string]any{"a": 1}})
				}()
				wg.Wait()
				if cerr != nil {
					t.Fatalf("%s: cancel: %v", name, cerr)
				}
				_ = rerr
				ts, _ := rt.GetState(ctx, top)
				cs, _ := rt.GetState(ctx, child)
				if !ts.Status.Terminal() || !cs.Status.Terminal() {
					t.Fatalf("%s async=%v: top %s child %s left unfinished", name, async, ts.Status, cs.Status)
				}
				ilCheckNoOpenAttempt(t, rt, top)
				ilCheckNoOpenAttempt(t, rt, child)
			}
		}
	}
}

// Race: a pause of the parent against the answer that ends its child; then
// ResumeRun (on a fresh Runtime over the same store, as after a restart)
// must hand the parent its child's end and complete it.
func TestInterleavingPauseParentRacesChildAnswer(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, async := range []bool{true, false} {
			for i := 0; i < 6; i++ {
				ctx := context.Background()
				st := mk()
				rt := errRuntime(t, st, Config{}, ilWorkflows(async)...)
				top, child := ilSetup(t, rt)
				var wg sync.WaitGroup
				wg.Add(2)
				var perr error
				go func() { defer wg.Done(); _, perr = rt.Pause(ctx, top, "hold") }()
				go func() {
					defer wg.Done()
					_, _ = rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}})
				}()
				wg.Wait()
				if perr != nil {
					t.Fatalf("pause: %v", perr)
				}
				rt2 := errRuntime(t, st, Config{}, ilWorkflows(async)...)
				if i%2 == 0 {
					rt2 = rt
				}
				ts, err := rt2.ResumeRun(ctx, top)
				if err != nil {
					t.Fatalf("resume-run: %v", err)
				}
				if ts.Status != durable.RunCompleted {
					t.Fatalf("%s async=%v i=%d: top %s (waiting %+v), want completed", name, async, i, ts.Status, ts.Waiting)
				}
				ilCheckNoOpenAttempt(t, rt, top)
			}
		}
	}
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
			top, _ := rt.Start(ctx, StartParams{WorkflowID: "top"})
			done := make(chan *durable.RunState, 1)
			go func() { st, _ := rt.Tick(ctx, top, TickOptions{}); done <- st }()
			<-entered
			kids, _ := rt.store.RunListChildren(ctx, top, "")
			child := kids[0].RunID
			pid := child
			if target == "top" {
				pid = top
			}
			perr := make(chan error, 1)
			go func() { _, err := rt.Pause(ctx, pid, "hold"); perr <- err }()
			for !rt.Busy(pid) {
			}
			// give the pause time to make its request
			for i := 0; i < 1000; i++ {
				l := rt.ref(pid)
				l.sigMu.Lock()
				n := l.pauseRequests
				l.sigMu.Unlock()
				rt.unref(pid, l)
				if n > 0 {
					break
				}
			}
			close(release)
			st := <-done
			if err := <-perr; err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: after pause top=%s", name, target, st.Status)
			st, err := rt.ResumeRun(ctx, pid)
			if err != nil {
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
			top, _ := rt.Start(ctx, StartParams{WorkflowID: "top"})
			done := make(chan *durable.RunState, 1)
			go func() { st, _ := rt.Tick(ctx, top, TickOptions{}); done <- st }()
			<-entered
			kids, _ := rt.store.RunListChildren(ctx, top, "")
			child := kids[0].RunID
			if _, err := rt.Cancel(ctx, top, "stop"); err != nil {
				t.Fatal(err)
			}
			<-done
			ts, _ := rt.GetState(ctx, top)
			cs, _ := rt.GetState(ctx, child)
			if ts.Status != durable.RunCancelled || cs.Status != durable.RunCancelled {
				t.Fatalf("%s: top %s child %s", name, ts.Status, cs.Status)
			}
			recs, _ := rt.store.LedgerList(ctx, &store.LedgerListParams{RunID: child})
			var sts []string
			for _, r := range recs {
				sts = append(sts, string(r.Status))
			}
			t.Logf("%s async=%v child ledger %v", name, async, sts)
			recs, _ = rt.store.LedgerList(ctx, &store.LedgerListParams{RunID: top})
			sts = nil
			for _, r := range recs {
				sts = append(sts, string(r.Status))
			}
			t.Logf("%s async=%v top ledger %v", name, async, sts)
			ilCheckNoOpenAttempt(t, rt, top)
			ilCheckNoOpenAttempt(t, rt, child)
		}
	}
}

func TestInterleavingCancelChildRacesAnswer(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, async := range []bool{true, false} {
			for i := 0; i < 6; i++ {
				ctx := context.Background()
				rt := errRuntime(t, mk(), Config{}, ilWorkflows(async)...)
				top, child := ilSetup(t, rt)
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); _, _ = rt.Cancel(ctx, child, "stop") }()
				go func() {
					defer wg.Done()
					_, _ = rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}})
				}()
				wg.Wait()
				ts, _ := rt.GetState(ctx, top)
				cs, _ := rt.GetState(ctx, child)
				if ts.Status != durable.RunCompleted || !cs.Status.Terminal() {
					t.Fatalf("%s async=%v: top %s child %s", name, async, ts.Status, cs.Status)
				}
			}
		}
	}
}

func TestInterleavingCancelRacesResumeRun(t *testing.T) {
	for name, mk := range ilStores(t) {
		for _, async := range []bool{true, false} {
			for i := 0; i < 6; i++ {
				ctx := context.Background()
				rt := errRuntime(t, mk(), Config{}, ilWorkflows(async)...)
				top, child := ilSetup(t, rt)
				if _, err := rt.Pause(ctx, top, ""); err != nil {
					t.Fatal(err)
				}
				if _, err := rt.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}}); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				wg.Add(2)
				var cerr error
				go func() { defer wg.Done(); _, cerr = rt.Cancel(ctx, top, "stop") }()
				go func() { defer wg.Done(); _, _ = rt.ResumeRun(ctx, top) }()
				wg.Wait()
				if cerr != nil {
					t.Fatal(cerr)
				}
				ts, _ := rt.GetState(ctx, top)
				if !ts.Status.Terminal() {
					t.Fatalf("%s async=%v: top %s", name, async, ts.Status)
				}
				ilCheckNoOpenAttempt(t, rt, top)
			}
		}
	}
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
			var wg sync.WaitGroup
			wg.Add(2)
			var cerr, rerr error
			go func() { defer wg.Done(); _, cerr = a.Cancel(ctx, top, "stop") }()
			go func() {
				defer wg.Done()
				_, rerr = b.Resume(ctx, ResumeParams{RunID: child, Payload: map[string]any{"a": 1}})
			}()
			wg.Wait()
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
				top, _ := rt.Start(ctx, StartParams{WorkflowID: "top"})
				done := make(chan *durable.RunState, 1)
				go func() { st, _ := rt.Tick(ctx, top, TickOptions{}); done <- st }()
				<-entered
				kids, _ := rt.store.RunListChildren(ctx, top, "")
				child := kids[0].RunID
				pid := child
				if pauseTarget == "top" {
					pid = top
				}
				perr := make(chan error, 1)
				go func() { _, err := rt.Pause(ctx, pid, "hold"); perr <- err }()
				for i := 0; i < 100000; i++ {
					l := rt.ref(pid)
					l.sigMu.Lock()
					n := l.pauseRequests
					l.sigMu.Unlock()
					rt.unref(pid, l)
					if n > 0 {
						break
					}
				}
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
