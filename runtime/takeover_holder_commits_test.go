package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// holderCommitsStore is runner "me"'s view of a memory store shared with
// a live runner "other". Once armed on a run, "other" claims that run
// just before "me"'s first claim of it after the skip ones let through,
// and commits a change of its vars (a host's limits or vars update
// through "other": status and wait kept)
// just before "me"'s claim after that, so that the run "me" first saw
// waiting is at a new version under the same holder.
type holderCommitsStore struct {
	*memory.Store
	clock  func() time.Time
	mu     sync.Mutex
	target string // the armed run
	skip   int    // "me"'s claims of it let through first
	claims int    // "me"'s claims of it since armed
}

func (s *holderCommitsStore) arm(runID string, skip int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.target, s.skip = runID, skip
}

func (s *holderCommitsStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Owner == "me" && !p.Renew {
		s.mu.Lock()
		armed := s.target != "" && p.RunID == s.target
		n := 0
		if armed {
			s.claims++
			n = s.claims - s.skip
		}
		s.mu.Unlock()
		switch {
		case n == 1:
			if err := s.Store.RunClaim(ctx, &store.RunClaimParams{RunID: p.RunID, Owner: "other", TTL: time.Hour, Now: s.clock()}); err != nil {
				return err
			}
		case n == 2:
			run, err := s.Store.RunGet(ctx, p.RunID)
			if err != nil {
				return err
			}
			run.Vars["by_holder"] = true
			if err := s.Store.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
				return err
			}
		}
	}
	return s.Store.RunClaim(ctx, p)
}

// ResumeRun of a paused parent whose child ended during the pause hands
// the parent the child's end. When another runner holds the parent at
// that hand-off and works on it (it commits meanwhile: no idle run to
// take over), the hand-off is that runner's, or Recover's: the lift is
// committed and ResumeRun returns the run, as its comment in control.go
// says, and the runtime keeps the hand-off for its retries. Would break
// if ResumeRun failed on the hand-off's ErrRunClaimed (a host would take
// its lifted pause for a refused one).
func TestResumeRunLeavesAChildEndToTheParentsHolder(t *testing.T) {
	t.Parallel()
	var clk atomic.Int64
	clk.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, clk.Load()).UTC() }
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "after")
		}),
		"after": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{})
		}),
	}}
	child := &runtime.Workflow{ID: "child", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "go", "scope": "global"}}, "")
		}),
	}}
	st := &holderCommitsStore{Store: memory.New(), clock: clock}
	reg, _ := runtime.NewRegistry(parent, child)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only to fail a hung test
	defer cancel()
	pid, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if p, err := rt.Tick(ctx, pid, runtime.TickOptions{}); err != nil || p.Status != durable.RunWaiting {
		t.Fatalf("parent: %v, %v; want waiting on its child", p, err)
	}
	if _, err := rt.Pause(ctx, pid, "host"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "global"}); err != nil {
		t.Fatal(err)
	}
	// The lift takes the parent's first claim; "other" holds it at the
	// hand-off, and commits while "me" waits for it.
	st.arm(pid, 1)
	got, err := rt.ResumeRun(ctx, pid)
	if err != nil {
		t.Fatalf("ResumeRun = %v; want the run (its pause lifted), the child's end left to the parent's holder", err)
	}
	if runtime.IsPaused(got) || got.Status != durable.RunWaiting || got.Vars["by_holder"] != true {
		t.Fatalf("after ResumeRun: %s paused=%v by_holder=%v; want the lift committed, the parent waiting as its holder left it",
			got.Status, runtime.IsPaused(got), got.Vars["by_holder"])
	}
	// The holder stops without handing it over: the runtime's retries do.
	if err := st.Store.RunRelease(ctx, pid, "other"); err != nil {
		t.Fatal(err)
	}
	clk.Add(int64(time.Minute))
	rt.RetryFollowUps(ctx)
	if p, _ := rt.GetState(ctx, pid); p.Status != durable.RunCompleted {
		t.Fatalf("parent after the runtime's retries: %s; want completed (the child's end kept for them)", p.Status)
	}
}
