package runtime_test

import (
	"context"
	"math"
	"strings"
	"testing"
)

// UpdateLimits refuses a value no store could hold with the path where it
// would be stored, as Start names a var it refuses: a host finds the
// element at fault, not only the limit key.
func TestUpdateLimitsRefusalNamesTheFullPath(t *testing.T) {
	f, id := limitsRun(t, nil)
	ctx := context.Background()
	cases := []struct {
		key  string
		v    any
		path string
	}{
		{"max_tokens", math.NaN(), "vars._limits.max_tokens is not JSON-serialisable"},
		{"max_tokens", []any{int64(1), math.Inf(1)}, "vars._limits.max_tokens[1] is not JSON-serialisable"},
		{"warn_tokens_pct", map[string]any{"a": make(chan int)}, "vars._limits.warn_tokens_pct.a is not JSON-serialisable"},
	}
	for _, c := range cases {
		err := f.rt.UpdateLimits(ctx, id, map[string]any{c.key: c.v})
		if err == nil || !strings.Contains(err.Error(), c.path) {
			t.Errorf("UpdateLimits(%s = %v) = %v; want an error naming %q", c.key, c.v, err, c.path)
		}
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tok := st["tokens"].(map[string]any); tok["max"] != int64(32768) {
		t.Errorf("tokens %v after refused updates; want the default max 32768 untouched", tok)
	}
}
