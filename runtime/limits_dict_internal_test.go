package runtime

import (
	"testing"
)

// Python's to_limits_dict clamps an explicit max_input_tokens only when
// max_tokens > 0 (config.py: `max_tokens_int > 0 and max_output_int >= 0
// and effective_max_input_tokens is not None`). limitsDict clamped whatever
// max_tokens was, so a non-positive max_tokens (e.g. -1) with explicit
// output and input budgets seeded max_input_tokens 0 instead of the value
// given.
func TestExecuteLimitsNoClampWithoutPositiveMaxTokens(t *testing.T) {
	ptr := func(n int) *int { return &n }
	l := LimitsConfig{MaxTokens: ptr(-1), MaxOutputTokens: ptr(1000), MaxInputTokens: ptr(5000)}.limitsDict()
	if n, _ := AsInt(l["max_input_tokens"]); n != 5000 {
		t.Fatalf("max_input_tokens = %v with max_tokens -1; want 5000 as configured (Python clamps only when max_tokens > 0)", l["max_input_tokens"])
	}
}
