package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// killedAfterLeafCancel is a process's view of a store that dies right
// after the commit cancelling the sync child ("leaf") is durable. A
// commit cancelling the background child ("asker") waits for that kill
// and never lands, whatever order the Cancel takes them in.
type killedAfterLeafCancel struct {
	store.Wrapper
	mu       sync.Mutex
	dead     bool
	leafDone chan struct{}
}

func (s *killedAfterLeafCancel) isDead() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.dead }

func (s *killedAfterLeafCancel) kill() { s.mu.Lock(); s.dead = true; s.mu.Unlock() }

func (s *killedAfterLeafCancel) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run.Status == durable.RunCancelled && p.Run.WorkflowID == "asker" {
		select {
		case <-s.leafDone:
		case <-time.After(5 * time.Second):
		}
		s.kill()
		return errKilled
	}
	if s.isDead() {
		return errKilled
	}
	err := s.Store.RunCommit(ctx, p)
	if err == nil && p.Run.Status == durable.RunCancelled && p.Run.WorkflowID == "leaf" {
		s.kill()
		close(s.leafDone)
		return errKilled
	}
	return err
}

func (s *killedAfterLeafCancel) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunGet(ctx, id)
}

func (s *killedAfterLeafCancel) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.LedgerList(ctx, p)
}

// setUpKilledTreeCancel makes run "top" (its async child "asker"
// waiting on a person, its sync child "leaf" at work) and a Cancel of top
// killed right after the commit cancelling leaf: top is left running at
// its sync call, asker waiting. It returns the store, the workflows, the
// handlers' counter, and top's and asker's ids.
func setUpKilledTreeCancel(t *testing.T) (*memory.Store, []*Workflow, *shipCounter, string, string) {
	t.Helper()
	ctx := context.Background()
	base := memory.New()
	counter := &shipCounter{started: make(chan struct{}, 1)}
	ask := func(next string) NodeFunc {
		return errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, next)
		})
	}
	wfs := []*Workflow{
		{ID: "top", Entry: "bg", Nodes: map[string]NodeFunc{
			"bg": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": "asker", "async": true}, ResultKey: "bg"}, "gate")
			}),
			"gate": ask("spawn"),
			"spawn": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": "leaf"}, ResultKey: "sub"}, "ship")
			}),
			"ship": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: "ship", Payload: map[string]any{}, ResultKey: "s"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
		{ID: "asker", Entry: "ask", Nodes: map[string]NodeFunc{
			"ask":  ask("done"),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
		{ID: "leaf", Entry: "work", Nodes: map[string]NodeFunc{
			"work": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: "work", Payload: map[string]any{}, ResultKey: "w"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
	}
	const top = "top-run"
	viewA := &killedAfterLeafCancel{Wrapper: store.Wrapper{Store: base}, leafDone: make(chan struct{})}
	rtA := errRuntime(t, viewA, Config{Handlers: counter.handlers()}, wfs...)
	if _, err := rtA.Start(ctx, StartParams{WorkflowID: "top", RunID: top}); err != nil {
		t.Fatal(err)
	}
	st, err := rtA.Tick(ctx, top, TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("top %v, %v; want waiting at its gate", st, err)
	}
	kids, err := base.RunListChildren(ctx, top, "")
	if err != nil || len(kids) != 1 || kids[0].Status != durable.RunWaiting {
		t.Fatalf("children %v, %v; want the asker, waiting", kids, err)
	}
	asker := kids[0].RunID
	resumed := make(chan error, 1)
	go func() {
		_, err := rtA.Resume(ctx, ResumeParams{RunID: top, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"ok": true}})
		resumed <- err
	}()
	select {
	case <-counter.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the sync child's effect never started")
	}
	if _, err := rtA.Cancel(ctx, top, "user cancelled"); err == nil {
		t.Fatal("the kill never happened")
	}
	<-resumed
	if got, _ := base.RunGet(ctx, top); got.Status != durable.RunRunning {
		t.Fatalf("top %s before the restart; want running at its sync call", got.Status)
	}
	if got, _ := base.RunGet(ctx, asker); got.Status != durable.RunWaiting {
		t.Fatalf("asker %s before the restart; want waiting (its cancel never landed)", got.Status)
	}

	return base, wfs, counter, top, asker
}

// A Cancel of "top" is killed after the commit that cancels top's sync
// child and before the one that cancels top's other child ("asker", an
// async child waiting on a person). When top is ticked again, its call
// finds the sync child cancelled by a cancel aimed at top, and top is
// cancelled, as that Cancel would have done. That Cancel would also have
// cancelled asker (Cancel ends a run's unfinished descendants), and the
// async variant of the same recovery (resumeParent → cancelTree) does
// cancel the parent "with its unfinished descendants". The sync replay
// only commits top cancelled: asker is left waiting for an answer under a
// cancelled tree, listed as waiting, for good.
func TestReplayedSyncChildTreeCancelAlsoCancelsTheParentsOtherDescendants(t *testing.T) {
	ctx := context.Background()
	base, wfs, counter, top, asker := setUpKilledTreeCancel(t)

	rtB := errRuntime(t, base, Config{Handlers: counter.handlers()}, wfs...)
	st, err := rtB.Tick(ctx, top, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCancelled {
		t.Fatalf("top %s (%q); want cancelled by the replay", st.Status, st.Error)
	}
	got, err := base.RunGet(ctx, asker)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCancelled || got.Error != "user cancelled" {
		t.Errorf("top's other child %s (%q) once top was cancelled by the replay; want cancelled (%q), as the Cancel of top's tree would have",
			got.Status, got.Error, "user cancelled")
	}
}

// The process replaying top dies right after top's cancelled commit,
// before the follow-up that cancels top's other descendants: asker is
// then a live child under a cancelled parent. An answer for it is
// refused, and asker cancels itself with its parent's reason rather than
// going on (tick.go endUnderCancelledParent).
func TestReplayedSyncChildTreeCancelKilledBeforeTheDescendantsEnds(t *testing.T) {
	ctx := context.Background()
	base, wfs, counter, top, asker := setUpKilledTreeCancel(t)

	viewB := &killedAfterTopCancel{Wrapper: store.Wrapper{Store: base}}
	rtB := errRuntime(t, viewB, Config{Handlers: counter.handlers()}, wfs...)
	_, _ = rtB.Tick(ctx, top, TickOptions{})
	if got, _ := base.RunGet(ctx, top); got.Status != durable.RunCancelled {
		t.Fatalf("top %s; want cancelled by the replay before the kill", got.Status)
	}
	waiting, err := base.RunGet(ctx, asker)
	if err != nil || waiting.Status != durable.RunWaiting {
		t.Fatalf("asker %v, %v; want still waiting (the kill came first)", waiting, err)
	}

	rtC := errRuntime(t, base, Config{Handlers: counter.handlers()}, wfs...)
	_, err = rtC.Resume(ctx, ResumeParams{RunID: asker, WaitKey: waiting.Waiting.WaitKey, Payload: map[string]any{"ok": true}})
	var stale *StaleResumeError
	if !errors.As(err, &stale) {
		t.Errorf("answer for asker under its cancelled parent: %v; want a StaleResumeError", err)
	}
	got, err := base.RunGet(ctx, asker)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCancelled || got.Error != "user cancelled" {
		t.Errorf("asker %s (%q) once answered under its cancelled parent; want cancelled (%q)", got.Status, got.Error, "user cancelled")
	}
}

// killedAfterTopCancel is a process's view of a store that dies right
// after the commit cancelling run "top" is durable.
type killedAfterTopCancel struct {
	store.Wrapper
	mu   sync.Mutex
	dead bool
}

func (s *killedAfterTopCancel) isDead() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.dead }

func (s *killedAfterTopCancel) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.isDead() {
		return errKilled
	}
	err := s.Store.RunCommit(ctx, p)
	if err == nil && p.Run.Status == durable.RunCancelled && p.Run.WorkflowID == "top" {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		return errKilled
	}
	return err
}

