package runtime_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// gatedCommits holds back two commits: the first one carrying vars.marker
// (runner a's host update, stalled on its way to the store) until releaseA
// closes, and the resume commit of the listener (runner b's delivery, a
// commit with records) until releaseB closes.
type gatedCommits struct {
	*memory.Store
	aFirst   atomic.Bool
	aStalled chan struct{}
	releaseA chan struct{}
	bAtGate  chan struct{}
	releaseB chan struct{}
	once     sync.Once
	aDone    atomic.Int32
}

func (s *gatedCommits) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.Vars["marker"] == true {
		if s.aFirst.CompareAndSwap(false, true) {
			close(s.aStalled)
			<-s.releaseA
		}
		err := s.Store.RunCommit(ctx, p)
		if err == nil {
			s.aDone.Add(1)
		}
		return err
	}
	if len(p.Records) > 0 && p.Run != nil && p.Run.Status != durable.RunWaiting {
		s.once.Do(func() { close(s.bAtGate) })
		<-s.releaseB
	}
	return s.Store.RunCommit(ctx, p)
}

// A host update whose claim another runner took over (claimHeld's
// takeover of an idle waiting run, fenced by an unchanged commit) ends
// with ErrRunClaimed once the fence refused its commit, as
// docs/architecture.md promises a fenced holder. It used to reload and
// commit again (the loss not known before its next renewal), and that
// commit made the taker's event delivery conflict: the event was lost.
func TestHostUpdateEndsWhenItsClaimWasTakenOver(t *testing.T) {
	listener := &runtime.Workflow{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "ping", "scope": "session"}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"got": run.Vars["evt"] != nil})
		}),
	}}
	st := &gatedCommits{Store: memory.New(), aStalled: make(chan struct{}), releaseA: make(chan struct{}),
		bAtGate: make(chan struct{}), releaseB: make(chan struct{})}
	mk := func(owner string) *runtime.Runtime {
		reg, _ := runtime.NewRegistry(listener)
		// Renewals every 20 s (TTL/3): runner a has not learnt its loss
		// when its commit comes back, as within the usual second.
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
			Claims: &runtime.Claims{Owner: owner, TTL: time.Minute, RenewEvery: 20 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a, b := mk("a"), mk("b")
	ctx := context.Background()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "listen", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", got, err)
	}
	updErr := make(chan error, 1)
	go func() {
		updErr <- a.UpdateVars(ctx, id, func(vars map[string]any) (bool, error) {
			vars["marker"] = true
			return true, nil
		})
	}()
	<-st.aStalled // runner a holds the claim, its commit stalled
	type emitted struct {
		ids []string
		err error
	}
	emitDone := make(chan emitted, 1)
	go func() {
		ids, err := b.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s1"})
		emitDone <- emitted{ids, err}
	}()
	select {
	case <-st.bAtGate: // b took the run over (fence + claim) and resumes it
	case e := <-emitDone:
		t.Fatalf("EmitEvent ended before committing its resume: %v %v", e.ids, e.err)
	case <-time.After(10 * time.Second):
		t.Fatal("runner b never reached its resume commit")
	}
	close(st.releaseA) // runner a's stalled commit reaches the store now
	aErr := <-updErr
	close(st.releaseB)
	e := <-emitDone
	run, _ := a.GetState(ctx, id)
	t.Logf("runner a's UpdateVars: %v; a's marker commits: %d", aErr, st.aDone.Load())
	t.Logf("runner b's EmitEvent: delivered %v, err %v; run %s evt=%v", e.ids, e.err, run.Status, run.Vars["evt"])
	if aErr == nil || st.aDone.Load() > 0 {
		t.Errorf("runner a committed its host update after runner b took its claim over (UpdateVars err = %v); want ErrRunClaimed and nothing committed", aErr)
	}
	if run.Status != durable.RunCompleted {
		t.Errorf("the event delivered by the runner that took the listener over was lost: run %s, EmitEvent = %v, %v", run.Status, e.ids, e.err)
	}
	if aErr != nil && !errors.Is(aErr, runtime.ErrRunClaimed) {
		t.Errorf("UpdateVars error %v, want ErrRunClaimed", aErr)
	}
}
