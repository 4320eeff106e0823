package runtime_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestMemoryTagBlankSpanIDError: a MEMORY_TAG whose span_id is a
// blank (whitespace-only) string fails with Python's "requires a non-empty
// span_id", not the type error for a span_id that is not str or int.
func TestMemoryTagBlankSpanIDError(t *testing.T) {
	f := memSetup(t, true)
	for _, id := range []any{"", "   "} {
		run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryTag, map[string]any{"span_id": id, "tags": map[string]any{"topic": "x"}}))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, "MEMORY_TAG requires a non-empty span_id") {
			t.Errorf("span_id %q: status %s error %q, want the non-empty span_id error", id, run.Status, run.Error)
		}
	}
}
