package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// LimitsConfig seeds vars._limits of new runs (Python RuntimeConfig).
// Nil pointers mean "not set".
type LimitsConfig struct {
	MaxIterations      int // 0 means 50 (the spec's default; Python 0.4.28's code has 25, see docs/compatibility.md)
	WarnIterationsPct  int // 0 means 80
	MaxTokens          *int
	MaxOutputTokens    *int
	MaxInputTokens     *int
	WarnTokensPct      int  // 0 means 80
	MaxHistoryMessages *int // nil means -1 (unlimited)
	Provider, Model    string
	// ModelMaxTokens and ModelMaxOutputTokens are the model capabilities
	// consulted when MaxTokens / MaxOutputTokens are nil.
	ModelMaxTokens, ModelMaxOutputTokens *int
	// ToolSupport is the model capability tool_support ("native", …).
	ToolSupport string
}

// limitsDict is Python's RuntimeConfig.to_limits_dict().
func (c LimitsConfig) limitsDict() map[string]any {
	maxTokens := int64(32768)
	if c.MaxTokens != nil {
		maxTokens = int64(*c.MaxTokens)
	} else if c.ModelMaxTokens != nil {
		maxTokens = int64(*c.ModelMaxTokens)
	}
	// max_output_tokens as given (-1 too; unset is null), clamping the
	// input budget only when it is not negative.
	var maxOut any
	var maxOutN int64 = -1
	if p := cmp.Or(c.MaxOutputTokens, c.ModelMaxOutputTokens); p != nil {
		maxOutN = int64(*p)
		maxOut = maxOutN
	}
	var maxIn any
	if c.MaxInputTokens != nil {
		in := int64(*c.MaxInputTokens)
		if maxTokens > 0 && maxOut != nil && maxOutN >= 0 {
			in = max(0, min(in, maxTokens-maxOutN-256))
		}
		maxIn = in
	}
	hist := int64(-1)
	if c.MaxHistoryMessages != nil {
		hist = int64(*c.MaxHistoryMessages)
	}
	maxIter := c.MaxIterations
	if maxIter == 0 {
		maxIter = 50
	}
	return map[string]any{
		"max_iterations":        int64(maxIter),
		"current_iteration":     int64(0),
		"max_tokens":            maxTokens,
		"max_output_tokens":     maxOut,
		"max_input_tokens":      maxIn,
		"estimated_tokens_used": int64(0),
		"max_history_messages":  hist,
		"warn_iterations_pct":   int64(orInt(c.WarnIterationsPct, 80)),
		"warn_tokens_pct":       int64(orInt(c.WarnTokensPct, 80)),
	}
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// LimitWarning is one limit at or near its maximum.
type LimitWarning struct {
	LimitType string  `json:"limit_type"` // iterations | tokens
	Status    string  `json:"status"`     // warning | exceeded
	Current   int64   `json:"current"`
	Maximum   int64   `json:"maximum"`
	Pct       float64 `json:"pct"`
}

// limitsOf is vars._limits as an object, read as a checkpoint would give
// it back: a node's working copy may hold it as a Go-typed map
// (map[string]int) or with Go-typed numbers (int32, uint8), which the
// reads would otherwise take for absent (the defaults). A copy then; the
// run is not changed. A value that is not JSON is read as it is.
func limitsOf(run *durable.RunState) map[string]any {
	if run == nil {
		return nil
	}
	v := run.Vars["_limits"]
	l, isObject := v.(map[string]any)
	if isObject && pyjson.IsNormalizedObject(l) {
		return l
	}
	if n, err := pyjson.Normalize(v); err == nil {
		if m, ok := n.(map[string]any); ok {
			return m
		}
	}
	return l
}

// pyInt is Python's int(v) of a JSON value: numbers truncated toward
// zero, booleans 0 and 1, strings in int()'s base-10 syntax (sign,
// surrounding whitespace, underscores, any Unicode decimal digits); ok is
// false where Python's would raise. A number past int64, which Python
// keeps exact, is clamped to it.
func pyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		n, err := pyval.ToIndex(x)
		return n, err == nil
	}
	if n, ok := AsInt(v); ok {
		return n, true
	}
	if f, ok := AsFloat(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return pyval.SaturatedInt(f), true // Python's int has no bound; ours stops at int64's
	}
	return 0, false
}

// limitOr reads a limit as Python's int(x or def) does: a falsy value
// gives def, a fraction is truncated.
func limitOr(l map[string]any, key string, def int64) int64 {
	if v := l[key]; truthy(v) {
		if n, ok := pyInt(v); ok {
			return n
		}
	}
	return def
}

// threshold reads a warning threshold as stored (Python compares the
// stored value: a bool as 0 or 1), def when absent or not a number.
func threshold(l map[string]any, key string, def float64) float64 {
	if b, ok := l[key].(bool); ok {
		if b {
			return 1
		}
		return 0
	}
	if f, ok := AsFloat(l[key]); ok {
		return f
	}
	return def
}

