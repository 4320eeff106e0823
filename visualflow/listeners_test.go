package visualflow

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// compileEventFlow compiles flowJSON (flow id "ev") as bundle bb@2 and
// returns it with the flow's info, which must list the given number of
// listeners.
func compileEventFlow(t *testing.T, flowJSON string, listeners int) (*CompiledBundle, *FlowInfo) {
	t.Helper()
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "ev"}}, Flows: map[string]string{"ev": "flows/ev.json"}},
		Flows: map[string]map[string]any{"ev": mustFlow(t, flowJSON)},
	}
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, ok := cb.Flow("ev")
	if !ok || len(fi.Listeners) != listeners {
		t.Fatalf("flow ev: found %v, listeners %v; want %d", ok, fi, listeners)
	}
	return cb, fi
}

// FlowInfo.StartListeners starts a run's "On Event" listeners as a
// gateway does (gateway-api §8.5 step 8): children in the root's session
// with copies of its _runtime and _limits, each at its event wait; a
// second call starts nothing more, a listener left running is ticked on,
// and StopListeners cancels the idle ones.
func TestStartAndStopListeners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cb, fi := compileEventFlow(t, eventsFlow, 1)
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

// twoListenerFlow: a root that asks the user (so it stays alive), and two
// on_event listeners: "la" on "ping" (its branch sets a var), "lb" on
// "go", whose branch waits for the event key "more" before it ends.
const twoListenerFlow = `{"id":"ev","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"}]}},
 {"id":"la","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 {"id":"set","type":"set_var","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"name","type":"string"},{"id":"value","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"name":"last"}}},
 {"id":"lb","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"go","scope":"session"}}},
 {"id":"more","type":"wait_event","data":{"pinDefaults":{"event_key":"more"},
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"event_key","type":"string"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"event_data","type":"any"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"la","sourceHandle":"exec-out","target":"set","targetHandle":"exec-in"},
 {"source":"la","sourceHandle":"payload","target":"set","targetHandle":"value"},
 {"source":"lb","sourceHandle":"exec-out","target":"more","targetHandle":"exec-in"}]}`

// twoListeners compiles twoListenerFlow into a runtime on st with claims
// owned by owner ("" for none) and returns its flow info.
func twoListeners(t *testing.T, st store.Store, owner string) (*runtime.Runtime, *FlowInfo) {
	t.Helper()
	cb, fi := compileEventFlow(t, twoListenerFlow, 2)
	reg, err := runtime.NewRegistry(cb.Workflows...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Store: st, Registry: reg}
	if owner != "" {
		cfg.Claims = &runtime.Claims{Owner: owner}
	}
	rt, err := runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt, fi
}

// rootWithListeners starts a root run of twoListeners (no claims) on st
// and its listeners, and returns the runtime, the flow, the root's id and
// the listeners' ids.
func rootWithListeners(t *testing.T, st store.Store) (*runtime.Runtime, *FlowInfo, string, []string) {
	t.Helper()
	ctx := context.Background()
	rt, fi := twoListeners(t, st, "")
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	return rt, fi, root, ids
}

// firstListenerClaimed starts a root run of twoListeners (runtime owner
// "host") and has "runner2" claim the id its first listener will take.
func firstListenerClaimed(t *testing.T) (*runtime.Runtime, *FlowInfo, string) {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	rt, fi := twoListeners(t, st, "host")
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: ListenerRunID(root, 0), Owner: "runner2", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	return rt, fi, root
}

// A listener another runner holds is that runner's to drive: the other
// listeners still start.
func TestStartListenersGoesOnPastAClaimedListener(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi, root := firstListenerClaimed(t)
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids) != 2 {
		t.Fatalf("StartListeners = %v, %v; want both listeners and no error (the claimed one is its holder's to drive)", ids, err)
	}
	if l, _ := rt.GetState(ctx, ids[1]); l.Status != durable.RunWaiting {
		t.Errorf("the unclaimed listener: %s; want started and at its event wait", l.Status)
	}
	if l, _ := rt.GetState(ctx, ids[0]); l.Status != durable.RunRunning {
		t.Errorf("the claimed listener: %s; want created and left running for its holder", l.Status)
	}
}

