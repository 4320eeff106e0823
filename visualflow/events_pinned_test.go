package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestOnEventWithoutSuccessorWaitsAgain pins §5.7: an on_event node
// with nothing connected after it goes back to waiting for its event once
// one has arrived, rather than ending the listener.
func TestOnEventWithoutSuccessorWaitsAgain(t *testing.T) {
	t.Parallel()
	flow := rsFlow("ev_alone", "ev", []map[string]any{
		rsNode("ev", "on_event", nil, []string{"exec-out:exec", "payload:any"}, map[string]any{"eventConfig": map[string]any{"name": "ping"}}),
	})
	rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	for i := range 2 {
		if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitEvent {
			t.Fatalf("before event %d: status %s, waiting %+v; want an event wait", i+1, st.Status, st.Waiting)
		}
		var err error
		st, err = rt.Resume(context.Background(), runtime.ResumeParams{RunID: st.RunID, WaitKey: st.Waiting.WaitKey,
			Payload: map[string]any{"name": "ping", "payload": map[string]any{"n": i}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if st.Status != durable.RunWaiting {
		t.Fatalf("after two events: status %s; want waiting again", st.Status)
	}
}

// TestEmitEventIDsCountPerNode pins that each emission of one
// emit_event node in a run gets the next sequence number in its event_id
// (<run>:<node>:1, :2, ...), so repeated emissions are distinct events.
func TestEmitEventIDsCountPerNode(t *testing.T) {
	t.Parallel()
	emit := rsNode("em", "emit_event", []string{"exec-in:exec", "name:string", "payload:any"}, []string{"exec-out:exec"},
		map[string]any{"pinDefaults": map[string]any{"name": "tick", "payload": map[string]any{"same": true}}})
	flow := rsFlow("emit_twice", "start", []map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2)}), emit, rvEnd("end", nil, nil)},
		"start.exec-out>L.exec-in", "L.loop>em.exec-in", "L.done>end.exec-in")
	sc := &scripted{results: []any{map[string]any{}, map[string]any{}}}
	_, st := startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectEmitEvent: sc.handler()}, map[string]any{})
	var ids []any
	for _, p := range sc.payloads {
		ids = append(ids, p["event_id"])
	}
	want := []any{st.RunID + ":em:1", st.RunID + ":em:2"}
	if jsonText(t, ids) != jsonText(t, want) {
		t.Fatalf("event ids = %s, want %s", jsonText(t, ids), jsonText(t, want))
	}
}

// TestOnScheduleTimestampFiresOnce pins §5.7: an on_schedule given an
// ISO timestamp is one-shot whatever recurrent says, so its branch ending
// ends the run instead of returning to the schedule.
func TestOnScheduleTimestampFiresOnce(t *testing.T) {
	t.Parallel()
	flow := rsFlow("sched_once", "sched", []map[string]any{
		rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"}, []string{"exec-out:exec", "timestamp:string"},
			map[string]any{"pinDefaults": map[string]any{"schedule": "2020-01-01T00:00:00Z", "recurrent": true}}),
		setFlagNode("A", "fired"),
	}, "sched.exec-out>A.exec-in")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, memory.New(), nil, wf)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Vars["fired"] != true {
		t.Fatalf("status %s, fired %v; want completed after one firing", st.Status, st.Vars["fired"])
	}
}

// TestEmitEventFalsyNamePinUsesConfig pins the reference's
// str(pin name or pin event_name or config name): falsy name and
// event_name pins fall back to the configured name.
func TestEmitEventFalsyNamePinUsesConfig(t *testing.T) {
	t.Parallel()
	emit := rsNode("em", "emit_event", []string{"exec-in:exec", "name:string", "event_name:any"}, []string{"exec-out:exec"},
		map[string]any{"pinDefaults": map[string]any{"name": "", "event_name": int64(0)}, "effectConfig": map[string]any{"name": "cfg"}})
	flow := rsFlow("emit_cfg", "start", []map[string]any{rvStart(), emit, rvEnd("end", nil, nil)},
		"start.exec-out>em.exec-in", "em.exec-out>end.exec-in")
	sc := &scripted{results: []any{map[string]any{}}}
	startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectEmitEvent: sc.handler()}, map[string]any{})
	if len(sc.payloads) != 1 || sc.payloads[0]["name"] != "cfg" {
		t.Fatalf("payloads = %v, want one emission named cfg", sc.payloads)
	}
}
