package runtime_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A negative Base is Python's backoff_base=0.0: retries follow each other
// with no wait. A zero Base cannot say it, since the zero value means the
// 1s default; the zero value keeps its meaning.
func TestRetryBackoffNegativeBaseMeansNoWait(t *testing.T) {
	t.Parallel()
	eff := &durable.Effect{Type: durable.EffectToolCalls}
	none := runtime.RetryPolicy{DefaultAttempts: 3, Base: -1}
	for n := 1; n <= 3; n++ {
		if d := none.Backoff(eff, n); d != 0 {
			t.Errorf("Backoff(attempt %d) with a negative Base = %v; want 0", n, d)
		}
	}
	def := runtime.RetryPolicy{DefaultAttempts: 3}
	if d := def.Backoff(eff, 2); d != 2*time.Second {
		t.Errorf("Backoff(attempt 2) of the zero Base = %v; want 2s (1s doubled)", d)
	}
}
