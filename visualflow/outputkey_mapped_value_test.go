package visualflow

import "testing"

// The value on_schedule writes at outputKey is its timestamp pin, the raw
// outcome only when there is none; memory_rehydrate writes the raw outcome
// (§5.3, as Python's _sync_effect_results_to_node_outputs picks them).
func TestOutputKeyMappedValueOfScheduleAndRehydrate(t *testing.T) {
	raw := map[string]any{"timestamp": "2026-01-01T00:00:00Z", "scheduled_for": "x"}
	mapped := map[string]any{"timestamp": "2026-01-01T00:00:00Z", "recurrent": true}
	if v := mappedValue(&node{ID: "s", Type: "on_schedule"}, mapped, raw); v != "2026-01-01T00:00:00Z" {
		t.Errorf("on_schedule mapped value = %s, want the timestamp", jsonText(t, v))
	}
	if v := mappedValue(&node{ID: "s", Type: "on_schedule"}, map[string]any{"timestamp": nil}, "tick"); v != "tick" {
		t.Errorf("on_schedule mapped value without a timestamp = %s, want the raw outcome", jsonText(t, v))
	}
	rh := map[string]any{"inserted": int64(2), "skipped": int64(0)}
	if v := mappedValue(&node{ID: "r", Type: "memory_rehydrate"}, map[string]any{"inserted": int64(2)}, rh); jsonText(t, v) != jsonText(t, rh) {
		t.Errorf("memory_rehydrate mapped value = %s, want the raw outcome", jsonText(t, v))
	}
}
