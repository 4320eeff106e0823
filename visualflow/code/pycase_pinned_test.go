package code

import (
	"context"
	"strings"
	"testing"
)

// str.upper() and str.lower() take no arguments, as in Python, where
// "a".upper(1) raises TypeError: the sandbox's full case mapping must not
// silently ignore extra arguments.
func TestCaseMappingRefusesArguments(t *testing.T) {
	for _, expr := range []string{`"a".upper(1)`, `"A".lower("x")`, `"a".upper(x=1)`} {
		_, _, err := Eval(context.Background(), expr, map[string]any{}, Limits{})
		if err == nil || !strings.Contains(err.Error(), "upper") && !strings.Contains(err.Error(), "lower") {
			t.Errorf("%s: err = %v, want an error naming the method (Python: TypeError)", expr, err)
		}
	}
}