func (s *killedAfterTopCancel) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunGet(ctx, id)
}

func (s *killedAfterTopCancel) RunListChildren(ctx context.Context, id string, status durable.RunStatus) ([]*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunListChildren(ctx, id, status)
}

// lostTopCancelAnswer is a store whose commit cancelling run "top" lands
// but whose answer is lost once (a network error after the write): the
// process lives on, and every later call goes through.
type lostTopCancelAnswer struct {
	store.Wrapper
	mu   sync.Mutex
	lost bool
}

var errLostAnswer = errors.New("connection reset after the commit")

func (s *lostTopCancelAnswer) RunCommit(ctx context.Context, p *store.CommitParams) error {
	err := s.Store.RunCommit(ctx, p)
	if err == nil && p.Run.Status == durable.RunCancelled && p.Run.WorkflowID == "top" {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.lost {
			s.lost = true
			return errLostAnswer
		}
	}
	return err
}

// The replay of top finds its sync child cancelled by the tree cancel of
// top and commits top cancelled; the store made that commit but its
// answer was lost. The follow-up that cancels top's other unfinished
// descendants (asker, waiting on a person) must not be lost with it: it
// is kept for RetryFollowUps, as follow-ups "whose commit's answer was
// lost after the store had made it" are (followretry.go). Today it is
// queued only after a commit that reported success, so asker stays
// waiting under its cancelled parent for good in a live process (no
// retry, no Recover picks it up: top is terminal).
func TestReplayedSyncChildTreeCancelWhoseCommitAnswerIsLostStillCancelsTheDescendants(t *testing.T) {
	ctx := context.Background()
	base, wfs, counter, top, asker := setUpKilledTreeCancel(t)

	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	view := &lostTopCancelAnswer{Wrapper: store.Wrapper{Store: base}}
	rtB := errRuntime(t, view, Config{Handlers: counter.handlers(), Clock: clock}, wfs...)
	_, err := rtB.Tick(ctx, top, TickOptions{})
	if !errors.Is(err, errLostAnswer) {
		t.Fatalf("tick of top: %v; want the lost answer", err)
	}
	if got, _ := base.RunGet(ctx, top); got.Status != durable.RunCancelled {
		t.Fatalf("top %s; want cancelled (the commit landed)", got.Status)
	}
	// The host (or the scheduler) ticks top again, and the retries come due.
	if _, err := rtB.Tick(ctx, top, TickOptions{}); err != nil {
		t.Fatalf("second tick of the cancelled top: %v", err)
	}
	for i := 0; i < 3; i++ {
		now.Add(int64(10 * time.Minute))
		rtB.RetryFollowUps(ctx)
	}
	got, err := base.RunGet(ctx, asker)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCancelled || got.Error != "user cancelled" {
		t.Errorf("asker %s (%q) after top's cancelled commit (answer lost) and the follow-up retries; want cancelled (%q) as top's tree cancel would have",
			got.Status, got.Error, "user cancelled")
	}
}
