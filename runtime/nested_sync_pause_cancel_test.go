package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// top -> (sync) mid -> (sync) leaf; leaf's llm_call blocks until released
// or cut.
func nestedSyncWorkflows() ([]*Workflow, map[durable.EffectType]Handler, chan struct{}, chan struct{}) {
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
	call := func(child string) NodeFunc {
		return errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{"workflow_id": child}, ResultKey: "sub"}, "after")
		})
	}
	after := errNode(func(run *durable.RunState) StepPlan { return Next("done") })
	done := errNode(func(run *durable.RunState) StepPlan {
		sub, _ := run.Vars["sub"].(map[string]any)
		return Complete(map[string]any{"sub": sub["output"], "r": run.Vars["r"]})
	})
	wfs := []*Workflow{
		{ID: "top", Entry: "call", Nodes: map[string]NodeFunc{"call": call("mid"), "after": after, "done": done}},
		{ID: "mid", Entry: "call", Nodes: map[string]NodeFunc{"call": call("leaf"), "after": after, "done": done}},
		{ID: "leaf", Entry: "llm", Nodes: map[string]NodeFunc{
			"llm": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "after")
			}),
			"after": after, "done": done}},
	}
	return wfs, map[durable.EffectType]Handler{durable.EffectLLMCall: h}, entered, release
}

func startNestedSync(t *testing.T, rt *Runtime, entered chan struct{}) (ids map[string]string, done chan *durable.RunState) {
	ctx := context.Background()
	if _, err := rt.Start(ctx, StartParams{WorkflowID: "top", RunID: "top"}); err != nil {
		t.Fatal(err)
	}
	done = make(chan *durable.RunState, 1)
	go func() { st, _ := rt.Tick(ctx, "top", TickOptions{}); done <- st }()
	<-entered
	ids = map[string]string{"top": "top"}
	mids, _ := rt.store.RunListChildren(ctx, "top", "")
	ids["mid"] = mids[0].RunID
	leaves, _ := rt.store.RunListChildren(ctx, ids["mid"], "")
	ids["leaf"] = leaves[0].RunID
	return ids, done
}

func checkNestedSync(t *testing.T, rt *Runtime, ids map[string]string, label string) map[string]*durable.RunState {
	ctx := context.Background()
	out := map[string]*durable.RunState{}
	for _, k := range []string{"top", "mid", "leaf"} {
		st, _ := rt.store.RunGet(ctx, ids[k])
		out[k] = st
		recs, _ := rt.store.LedgerList(ctx, &store.LedgerListParams{RunID: ids[k]})
		ends := map[string]int{}
		var started []string
		for _, r := range recs {
			if r.Status == durable.StepStarted {
				started = append(started, r.StepID)
			} else if r.StepID != "" {
				ends[r.StepID]++
			}
		}
		for _, s := range started {
			if ends[s] != 1 {
				t.Errorf("%s: run %s attempt %s has %d ends (ledger %v)", label, k, s, ends[s], ilLedgerStatuses(rt, ids[k]))
			}
		}
	}
	return out
}

func TestNestedSyncPauseMidEffect(t *testing.T) {
	for _, target := range []string{"top", "mid", "leaf"} {
		t.Run(target, func(t *testing.T) {
			ctx := context.Background()
			wfs, hs, entered, release := nestedSyncWorkflows()
			rt := errRuntime(t, memory.New(), Config{Handlers: hs}, wfs...)
			ids, done := startNestedSync(t, rt, entered)
			perr := make(chan error, 1)
			go func() { _, err := rt.Pause(ctx, ids[target], "hold"); perr <- err }()
			ilAwaitPauseRequest(rt, ids[target], 1_000_000)
			close(release)
			<-done
			if err := <-perr; err != nil {
				t.Fatal(err)
			}
			if _, err := rt.ResumeRun(ctx, ids[target]); err != nil {
				t.Fatal(err)
			}
			sts := checkNestedSync(t, rt, ids, "pause "+target)
			for k, st := range sts {
				if st.Status != durable.RunCompleted {
					t.Errorf("pause %s: %s is %s (%+v), want completed", target, k, st.Status, st.Waiting)
				}
			}
		})
	}
}

func TestNestedSyncCancelMidEffect(t *testing.T) {
	for _, target := range []string{"top", "mid", "leaf"} {
		t.Run(target, func(t *testing.T) {
			ctx := context.Background()
			wfs, hs, entered, _ := nestedSyncWorkflows()
			rt := errRuntime(t, memory.New(), Config{Handlers: hs}, wfs...)
			ids, done := startNestedSync(t, rt, entered)
			if _, err := rt.Cancel(ctx, ids[target], "stop"); err != nil {
				t.Fatal(err)
			}
			<-done
			sts := checkNestedSync(t, rt, ids, "cancel "+target)
			desc := fmt.Sprintf("top %s %q, mid %s %q, leaf %s %q", sts["top"].Status, sts["top"].Error,
				sts["mid"].Status, sts["mid"].Error, sts["leaf"].Status, sts["leaf"].Error)
			t.Log(desc)
			below := map[string][]string{"top": {"top", "mid", "leaf"}, "mid": {"mid", "leaf"}, "leaf": {"leaf"}}[target]
			for _, k := range below {
				if sts[k].Status != durable.RunCancelled {
					t.Errorf("cancel %s: %s", target, desc)
				}
			}
			for k, st := range sts {
				if !st.Status.Terminal() {
					t.Errorf("cancel %s: %s left %s", target, k, st.Status)
				}
			}
		})
	}
}
