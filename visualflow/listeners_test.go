package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// FlowInfo.StartListeners starts a run's "On Event" listeners as a
// gateway does (gateway-api §8.5 step 8): children in the root's session
// with copies of its _runtime and _limits, each at its event wait; a
// second call starts nothing more, a listener left running is ticked on,
// and StopListeners cancels the idle ones.
func TestStartAndStopListeners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "ev"}}, Flows: map[string]string{"ev": "flows/ev.json"}},
		Flows: map[string]map[string]any{"ev": mustFlow(t, eventsFlow)},
	}
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, ok := cb.Flow("ev")
	if !ok || len(fi.Listeners) != 1 {
		t.Fatalf("flow ev: %v, listeners %v; want one listener", ok, fi)
	}
	rt := newTestRuntime(t, memory.New(), nil, cb.Workflows...)
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID, ActorID: "gateway",
		Vars: map[string]any{"_runtime": map[string]any{"x": "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids) != 1 || ids[0] != ListenerRunID(root, 0) {
		t.Fatalf("StartListeners = %v, %v; want [%s]", ids, err, ListenerRunID(root, 0))
	}
	l, err := rt.GetState(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != durable.RunWaiting || l.Waiting.WaitKey != "evt:session:"+root+":ping" ||
		l.ParentRunID != root || l.SessionID != root || l.ActorID != "gateway" || runtimeX(l) != "y" {
		t.Fatalf("listener %s: status %s wait %+v parent %q session %q actor %q _runtime %v; want waiting on the root's session event, "+
			"child of the root in its session, its actor and _runtime", l.RunID, l.Status, l.Waiting, l.ParentRunID, l.SessionID, l.ActorID, l.Vars["_runtime"])
	}
	if again, err := fi.StartListeners(ctx, rt, root, 0); err != nil || len(again) != 1 || again[0] != ids[0] {
		t.Fatalf("second StartListeners = %v, %v; want the same listener, none started", again, err)
	}
	if kids, _ := rt.Store().RunListChildren(ctx, root, ""); len(kids) != 1 {
		t.Fatalf("root has %d children after two starts; want 1", len(kids))
	}

	// The root's own emit reaches its listener, which waits again.
	st, err := rt.Tick(ctx, root, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted || st.Output["delivered"] != int64(1) {
		t.Fatalf("root: %v, %v; want completed having delivered to one listener", st, err)
	}
	if err := fi.StopListeners(ctx, rt, root); err != nil {
		t.Fatal(err)
	}
	if l, _ = rt.GetState(ctx, ids[0]); l.Status != durable.RunCancelled || jsonText(t, l.Vars["last"]) != jsonText(t, map[string]any{"n": int64(1)}) {
		t.Fatalf("listener after StopListeners: %s, last %v; want cancelled, having received the event", l.Status, l.Vars["last"])
	}

	// A listener a kill left running before its first wait is ticked on.
	root2, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.Listeners[0], RunID: ListenerRunID(root2, 0),
		ParentRunID: root2, SessionID: root2}); err != nil {
		t.Fatal(err)
	}
	if _, err := fi.StartListeners(ctx, rt, root2, 0); err != nil {
		t.Fatal(err)
	}
	if l, _ = rt.GetState(ctx, ListenerRunID(root2, 0)); l.Status != durable.RunWaiting {
		t.Fatalf("listener left running: %s after StartListeners; want ticked to its wait", l.Status)
	}
}

// runtimeX is vars._runtime.x of run, or nil.
func runtimeX(run *durable.RunState) any {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	return rt["x"]
}
