package visualflow

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestOnSchedule_BlankSchedulePinFallsBackToEventConfig: on_schedule's
// schedule is "pin else eventConfig.schedule (default 15s)" (spec §5.7);
// the reference reads it as str(schedule_pin or config_schedule or "")
// (event_adapter.create_on_schedule_node_handler), so a blank pin value
// (an empty pin default, an empty start parameter) leaves the configured
// schedule in force instead of the 15s default.
func TestOnSchedule_BlankSchedulePinFallsBackToEventConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		pin, schedule any // nil leaves the pin default or the config out
		want          time.Duration
	}{
		{"blank pin uses the config", "", "1h", time.Hour},
		{"whitespace pin uses the config", "  ", "1h", time.Hour},
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