// A listener another call created under the same id from another state
// of the root is taken as the listener, not refused as a conflict; one of
// another workflow under that id is an error naming it.
func TestStartListenersTakesAListenerStartedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi := twoListeners(t, memory.New(), "")
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	// Another caller's listener 0, started from other root vars.
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.Listeners[0], RunID: ListenerRunID(root, 0), ParentRunID: root,
		SessionID: "s1", Vars: map[string]any{"_runtime": map[string]any{"seen": 1}}}); err != nil {
		t.Fatal(err)
	}
	// Hide it from the listing StartListeners makes first, as a race would.
	r, _ := rt.GetState(ctx, root)
	l0, err := startListener(ctx, rt, r, fi.Listeners[0], ListenerRunID(root, 0), "s1")
	if err != nil || l0.RunID != ListenerRunID(root, 0) {
		t.Fatalf("startListener over a listener started meanwhile = %v, %v; want that listener", l0, err)
	}
	if _, err := startListener(ctx, rt, r, fi.Listeners[1], ListenerRunID(root, 0), "s1"); err == nil ||
		!strings.Contains(err.Error(), fi.Listeners[1]) {
		t.Errorf("startListener over a run of another workflow: %v; want an error naming the listener", err)
	}
}

// StopListeners cancels only listeners idle at their on_event node: one
// whose branch waits for another event is left to finish it.
func TestStopListenersLeavesABranchWaitingForAnotherEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi, root, ids := rootWithListeners(t, memory.New())
	if _, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if lb, _ := rt.GetState(ctx, ids[1]); lb.Status != durable.RunWaiting || lb.CurrentNode != "more" {
		t.Fatalf("lb after go: %s at %q; want waiting at its branch's wait_event", lb.Status, lb.CurrentNode)
	}
	if err := fi.StopListeners(ctx, rt, root); err != nil {
		t.Fatal(err)
	}
	la, _ := rt.GetState(ctx, ids[0])
	lb, _ := rt.GetState(ctx, ids[1])
	if la.Status != durable.RunCancelled || lb.Status != durable.RunWaiting {
		t.Errorf("after StopListeners: la %s, lb %s; want la (idle) cancelled, lb (mid-branch) still waiting", la.Status, lb.Status)
	}
}

// A root that has ended gets no listeners: nothing would ever stop them.
func TestStartListenersStartsNoneForAnEndedRoot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi := twoListeners(t, memory.New(), "")
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, root, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("root: %v, %v", st, err)
	}
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids) != 0 {
		t.Fatalf("StartListeners on a completed root = %v, %v; want none started", ids, err)
	}
	if kids, _ := rt.Store().RunListChildren(ctx, root, ""); len(kids) != 0 {
		t.Errorf("completed root has %d children; want none", len(kids))
	}
}

// ListenerRunID is the documented id form <run id>-listener-<n>, n the
// 0-based index in FlowInfo.Listeners (docs/visualflow.md): a continued
// run, in this host or another reading the same store, finds its
// listeners under it.
func TestListenerRunIDForm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		root string
		i    int
		want string
	}{{"r1", 0, "r1-listener-0"}, {"r1", 1, "r1-listener-1"}, {"abc-def", 12, "abc-def-listener-12"}} {
		if got := ListenerRunID(c.root, c.i); got != c.want {
			t.Errorf("ListenerRunID(%q, %d) = %q, want %q", c.root, c.i, got, c.want)
		}
	}
}

