package runtime_test

import (
	"context"
	"strings"
	"testing"
)

// UpdateLimits refuses a value the limit reads cannot take as an integer.
// Python's get_limit_status and check_limits read int(limits.get(key, …)
// or …) and raise ValueError on "65k"; ours read the default instead, so a
// stored "65k" governed the run by a limit nobody set (32768) with no error
// anywhere. The update says so, naming the key and the value, and leaves
// the limits as they were.
func TestUpdateLimitsUnreadableValueIsReported(t *testing.T) {
	f, id := limitsRun(t, map[string]any{"estimated_tokens_used": int64(30000), "max_tokens": int64(40000)})
	ctx := context.Background()
	for _, tc := range []struct {
		updates map[string]any
		want    string
	}{
		{map[string]any{"max_tokens": "65k"}, `max_tokens = '65k' is not an integer`},
		{map[string]any{"max_iterations": []any{int64(5)}}, `max_iterations = [5] is not an integer`},
		{map[string]any{"current_iteration": map[string]any{"n": int64(1)}}, `current_iteration = {'n': 1} is not an integer`},
		// get_limit_status compares the thresholds as stored.
		{map[string]any{"warn_tokens_pct": nil}, `warn_tokens_pct = None is not a number`},
		{map[string]any{"warn_iterations_pct": "80"}, `warn_iterations_pct = '80' is not a number`},
		// One refused value refuses the whole update.
		{map[string]any{"max_tokens": int64(65000), "max_input_tokens": "lots"}, `max_input_tokens = 'lots' is not an integer`},
	} {
		err := f.rt.UpdateLimits(ctx, id, tc.updates)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UpdateLimits(%v) = %v; want an error saying %s", tc.updates, err, tc.want)
		}
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tok := st["tokens"].(map[string]any); tok["max"] != int64(40000) || tok["max_input_tokens"] != nil {
		t.Errorf("after refused updates: tokens %v; want max 40000 and max_input_tokens null, unchanged", tok)
	}
}

// What the reads do take is still accepted: null for a limit that is
// unset (the token budgets and the history limit are returned as stored;
// the others read the default, as int(None or default) does), a fraction
// (int() truncates it), a boolean, a decimal string.
func TestUpdateLimitsReadableValuesAccepted(t *testing.T) {
	f, id := limitsRun(t, nil)
	ctx := context.Background()
	err := f.rt.UpdateLimits(ctx, id, map[string]any{
		"max_input_tokens": nil, "max_output_tokens": nil, "max_history_messages": nil, "max_tokens": nil,
		"current_iteration": 45.5, "max_iterations": "50", "estimated_tokens_used": true,
		"warn_iterations_pct": 80.5, "warn_tokens_pct": int32(90),
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if it := st["iterations"].(map[string]any); it["current"] != int64(45) || it["max"] != int64(50) {
		t.Errorf("iterations %v; want current 45 of 50", it)
	}
	if tok := st["tokens"].(map[string]any); tok["max"] != int64(32768) || tok["estimated_used"] != int64(1) {
		t.Errorf("tokens %v; want max 32768 (the default for null), estimated_used 1", tok)
	}
}

// The reads are Python's int(x or default), so a string is read in int()'s
// syntax: PEP 515 underscores, surrounding whitespace, a sign, any Unicode
// decimal digits. pyInt used strconv.ParseInt, so UpdateLimits refused
// "1_000" and "١٢٠" as not integers, and a run whose _limits a Python
// runtime had set to them was governed by the defaults instead. Strings
// int() refuses are still refused.
func TestUpdateLimitsReadsPythonIntStringSyntax(t *testing.T) {
	f, id := limitsRun(t, nil)
	ctx := context.Background()
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{
		"max_iterations": "1_000", "current_iteration": "١٢٠", "max_tokens": " +65_536\n",
	}); err != nil {
		t.Fatalf("UpdateLimits with int() strings: %v", err)
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if it := st["iterations"].(map[string]any); it["max"] != int64(1000) || it["current"] != int64(120) {
		t.Errorf("iterations %v; want current 120 of max 1000", it)
	}
	if tok := st["tokens"].(map[string]any); tok["max"] != int64(65536) {
		t.Errorf("tokens %v; want max 65536", tok)
	}
	for _, bad := range []string{"1__000", "_1", "1_", "+-1", "1 000"} {
		if err := f.rt.UpdateLimits(ctx, id, map[string]any{"max_iterations": bad}); err == nil || !strings.Contains(err.Error(), "is not an integer") {
			t.Errorf("UpdateLimits(max_iterations %q) = %v; want it refused as int() refuses it", bad, err)
		}
	}
}
