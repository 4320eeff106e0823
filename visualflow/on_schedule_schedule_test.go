package visualflow

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestOnSchedule_BlankSchedulePinFallsBackToEventConfig: on_schedule's
// schedule is "pin else eventConfig.schedule (default 15s)" (spec §5.7);
// the reference reads it as str(schedule_pin or config_schedule or "")
// (event_adapter.create_on_schedule_node_handler), so an empty pin value
// (an empty pin default, an empty start parameter) leaves the configured
// schedule in force instead of the 15s default. A whitespace-only pin is
// not empty: see TestOnSchedule_WhitespaceSchedulePinFailsRun.
func TestOnSchedule_BlankSchedulePinFallsBackToEventConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		pin, schedule any // nil leaves the pin default or the config out
		want          time.Duration
	}{
		{"blank pin uses the config", "", "1h", time.Hour},
		{"pin wins over the config", "5m", "1h", 5 * time.Minute},
		{"neither gives 15s", "", nil, 15 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := map[string]any{"pinDefaults": map[string]any{"schedule": c.pin}}
			if c.schedule != nil {
				data["eventConfig"] = map[string]any{"schedule": c.schedule}
			}
			flow := rsFlow("sch", "sched", []map[string]any{
				rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"},
					[]string{"exec-out:exec", "timestamp:string", "recurrent:boolean"}, data),
				rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec"},
					map[string]any{"pinDefaults": map[string]any{"name": "ticked", "value": true}}),
			}, "sched.exec-out>sv.exec-in")
			_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunWaiting || st.Waiting == nil {
				t.Fatalf("status %s (%s), want waiting on the schedule", st.Status, st.Error)
			}
			if want := fixedClock.Add(c.want); !st.Waiting.Until.Equal(want) {
				t.Fatalf("on_schedule waits until %s, want %s", st.Waiting.Until.Format(time.RFC3339), want.Format(time.RFC3339))
			}
		})
	}
}

// TestOnSchedule_RecurrentReadsLikeThePythonReference: the reference takes
// eventConfig.recurrent only when it is a real boolean (anything else
// leaves the default true) and reads a recurrent pin value with Python's
// bool() (event_adapter.create_on_schedule_node_handler), so the text
// "false" keeps the schedule recurring. Bundles written for it must
// re-arm (or not) the same way here.
func TestOnSchedule_RecurrentReadsLikeThePythonReference(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		pin, cfg any // nil leaves the pin default or the config out
		want     bool
	}{
		{"pin text false is truthy", "false", nil, true},
		{"pin text no beats a false config", "no", false, true},
		{"empty pin text is falsy", "", true, false},
		{"pin false", false, true, false},
		{"pin zero", int64(0), true, false},
		{"config false", nil, false, false},
		{"config text false is ignored", nil, "false", true},
		{"config zero is ignored", nil, int64(0), true},
		{"neither defaults to recurrent", nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			defaults := map[string]any{"schedule": "1h"}
			if c.pin != nil {
				defaults["recurrent"] = c.pin
			}
			data := map[string]any{"pinDefaults": defaults}
			if c.cfg != nil {
				data["eventConfig"] = map[string]any{"recurrent": c.cfg}
			}
			// recurrent typed any: the value as an upstream node would hand it over.
			flow := rsFlow("sch", "sched", []map[string]any{
				rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:any"},
					[]string{"exec-out:exec"}, data),
				rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec"},
					map[string]any{"pinDefaults": map[string]any{"name": "ticked", "value": true}}),
			}, "sched.exec-out>sv.exec-in")
			_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunWaiting {
				t.Fatalf("status %s (%s), want waiting on the schedule", st.Status, st.Error)
			}
			// A recurrent schedule makes itself the active control node so its
			// branch returns to it and re-arms.
			tmp, _ := st.Vars["_temp"].(map[string]any)
			ctl, _ := tmp["_control"].(map[string]any)
			stack, _ := ctl["stack"].([]any)
			if got := slices.Contains(stack, any("sched")); got != c.want {
				t.Fatalf("recurrent = %v, want %v (control stack %v)", got, c.want, stack)
			}
		})
	}
}

// TestOnSchedule_WhitespaceSchedulePinFailsRun: in the reference's
// str(schedule_pin or config_schedule or "").strip() a whitespace-only
// pin is truthy, so it wins over eventConfig.schedule, strips to empty,
// and the step raises "on_schedule node '<id>' missing schedule": the run
// fails (spec §4.8) instead of silently waiting on the configured
// schedule.
func TestOnSchedule_WhitespaceSchedulePinFailsRun(t *testing.T) {
	t.Parallel()
	flow := rsFlow("sch", "sched", []map[string]any{
		rsNode("sched", "on_schedule", []string{"schedule:string", "recurrent:boolean"},
			[]string{"exec-out:exec", "timestamp:string", "recurrent:boolean"},
			map[string]any{"pinDefaults": map[string]any{"schedule": "   "}, "eventConfig": map[string]any{"schedule": "1h"}}),
		rsNode("sv", "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "ticked", "value": true}}),
	}, "sched.exec-out>sv.exec-in")
	_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "on_schedule node 'sched' missing schedule") {
		t.Fatalf("status %s (error %q), want failed with \"on_schedule node 'sched' missing schedule\"", st.Status, st.Error)
	}
}