// pct is Python's round(cur/maxV*100, 1): half to even on the exact
// binary value, which formatting with one decimal does (12.25 → 12.2).
func pct(cur, maxV int64) float64 {
	if maxV <= 0 {
		return 0
	}
	p, _ := strconv.ParseFloat(strconv.FormatFloat(rawPct(cur, maxV), 'f', 1, 64), 64)
	return p
}

// rawPct is the unrounded percentage the warning thresholds are compared
// with, as Python compares them.
func rawPct(cur, maxV int64) float64 {
	if maxV <= 0 {
		return 0
	}
	return float64(cur) / float64(maxV) * 100
}

// GetLimitStatus returns the run's iteration, token and history limits
// with their usage (LimitStatusOf). Called by a node or handler of the run
// (ctx is the one its tick handed it), it reads the run as that tick holds
// it, its uncommitted changes included, as Python's get_limit_status(run)
// reads the run object it is given; otherwise it reads the last checkpoint.
func (r *Runtime) GetLimitStatus(ctx context.Context, runID string) (map[string]any, error) {
	run, err := r.limitsRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	return LimitStatusOf(run), nil
}

// CheckLimits returns the limits at or past their warning threshold
// (CheckLimitsOf). Called by a node or handler of the run (ctx is the one
// its tick handed it), it checks the run as that tick holds it, so a node
// that counts _limits.current_iteration sees its own count, as Python's
// check_limits(run) checks the run object it is given; otherwise it
// checks the last checkpoint.
func (r *Runtime) CheckLimits(ctx context.Context, runID string) ([]LimitWarning, error) {
	run, err := r.limitsRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	return CheckLimitsOf(run), nil
}

// limitsRun is the run the limit reads look at: the working copy of the
// tick that holds runID's lock up ctx's call stack, else the stored run.
// Pure transitions are committed only at checkpoints, so the stored run
// may be several steps behind the run a node is given.
func (r *Runtime) limitsRun(ctx context.Context, runID string) (*durable.RunState, error) {
	if run := r.heldRun(ctx, runID); run != nil {
		return run, nil
	}
	return r.GetState(ctx, runID)
}

// LimitStatusOf returns run's iteration, token and history limits
// (vars._limits) with their usage, as Python's get_limit_status reads
// them: {"iterations": {current, max, pct, warning}, "tokens":
// {estimated_used, max, max_input_tokens, max_output_tokens, pct,
// warning}, "history": {max_messages}}. It only reads run; a node may call
// it on the run it is given.
func LimitStatusOf(run *durable.RunState) map[string]any {
	l := limitsOf(run)
	// As Python has it: usage and maxima read with int(x or default), the
	// thresholds and the history limit as stored, and the warning flags
	// set from the rounded percentage (CheckLimitsOf compares the
	// unrounded one).
	iterCur, iterMax := limitOr(l, "current_iteration", 0), limitOr(l, "max_iterations", 50)
	tokCur, tokMax := limitOr(l, "estimated_tokens_used", 0), limitOr(l, "max_tokens", 32768)
	warnIter, warnTok := threshold(l, "warn_iterations_pct", 80), threshold(l, "warn_tokens_pct", 80)
	history, ok := l["max_history_messages"]
	if !ok {
		history = int64(-1)
	}
	// Copies: the status must not share values with a run being ticked.
	return map[string]any{
		"iterations": map[string]any{
			"current": iterCur, "max": iterMax, "pct": pct(iterCur, iterMax),
			"warning": pct(iterCur, iterMax) >= warnIter,
		},
		"tokens": map[string]any{
			"estimated_used": tokCur, "max": tokMax,
			"max_input_tokens": pyjson.Clone(l["max_input_tokens"]), "max_output_tokens": pyjson.Clone(l["max_output_tokens"]),
			"pct": pct(tokCur, tokMax), "warning": pct(tokCur, tokMax) >= warnTok,
		},
		"history": map[string]any{"max_messages": pyjson.Clone(history)},
	}
}

// CheckLimitsOf returns the limits of run (vars._limits) at or past their
// warning threshold, as Python's check_limits(run): iterations always,
// tokens once some are used. The kernel enforces none of them; a workflow
// node decides what to do with the warnings. It only reads run; a node may
// call it on the run it is given.
func CheckLimitsOf(run *durable.RunState) []LimitWarning {
	l := limitsOf(run)
	var out []LimitWarning
	check := func(kind string, cur, maxV, warn int64) {
		if maxV <= 0 {
			return
		}
		p := pct(cur, maxV)
		switch {
		case cur >= maxV:
			out = append(out, LimitWarning{kind, "exceeded", cur, maxV, p})
		case rawPct(cur, maxV) >= float64(warn):
			out = append(out, LimitWarning{kind, "warning", cur, maxV, p})
		}
	}
	// Every value read with int(x or default), as Python reads them.
	check("iterations", limitOr(l, "current_iteration", 0), limitOr(l, "max_iterations", 50),
		limitOr(l, "warn_iterations_pct", 80))
	if used := limitOr(l, "estimated_tokens_used", 0); used > 0 {
		check("tokens", used, limitOr(l, "max_tokens", 32768), limitOr(l, "warn_tokens_pct", 80))
	}
	return out
}

