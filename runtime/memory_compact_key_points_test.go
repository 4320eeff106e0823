package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestMemoryCompactKeepsTwentyKeyPoints: the summary's key_points are
// kept up to 20 (Python's key_points[:20]); the 20th must not be lost nor
// a 21st kept.
func TestMemoryCompactKeepsTwentyKeyPoints(t *testing.T) {
	points := make([]string, 25)
	for i := range points {
		points[i] = fmt.Sprintf("%q", fmt.Sprintf("p%d", i+1))
	}
	llm := &scriptedLLM{content: `{"summary": "s", "key_points": [` + strings.Join(points, ", ") + `], "confidence": 0.5}`}
	rt := compactRuntime(t, memory.New(), artifact.NewMemory(), llm)
	id := startMem(t, rt, map[string]any{"context": map[string]any{"messages": conversation(8)}},
		step(durable.EffectMemoryCompact, map[string]any{}))
	run := tickDone(t, rt, id)
	mustComplete(t, run)
	kp, _ := metaOf(t, res(t, run, 0))["key_points"].([]any)
	if len(kp) != 20 || kp[19] != "p20" {
		t.Errorf("key_points %v, want p1..p20", kp)
	}
}
