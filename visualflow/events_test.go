package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

const eventsFlow = `{"id":"ev","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"emit","type":"emit_event","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"payload","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"delivered","type":"number"}],"pinDefaults":{"payload":{"n":1}},"effectConfig":{"name":"ping"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}},
 {"id":"listen","type":"on_event","data":{"inputs":[],"outputs":[{"id":"exec-out","type":"execution"},{"id":"payload","type":"object"}],"eventConfig":{"name":"ping","scope":"session"}}},
 {"id":"count","type":"set_var","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"name","type":"string"},{"id":"value","type":"any"}],
   "outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"name":"last"}}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"emit","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},
 {"source":"listen","sourceHandle":"exec-out","target":"count","targetHandle":"exec-in"},
 {"source":"listen","sourceHandle":"payload","target":"count","targetHandle":"value"}]}`

// TestEvents_ListenerReceivesAndRearms runs a listener workflow (the
// flow entered at its on_event node) and a root run that emits the event
// twice in the same session.
func TestEvents_ListenerReceivesAndRearms(t *testing.T) {
	t.Parallel()
	flow := mustFlow(t, eventsFlow)
	root, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listener, err := Compile(flow, CompileOptions{WorkflowID: "listener", EntryNode: "listen"})
	if err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, memory.New(), nil, root, listener)
	ctx := context.Background()
	lid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "listener", SessionID: "s1", RunID: "listener-1"})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := rt.Tick(ctx, lid, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ls.Status != durable.RunWaiting || ls.Waiting.WaitKey != "evt:session:s1:ping" {
		t.Fatalf("listener = %s %+v", ls.Status, ls.Waiting)
	}
	for i := range 2 {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ev", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != durable.RunCompleted || st.Output["delivered"] != int64(1) {
			t.Fatalf("emit %d: %s %v", i, st.Status, st.Output)
		}
	}
	ls, err = rt.GetState(ctx, lid)
	if err != nil {
		t.Fatal(err)
	}
	if ls.Status != durable.RunWaiting || ls.CurrentNode != "listen" {
		t.Fatalf("listener should wait again at its on_event node: %s at %s", ls.Status, ls.CurrentNode)
	}
	if got := jsonText(t, ls.Vars["last"]); got != jsonText(t, map[string]any{"n": int64(1)}) {
		t.Fatalf("listener last payload = %s", got)
	}
	recs, _ := rt.GetLedger(ctx, lid)
	resumes := 0
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			resumes++
		}
	}
	if resumes != 2 {
		t.Fatalf("listener resumed %d times, want 2: %v", resumes, ledgerKinds(recs))
	}
}
