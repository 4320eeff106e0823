package runtime_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

func runWithLimits(l map[string]any) *durable.RunState {
	return &durable.RunState{RunID: "r", Vars: map[string]any{"_limits": l}}
}

// check_limits warns at pct >= warn_*_pct: 40 of 50 iterations (80%)
// with the default threshold of 80 is a warning. Comparing with > would
// stay silent exactly at the threshold.
func TestCheckLimitsWarnsExactlyAtTheThreshold(t *testing.T) {
	t.Parallel()
	got := runtime.CheckLimitsOf(runWithLimits(map[string]any{"current_iteration": 40, "max_iterations": 50,
		"estimated_tokens_used": 800, "max_tokens": 1000}))
	if len(got) != 2 || got[0].LimitType != "iterations" || got[0].Status != "warning" ||
		got[1].LimitType != "tokens" || got[1].Status != "warning" {
		t.Fatalf("warnings = %+v, want an iterations and a tokens warning at 80%%", got)
	}
}

// Python's check_limits checks a limit only when its maximum is > 0: a
// max_iterations of "0" (truthy, so int("0") = 0 and not the default) gives
// no warning. A guard of < 0 would report 0 of 0 as exceeded.
func TestCheckLimitsZeroMaximumGivesNoWarning(t *testing.T) {
	t.Parallel()
	got := runtime.CheckLimitsOf(runWithLimits(map[string]any{"current_iteration": 3, "max_iterations": "0",
		"estimated_tokens_used": 5, "max_tokens": "0"}))
	if len(got) != 0 {
		t.Fatalf("warnings = %+v, want none for a maximum of 0", got)
	}
}

// get_limit_status reads max_history_messages with a default of -1
// (unlimited) when _limits has no such key. Another default (null) would
// read as "no limit set" to a host.
func TestLimitStatusHistoryDefaultsToMinusOne(t *testing.T) {
	t.Parallel()
	st := runtime.LimitStatusOf(runWithLimits(map[string]any{"max_iterations": 10}))
	h, _ := st["history"].(map[string]any)
	if n, ok := runtime.AsInt(h["max_messages"]); !ok || n != -1 {
		t.Fatalf("history = %#v, want max_messages -1", st["history"])
	}
}

// A stored threshold past the float range (1e400, which Python's json
// reads as inf) is compared as +Inf: 45 of 50 iterations is no warning. An
// AsFloat refusing it would fall back to the default 80 and warn.
func TestLimitStatusInfiniteThresholdNeverWarns(t *testing.T) {
	t.Parallel()
	st := runtime.LimitStatusOf(runWithLimits(map[string]any{"current_iteration": json.Number("45"),
		"max_iterations": json.Number("50"), "warn_iterations_pct": json.Number("1e400")}))
	it, _ := st["iterations"].(map[string]any)
	if it["warning"] != false {
		t.Fatalf("iterations = %#v, want no warning under an infinite threshold", it)
	}
	if f, ok := runtime.AsFloat(json.Number("1e400")); !ok || !math.IsInf(f, 1) {
		t.Fatalf("AsFloat(1e400) = %v, %v; want +Inf, true", f, ok)
	}
}

// AsInt reports false for a number with a fractional part, whatever its Go
// type: a float64 1.5 set by a node in the current tick is not an integer.
func TestAsIntRefusesAFractionalFloat(t *testing.T) {
	t.Parallel()
	if n, ok := runtime.AsInt(1.5); ok {
		t.Fatalf("AsInt(1.5) = %d, true; want false", n)
	}
	if n, ok := runtime.AsInt(2.0); !ok || n != 2 {
		t.Fatalf("AsInt(2.0) = %d, %v; want 2, true", n, ok)
	}
}

// SetPath with an empty path writes nothing: there is no key to write.
// Without the guard the value would land under the key "".
func TestSetPathEmptyPathWritesNothing(t *testing.T) {
	t.Parallel()
	vars := map[string]any{"a": 1}
	runtime.SetPath(vars, "", "x")
	if len(vars) != 1 {
		t.Fatalf("vars = %v, want unchanged", vars)
	}
}
