package visualflow

import (
	"context"
	"strings"
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

// TestOnEvent_NameReadsLikeThePythonReference: the reference's listener
// name is str(pin name or pin event_name or config name).strip(), blank →
// "*" (event_adapter.create_on_event_node_handler). So a whitespace-only
// pin listens to every event instead of the configured one, an empty name
// pin gives way to the event_name pin, a number pin is read as its text,
// and an empty config name gives way to the config event_name.
func TestOnEvent_NameReadsLikeThePythonReference(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		pins, cfg map[string]any
		want      string
	}{
		{"whitespace pin is the wildcard", map[string]any{"name": "  "}, map[string]any{"name": "cfg"}, "*"},
		{"empty pin uses the config", map[string]any{"name": ""}, map[string]any{"name": "cfg"}, "cfg"},
		{"empty name pin uses the event_name pin", map[string]any{"name": "", "event_name": "alt"}, map[string]any{"name": "cfg"}, "alt"},
		{"number pin is its text", map[string]any{"name": int64(5)}, map[string]any{"name": "cfg"}, "5"},
		{"empty config name uses the config event_name", nil, map[string]any{"name": "", "event_name": "ev2"}, "ev2"},
		{"pin is trimmed", map[string]any{"name": " x "}, nil, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := map[string]any{"pinDefaults": c.pins}
			if c.cfg != nil {
				data["eventConfig"] = c.cfg
			}
			flow := rsFlow("ev", "listen", []map[string]any{
				rsNode("listen", "on_event", []string{"scope:string", "name:any", "event_name:any"},
					[]string{"exec-out:exec"}, data),
			})
			_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunWaiting || st.Waiting == nil {
				t.Fatalf("status %s (%s), want waiting for the event", st.Status, st.Error)
			}
			if !strings.HasSuffix(st.Waiting.WaitKey, ":"+c.want) {
				t.Fatalf("wait key %q, want event name %q", st.Waiting.WaitKey, c.want)
			}
		})
	}
}

// TestEmitEvent_SessionPinReplacesConfigLikeThePythonReference: in the
// reference only an absent (or null) session_id pin falls back to
// effectConfig.session_id/sessionId; a blank or non-string pin value means
// "no target session" (event_adapter.create_emit_event_node_handler), so
// the event goes to the emitter's own session.
func TestEmitEvent_SessionPinReplacesConfigLikeThePythonReference(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		pin  any // nil leaves the pin default out
		want any // nil: no session_id in the effect
	}{
		{"blank pin drops the config", "", nil},
		{"whitespace pin drops the config", "   ", nil},
		{"non-string pin drops the config", int64(5), nil},
		{"absent pin uses the config", nil, "s2"},
		{"pin is trimmed", " s3 ", "s3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			defaults := map[string]any{}
			if c.pin != nil {
				defaults["session_id"] = c.pin
			}
			flow := rsFlow("em", "start", []map[string]any{
				rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
				rsNode("emit", "emit_event", []string{"exec-in:exec", "name:string", "payload:any", "session_id:any"},
					[]string{"exec-out:exec"}, map[string]any{"pinDefaults": defaults,
						"effectConfig": map[string]any{"name": "ping", "sessionId": "s2"}}),
			}, "start.exec-out>emit.exec-in")
			rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status %s (%s)", st.Status, st.Error)
			}
			recs, err := rt.GetLedger(context.Background(), st.RunID)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range recs {
				// Skip the host's own status events; check the node's emission.
				if r.Effect == nil || r.Effect.Type != durable.EffectEmitEvent || r.Effect.Payload["name"] != "ping" {
					continue
				}
				found = true
				if got := r.Effect.Payload["session_id"]; got != c.want {
					t.Fatalf("session_id = %#v, want %#v", got, c.want)
				}
			}
			if !found {
				t.Fatal("no emit_event effect for ping in the ledger")
			}
		})
	}
}

// TestEmitEvent_WhitespaceNamePinFailsRun: the reference reads the event
// name as str(pin name or pin event_name or config name).strip()
// (event_adapter.create_emit_event_node_handler), so a whitespace-only
// name pin is truthy, hides effectConfig.name, strips to empty and the
// step raises "emit_event node '<id>' missing event name": the run fails
// (spec §5.7) rather than emitting under the configured name.
func TestEmitEvent_WhitespaceNamePinFailsRun(t *testing.T) {
	t.Parallel()
	flow := rsFlow("em", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("emit", "emit_event", []string{"exec-in:exec", "name:string", "payload:any"},
			[]string{"exec-out:exec"}, map[string]any{"pinDefaults": map[string]any{"name": "  "},
				"effectConfig": map[string]any{"name": "ping"}}),
	}, "start.exec-out>emit.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "emit_event node 'emit' missing event name") {
		t.Fatalf("status %s (error %q), want failed with \"emit_event node 'emit' missing event name\"", st.Status, st.Error)
	}
}
