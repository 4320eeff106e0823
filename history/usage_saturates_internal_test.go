package history

import (
	"math"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestTurnStatsTokenSumsSaturate: token counts are Python ints in
// the reference (exact, never wrapping). Ours are int64 and were added
// unchecked: a usage of input_tokens=MaxInt64, output_tokens=1 without a
// total gave total MinInt64 (then clamped to 0), and two such records
// summed to a negative total_tokens and a negative tok_s in the bundle.
// A sum past int64 now saturates at MaxInt64: never negative, never less
// than any of its parts.
func TestTurnStatsTokenSumsSaturate(t *testing.T) {
	if u := parseUsage(map[string]any{"input_tokens": int64(math.MaxInt64), "output_tokens": int64(1)}); u == nil || u.total != math.MaxInt64 {
		t.Errorf("parseUsage total = %+v, want saturated at MaxInt64", u)
	}
	at := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := func(i int) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r", StepID: "s", Status: durable.StepCompleted, StartedAt: at,
			EndedAt: durable.NewTime(at.Add(time.Duration(i) * time.Second)),
			Effect:  &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{}},
			Result:  map[string]any{"usage": map[string]any{"input_tokens": int64(math.MaxInt64 - 1), "output_tokens": int64(math.MaxInt64 - 1), "total_tokens": int64(math.MaxInt64)}}}
	}
	stats := turnStats([]*durable.StepRecord{rec(1), rec(2)})
	u := stats["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "output_tokens", "total_tokens"} {
		if n := u[k].(int64); n < math.MaxInt64-1 {
			t.Errorf("%s = %d after summing two counts near MaxInt64", k, n)
		}
	}
	if tok, _ := stats["tok_s"].(float64); tok < 0 {
		t.Errorf("tok_s = %v", tok)
	}
}
