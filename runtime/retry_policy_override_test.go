package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A per-type override of 0 or less is no override: the type gets the
// policy's default attempts. Taking it as given would give the effect 0
// (or fewer) attempts instead of DefaultAttempts.
func TestRetryPolicyOverrideBelowOneFallsBackToDefault(t *testing.T) {
	e := &durable.Effect{Type: durable.EffectLLMCall}
	for _, n := range []int{0, -2} {
		p := runtime.RetryPolicy{DefaultAttempts: 3, Attempts: map[durable.EffectType]int{durable.EffectLLMCall: n}}
		if got := p.MaxAttempts(e); got != 3 {
			t.Errorf("override %d with DefaultAttempts 3: MaxAttempts %d; want 3", n, got)
		}
	}
	p := runtime.RetryPolicy{DefaultAttempts: 3, Attempts: map[durable.EffectType]int{durable.EffectLLMCall: 2}}
	if got := p.MaxAttempts(e); got != 2 {
		t.Errorf("override 2: MaxAttempts %d; want 2", got)
	}
}
