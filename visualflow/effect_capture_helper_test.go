package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// runCapturing runs flow with a handler of typ that answers outcome once,
// and returns the payload it saw (nil when it was not called) and the
// run's final state.
func runCapturing(t *testing.T, flow map[string]any, typ durable.EffectType, outcome any) (map[string]any, *durable.RunState) {
	t.Helper()
	h := &scripted{results: []any{outcome}}
	_, st := runFlows(t, []string{jsonText(t, flow)}, nil, map[durable.EffectType]runtime.Handler{typ: h.handler()}, nil)
	if len(h.payloads) == 0 {
		return nil, st
	}
	return h.payloads[0], st
}
