package runtime_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// MEMORY_QUERY validates its payload in the order of Python core/runtime.py
// _handle_memory_query: after the artifact-store check it reads
// recall_level (parse_recall_level, failing "Unknown recall_level: <v>"),
// then the scope ("Unknown memory_query scope: …"), then the return mode
// ("Unknown memory_query return mode: …"). A payload wrong in several of
// them fails naming the first in that order.
func TestMemoryQueryRecallLevelCheckedBeforeScopeAndReturnMode(t *testing.T) {
	for _, c := range []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"recall_level": "bogus", "scope": "nowhere"}, "Unknown recall_level: bogus"},
		{map[string]any{"recall_level": "bogus", "return": "xml"}, "Unknown recall_level: bogus"},
		{map[string]any{"recallLevel": "bogus", "scope": "nowhere", "return": "xml"}, "Unknown recall_level: bogus"},
		{map[string]any{"scope": "nowhere", "return": "xml"}, "Unknown memory_query scope: nowhere"},
	} {
		f := memSetup(t, true)
		run := f.runSteps(t, runtime.StartParams{}, step(durable.EffectMemoryQuery, c.payload))
		if run.Status != durable.RunFailed || !strings.Contains(run.Error, c.want) {
			t.Errorf("payload %v: run %s %q; want failed with %q", c.payload, run.Status, run.Error, c.want)
		}
	}
}