var updatableLimits = map[string]bool{
	"max_iterations": true, "max_tokens": true, "max_output_tokens": true, "max_input_tokens": true,
	"max_history_messages": true, "warn_iterations_pct": true, "warn_tokens_pct": true,
	"estimated_tokens_used": true, "current_iteration": true,
}

// UpdateLimits changes keys of vars._limits. Unknown keys and values the
// limit reads cannot take as an integer (checkLimitValue) are an error
// naming the key; updated_at is left as is.
func (r *Runtime) UpdateLimits(ctx context.Context, runID string, updates map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(updates)) { // the same key named every time
		if !updatableLimits[k] {
			return fmt.Errorf("update limits of run %s: %q is not an updatable limit", runID, k)
		}
		if err := checkLimitValue(k, updates[k]); err != nil {
			return fmt.Errorf("update limits of run %s: %w", runID, err)
		}
	}
	return r.hostUpdate(ctx, runID, false, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		if cur, ok := run.Vars["_limits"]; ok && cur != nil {
			if _, isObject := cur.(map[string]any); !isObject {
				// A caller's value (Start keeps _limits as given) is not
				// replaced by an object holding only the update: Python's
				// update_limits raises on it too.
				return false, nil, fmt.Errorf("update limits of run %s: vars._limits is a %s, not an object", runID, pyval.TypeName(cur))
			}
		}
		l := namespace(run.Vars, "_limits")
		for k, v := range updates {
			l[k] = v
		}
		return true, nil, nil
	})
}

// checkLimitValue refuses a value for limit key that the reads would not
// take as an integer: Python's int() raises on it when it reads the limit
// (get_limit_status, check_limits), where ours would read the default and
// govern the run by a limit nobody set. A falsy value (null, "", [], {})
// is a limit unset: the reads take int(x or default), the default, or
// return it as stored (a token budget, the history limit). A warning
// threshold is the exception: get_limit_status compares it as stored, so
// it must be a number.
func checkLimitValue(key string, v any) error {
	threshold := strings.HasPrefix(key, "warn_")
	if v == nil {
		if !threshold {
			return nil
		}
		return fmt.Errorf("%s = None is not a number", key)
	}
	// The path names where the value would be stored, as Start names a
	// var it refuses (vars._limits.max_tokens[0]).
	if err := pyjson.CheckMember(v, "vars._limits."+key, 2); err != nil {
		return err
	}
	n, err := pyjson.Normalize(v) // a host's int32 or float32 as a number
	if err != nil {
		return fmt.Errorf("vars._limits.%s: %w", key, err)
	}
	if !threshold && !truthy(n) {
		return nil
	}
	if _, isStr := n.(string); isStr && threshold {
		return fmt.Errorf("%s = %s is not a number", key, pyval.Repr(n))
	}
	if _, ok := pyInt(n); !ok {
		return fmt.Errorf("%s = %s is not an integer", key, pyval.Repr(n))
	}
	return nil
}

// noteTokensUsed sets _limits.estimated_tokens_used after a completed
// LLM_CALL (a reused result too) to the call's usage, as Python does: the
// first of input_tokens, prompt_tokens, total_tokens that is not null,
// as int() reads it; nothing when that one is a boolean or unreadable.
func noteTokensUsed(run *durable.RunState, eff *durable.Effect, out Outcome) {
	if eff.Type != durable.EffectLLMCall || out.Status != OutcomeCompleted {
		return
	}
	result := out.Result
	if !pyjson.IsNormalized(result) {
		// A handler's typed usage (map[string]int64, a struct) counts as
		// the same result read back from the ledger does.
		result, _ = pyjson.Normalize(result)
	}
	res, _ := result.(map[string]any)
	usage, _ := res["usage"].(map[string]any)
	var raw any
	for _, k := range []string{"input_tokens", "prompt_tokens", "total_tokens"} {
		if raw = usage[k]; raw != nil {
			break
		}
	}
	if _, isBool := raw.(bool); raw == nil || isBool {
		return
	}
	if n, ok := pyInt(raw); ok {
		// A json.Number, as the _limits a run starts with hold.
		namespace(run.Vars, "_limits")["estimated_tokens_used"] = json.Number(strconv.FormatInt(n, 10))
	}
}
