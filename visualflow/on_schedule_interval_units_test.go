package visualflow

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestOnScheduleIntervalUnitIsCaseInsensitive: the interval pattern is
// case-insensitive (15S, 2H, 500MS), and the unit must be looked up
// lower-cased too; otherwise an upper-case unit matches the pattern but
// multiplies by zero, and the schedule fires at once in a tight loop.
func TestOnScheduleIntervalUnitIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]time.Duration{"2H": 2 * time.Hour, " 5M ": 5 * time.Minute, "500Ms": 500 * time.Millisecond, "1d": 24 * time.Hour} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			flow := rsFlow("sch_units", "sched", []map[string]any{
				rsNode("sched", "on_schedule", []string{"schedule:string"}, []string{"exec-out:exec", "timestamp:string"},
					map[string]any{"pinDefaults": map[string]any{"schedule": spec}}),
				setVarNode("sv", "ticked", map[string]any{"value": true}),
			}, "sched.exec-out>sv.exec-in")
			_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunWaiting || st.Waiting == nil {
				t.Fatalf("status %s (%s), want waiting on the schedule", st.Status, st.Error)
			}
			if w := fixedClock.Add(want); !st.Waiting.Until.Equal(w) {
				t.Fatalf("schedule %q waits until %s, want %s", spec, st.Waiting.Until.Format(time.RFC3339Nano), w.Format(time.RFC3339Nano))
			}
		})
	}
}
