package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// The marker a cancel leaves (vars._runtime.cancelled_with) sits at a
// path the offloading decorator moves out of a terminal run's stored
// state once it is larger than MaxInlineBytes (vars._… at depth ≥2; only
// the memory span index and the identity members are kept inline). A
// cancelled child's stored marker is then an artifact ref: cancelCovering
// reads no run_id / reason from it, and a parent that a killed Cancel of
// its own tree left waiting on the child is resumed with the child's
// cancelled end and goes on (ships) instead of being cancelled. Same
// stack as crashtest's (offload with a small threshold); the reason is a
// long one (an agent's explanation, a stack trace).
func TestTreeCancelMarkerSurvivesOffloadingOfTheCancelledChild(t *testing.T) {
	ctx := context.Background()
	base := offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})
	wfs, counter, leaf, reason := killedTreeCancelOfTop(t, base, nil)
	if got, _ := base.RunGet(ctx, leaf); got.Status != durable.RunCancelled {
		t.Fatalf("child %s; want cancelled before the kill", got.Status)
	}
	if got, _ := base.RunGet(ctx, topRun); got.Status != durable.RunWaiting {
		t.Fatalf("top %s; want still waiting on its child (the kill came first)", got.Status)
	}

	expectTopCancelledWhenNotified(t, errRuntime(t, base, Config{Handlers: counter.handlers()}, wfs...), base, leaf, reason, counter)
}

// A cancelled child stored before the offloading decorator kept the
// marker inline has its marker's reason as an artifact ref: the parent's
// resume restores it through the runtime's artifact store and still finds
// the cancel covered the parent.
func TestTreeCancelMarkerOffloadedBeforeTheFixIsRestored(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	arts := artifact.NewMemory()
	wfs, counter, leaf, reason := killedTreeCancelOfTop(t, base, arts)
	// The child as an offloading store wrote it before the fix.
	child, err := base.RunGet(ctx, leaf)
	if err != nil || child.Status != durable.RunCancelled {
		t.Fatalf("child %v, %v; want cancelled before the kill", child, err)
	}
	rt := child.Vars["_runtime"].(map[string]any)
	with, err := artifact.Offload(ctx, arts, rt[cancelledWithKey], artifact.OffloadOptions{
		RunID: leaf, MaxInlineBytes: 100, RootPath: "vars._runtime." + cancelledWithKey,
		BaseTags: map[string]string{"source": artifact.SourceRunVars},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := with.(map[string]any); !artifact.IsRef(m["reason"]) {
		t.Fatalf("marker %v; want its reason a ref", with)
	}
	rt[cancelledWithKey] = with
	if err := base.RunCommit(ctx, &store.CommitParams{Run: child}); err != nil {
		t.Fatal(err)
	}

	expectTopCancelledWhenNotified(t, errRuntime(t, base, Config{Handlers: counter.handlers(), Artifacts: arts}, wfs...), base, leaf, reason, counter)
}

// expectTopCancelledWhenNotified has rt (another runner) hand topRun the
// end of its cancelled child leaf, and checks that topRun is cancelled
// with the Cancel's reason and never shipped: the cancel was aimed at it.
func expectTopCancelledWhenNotified(t *testing.T, rt *Runtime, base store.Store, leaf, reason string, counter *shipCounter) {
	t.Helper()
	ctx := context.Background()
	if err := rt.NotifyChildEnded(ctx, leaf); err != nil {
		t.Fatal(err)
	}
	got, err := base.RunGet(ctx, topRun)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCancelled || got.Error != reason || counter.count() != 0 {
		t.Errorf("top %s (%.40q…), shipped %d time(s); want cancelled with the Cancel's reason, never shipped (the cancel was aimed at it)",
			got.Status, got.Error, counter.count())
	}
}

// topRun is the id of the run killedTreeCancelOfTop cancels.
const topRun = "top-run"

// killedTreeCancelOfTop starts topRun (shipAfterChild(true)) over base
// until it waits on its child, then cancels it with a long reason through
// a view of base killed right after the child's cancelled commit. It
// returns the workflows, the ship counter, the child's id and the reason.
func killedTreeCancelOfTop(t *testing.T, base store.Store, arts artifact.Store) ([]*Workflow, *shipCounter, string, string) {
	t.Helper()
	ctx := context.Background()
	wfs := shipAfterChild(true)
	counter := &shipCounter{started: make(chan struct{}, 1)}
	const top = topRun
	viewA := &killedAfterCancelBelow{Wrapper: store.Wrapper{Store: base}, root: top}
	rtA := errRuntime(t, viewA, Config{Handlers: counter.handlers(), Artifacts: arts}, wfs...)
	if _, err := rtA.Start(ctx, StartParams{WorkflowID: "top", RunID: top}); err != nil {
		t.Fatal(err)
	}
	parked, err := rtA.Tick(ctx, top, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := WaitedChild(parked)
	if leaf == "" {
		t.Fatalf("top %s; want waiting on its child", parked.Status)
	}
	reason := "stopped by the operator: " + strings.Repeat("the session went off course; ", 8)
	if _, err := rtA.Cancel(ctx, top, reason); err == nil {
		t.Fatal("the kill never happened")
	}
	return wfs, counter, leaf, reason
}