// StopListeners goes on past a listener that is not idle (here left
// running for the runner that holds it) and cancels the idle ones after
// it, with the reason "Session completed" as the listeners' error.
func TestStopListenersGoesOnPastABusyListener(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi, root := firstListenerClaimed(t)
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids) != 2 {
		t.Fatalf("StartListeners = %v, %v; want both listeners", ids, err)
	}
	if err := fi.StopListeners(ctx, rt, root); err != nil {
		t.Fatal(err)
	}
	la, _ := rt.GetState(ctx, ids[0])
	lb, _ := rt.GetState(ctx, ids[1])
	if la.Status != durable.RunRunning {
		t.Errorf("the busy (claimed, running) listener: %s; want left running", la.Status)
	}
	if lb.Status != durable.RunCancelled || lb.Error != "Session completed" {
		t.Errorf("the idle listener after the busy one: %s, error %q; want cancelled with \"Session completed\"", lb.Status, lb.Error)
	}
}

// ListenerRuns lists only the listener runs of the root: a child of
// another workflow (here a run of the root's own flow) is not among them,
// and every key is a listener workflow id.
func TestListenerRunsLeaveOutOtherChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi := twoListeners(t, memory.New(), "")
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID, ParentRunID: root, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fi.StartListeners(ctx, rt, root, 0); err != nil {
		t.Fatal(err)
	}
	runs, err := fi.ListenerRuns(ctx, rt, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(fi.Listeners) {
		t.Errorf("ListenerRuns keys = %d (%v), want only the %d listener workflows", len(runs), slices.Collect(maps.Keys(runs)), len(fi.Listeners))
	}
	for _, wf := range fi.Listeners {
		if len(runs[wf]) != 1 || runs[wf][0].WorkflowID != wf {
			t.Errorf("ListenerRuns[%s] = %v, want its one listener run", wf, runs[wf])
		}
	}
}

// StartListeners ticks a listener left running at most maxSteps: one
// resumed by an event and not driven (mid-branch, at its set_var) takes
// one step and is still running, short of its next event wait.
func TestStartListenersTicksUpToMaxSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, fi, root, ids := rootWithListeners(t, memory.New())
	if _, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s1", Payload: map[string]any{"n": int64(1)}, NoDrive: true}); err != nil {
		t.Fatal(err)
	}
	if la, _ := rt.GetState(ctx, ids[0]); la.Status != durable.RunRunning {
		t.Fatalf("la after an undriven ping: %s; want running", la.Status)
	}
	if _, err := fi.StartListeners(ctx, rt, root, 1); err != nil {
		t.Fatal(err)
	}
	if la, _ := rt.GetState(ctx, ids[0]); la.Status != durable.RunRunning {
		t.Errorf("la after StartListeners with maxSteps 1: %s at %q; want still running (one step taken)", la.Status, la.CurrentNode)
	}
}

// staleChildren is a store whose RunListChildren of parent, once stale is
// set, returns the children as they were listed then: a listing read
// before another process changed a listener.
type staleChildren struct {
	store.Store
	parent string
	stale  []*durable.RunState
}

func (s *staleChildren) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	if s.stale != nil && parentID == s.parent {
		return s.stale, nil
	}
	return s.Store.RunListChildren(ctx, parentID, status)
}

// StopListeners leaves a listener an event resumed after it was read idle
// to its branch: the conditional cancel is refused (runtime.ErrRunChanged),
// which is not an error, and the event is not lost.
func TestStopListenersLeavesAListenerResumedSinceItWasRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &staleChildren{Store: memory.New()}
	rt, fi, root, ids := rootWithListeners(t, st)
	st.parent = root
	var err error
	if st.stale, err = st.Store.RunListChildren(ctx, root, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s1", NoDrive: true}); err != nil {
		t.Fatal(err)
	}
	if err := fi.StopListeners(ctx, rt, root); err != nil {
		t.Fatalf("StopListeners over a listener resumed since it was listed: %v; want no error", err)
	}
	if la, _ := rt.GetState(ctx, ids[0]); la.Status != durable.RunRunning {
		t.Errorf("la, resumed by ping after it was listed idle: %s; want left running its branch", la.Status)
	}
}
