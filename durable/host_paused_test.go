package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// HostPaused reads vars._runtime.control.paused, and only a JSON true
// there (spec §2.3: a tick leaves a run whose
// vars._runtime.control.paused === true unchanged). Would break: reading
// the flag one level up (vars._runtime.paused), or taking a truthy
// non-boolean for a pause.
func TestHostPausedReadsRuntimeControlPausedTrueOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		vars map[string]any
		want bool
	}{
		{"control.paused true", map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": true}}}, true},
		{"control.paused false", map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": false}}}, false},
		{"control.paused a string", map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": "true"}}}, false},
		{"_runtime.paused, no control", map[string]any{"_runtime": map[string]any{"paused": true}}, false},
		{"top-level paused", map[string]any{"paused": true}, false},
		{"no vars", nil, false},
	} {
		r := &durable.RunState{RunID: "r", Status: durable.RunRunning, Vars: tc.vars}
		if got := r.HostPaused(); got != tc.want {
			t.Errorf("%s: HostPaused() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
