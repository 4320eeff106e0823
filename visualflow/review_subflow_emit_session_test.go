package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// The root flow calls a subflow that emits a session-scoped event which
// the root flow's own "On Event" listener handles.
const emitViaSubflowRoot = `{"id":"ev","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"sub","type":"subflow","data":{"subflowId":"child","inputs":[{"id":"exec-in","type":"execution"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 {"id":"count","type":"set_var","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"name","type":"string"},{"id":"value","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"name":"last"}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},
 {"source":"listen","sourceHandle":"exec-out","target":"count","targetHandle":"exec-in"},
 {"source":"listen","sourceHandle":"payload","target":"count","targetHandle":"value"}]}`

const emitViaSubflowChild = `{"id":"child","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"emit","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}],"pinDefaults":{"payload":{"n":1}},"effectConfig":{"name":"ping"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"emit","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"}]}`

func runEmitViaSubflow(t *testing.T, start runtime.StartParams) (delivered any, last any) {
	t.Helper()
	ctx := context.Background()
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{BundleFormatVersion: "1", BundleID: "bb", BundleVersion: "2",
			Entrypoints: []bundle.Entrypoint{{FlowID: "ev"}},
			Flows:       map[string]string{"ev": "flows/ev.json", "child": "flows/child.json"}},
		Flows: map[string]map[string]any{"ev": mustFlow(t, emitViaSubflowRoot), "child": mustFlow(t, emitViaSubflowChild)},
	}
	cb, err := CompileBundle(b, BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, ok := cb.Flow("ev")
	if !ok || len(fi.Listeners) != 1 {
		t.Fatalf("flow ev: %v %v", ok, fi)
	}
	rt := newTestRuntime(t, memory.New(), nil, cb.Workflows...)
	start.WorkflowID = fi.WorkflowID
	root, err := rt.Start(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("StartListeners = %v, %v", ids, err)
	}
	st, err := rt.Tick(ctx, root, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5 && st.Status == durable.RunWaiting; i++ {
		st, err = rt.Tick(ctx, root, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status == durable.RunWaiting {
			cid, _ := st.Waiting.Details["sub_run_id"].(string)
			if cid != "" {
				_, _ = rt.Tick(ctx, cid, runtime.TickOptions{})
			}
		}
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("root: %s (%s) %+v", st.Status, st.Error, st.Waiting)
	}
	l, err := rt.GetState(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	return st.Output["delivered"], l.Vars["last"]
}

// A session-scoped event emitted by a subflow reaches the root's listener
// when the root has a session (as every gateway run has: the host sets
// session_id = run_id when none is given).
func TestReviewSubflowEmitReachesListener_RootWithSession(t *testing.T) {
	d, last := runEmitViaSubflow(t, runtime.StartParams{SessionID: "s1"})
	if !deliveredOnce(t, d, last) {
		t.Fatalf("delivered %v, listener last %v; want 1 and the payload", d, last)
	}
}

// A root started without a session as a host starts one
// (SessionFromRunID: the run is its own session, as the gateway makes a
// sessionless start and AbstractFlow's VisualSessionRunner does):
// StartListeners puts the listeners in that session, and the subflow
// child inherits it, so the child's session-scoped emit reaches them. A
// root left without any session gave its child none, whose emit then
// named the child's own id and reached nobody (`bundle run` did so).
func TestReviewSubflowEmitReachesListener_RootOwnSession(t *testing.T) {
	d, last := runEmitViaSubflow(t, runtime.StartParams{SessionFromRunID: true})
	if !deliveredOnce(t, d, last) {
		t.Fatalf("delivered %v, listener last %v; want 1 and the payload (as with a root session, or an emit in the root)", d, last)
	}
}

func deliveredOnce(t *testing.T, d, last any) bool {
	m, _ := last.(map[string]any)
	return jsonText(t, d) == "1" && m != nil && jsonText(t, m["n"]) == "1"
}
