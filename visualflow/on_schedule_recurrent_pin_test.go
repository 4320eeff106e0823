package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// scheduleRecurrentPinSeen runs an on_schedule flow whose branch stores the
// node's `recurrent` output pin in vars.seen, resumes the schedule wait
// once and returns the stored value.
func scheduleRecurrentPinSeen(t *testing.T, eventConfig, pinDefaults map[string]any) any {
	t.Helper()
	data := map[string]any{"pinDefaults": pinDefaults}
	if eventConfig != nil {
		data["eventConfig"] = eventConfig
	}
	flow := rsFlow("sch_rec", "sched", []map[string]any{
		rsNode("sched", "on_schedule", []string{"schedule:string"}, []string{"exec-out:exec", "timestamp:string", "recurrent:boolean"}, data),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "seen"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "sched.exec-out>sv.exec-in", "sched.recurrent>sv.value", "sv.exec-out>end.exec-in")
	rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting {
		t.Fatalf("status %s (%s), want waiting on the schedule", st.Status, st.Error)
	}
	st, err := rt.Resume(context.Background(), runtime.ResumeParams{RunID: st.RunID, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	return st.Vars["seen"]
}

// TestOnSchedule_RecurrentPinFollowsEventConfig: the reference derives
// on_schedule's `recurrent` output from eventConfig alone
// (compiler._sync_effect_results_to_node_outputs): true unless
// eventConfig.recurrent is set and falsy, and false whenever
// eventConfig.schedule is a non-blank, non-numeric value, because its
// interval pattern is broken (quirk Q4). A schedule from the pin or the
// "15s" default therefore reads true, so flows branching on the pin take
// the same branch as in Python.
func TestOnSchedule_RecurrentPinFollowsEventConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		pins map[string]any
		want any
	}{
		{"schedule from pin, no eventConfig", nil, map[string]any{"schedule": "1h"}, true},
		{"schedule from pin, config recurrent true", map[string]any{"recurrent": true}, map[string]any{"schedule": "1h"}, true},
		{"schedule from pin, config recurrent false", map[string]any{"recurrent": false}, map[string]any{"schedule": "1h"}, false},
		{"config recurrent null counts as absent", map[string]any{"recurrent": nil}, map[string]any{"schedule": "1h"}, true},
		{"default 15s, empty eventConfig", map[string]any{}, map[string]any{}, true},
		{"blank config schedule is ignored", map[string]any{"schedule": "  "}, map[string]any{}, true},
		{"string config schedule (Q4)", map[string]any{"schedule": "1h"}, map[string]any{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := scheduleRecurrentPinSeen(t, c.cfg, c.pins); got != c.want {
				t.Fatalf("recurrent pin = %v, want %v (reference flag for eventConfig %v)", got, c.want, c.cfg)
			}
		})
	}
}

// TestScheduleRecurrentPin covers the flag for config shapes a flow run
// cannot easily reach (a numeric schedule fails the schedule parse).
func TestScheduleRecurrentPin(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		want bool
	}{
		{"numeric schedule skips the pattern", map[string]any{"schedule": float64(30)}, true},
		{"truthy text recurrent", map[string]any{"recurrent": "false"}, true},
		{"zero recurrent", map[string]any{"recurrent": float64(0)}, false},
		{"ISO schedule", map[string]any{"schedule": "2030-01-01T00:00:00Z"}, false},
	}
	for _, c := range cases {
		if got := scheduleRecurrentPin(c.cfg); got != c.want {
			t.Errorf("%s: scheduleRecurrentPin(%v) = %v, want %v", c.name, c.cfg, got, c.want)
		}
	}
}
