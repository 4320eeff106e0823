package runtime_test

import (
	"context"
	"testing"
)

// UpdateLimits refuses only values the limit reads cannot take as an
// integer (docs/compatibility.md). A falsy value ("", [], {}) is not one:
// Python's reads take int(x or default), the default, without raising,
// and so do ours, exactly as for the null the update accepts; the token
// budgets and the history limit are returned as stored. Refusing it gave
// a host that clears a limit field ("") an error Python never gives, for
// a value both runtimes read fine. A warning threshold keeps its stricter
// rule: get_limit_status compares it as stored.
func TestUpdateLimitsAcceptsAnEmptyStringTheReadsTakeAsTheDefault(t *testing.T) {
	f, id := limitsRun(t, nil)
	ctx := context.Background()
	err := f.rt.UpdateLimits(ctx, id, map[string]any{
		"max_tokens": "", "max_iterations": "", "current_iteration": []any{}, "estimated_tokens_used": map[string]any{},
		"max_input_tokens": "",
	})
	if err != nil {
		t.Fatalf("UpdateLimits with falsy values (read as the default by Python's int(x or default) and by ours): %v", err)
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if it := st["iterations"].(map[string]any); it["max"] != int64(50) || it["current"] != int64(0) {
		t.Errorf("iterations %v; want the defaults, current 0 of 50", it)
	}
	if tok := st["tokens"].(map[string]any); tok["max"] != int64(32768) || tok["estimated_used"] != int64(0) ||
		tok["max_input_tokens"] != "" {
		t.Errorf("tokens %v; want the defaults, 0 of 32768, and max_input_tokens \"\" as stored", tok)
	}
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{"warn_tokens_pct": ""}); err == nil {
		t.Error("UpdateLimits accepted warn_tokens_pct = \"\": get_limit_status compares a threshold as stored")
	}
}
