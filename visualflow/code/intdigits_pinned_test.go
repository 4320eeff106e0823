package code

import (
	"context"
	"strings"
	"testing"
)

// Python's int-string digit limit counts digits, not the underscores
// between them: int("1_" * 2200 + "1") has 2,201 digits and converts,
// where a count of every character (4,401) would refuse it. A string of
// more than 4,300 digits is still refused with Python's message.
func TestIntStringDigitLimitIgnoresUnderscores(t *testing.T) {
	got := evalOK(t, `int("1_" * 2200 + "1") == int("1" * 2201)`, map[string]any{})
	if got != true {
		t.Fatalf(`int("1_" * 2200 + "1") == int("1" * 2201) = %#v, want True (Python)`, got)
	}
	_, _, err := Eval(context.Background(), `int("1_" * 4300 + "1")`, map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "value has 4301 digits") {
		t.Fatalf(`int("1_" * 4300 + "1"): err = %v, want Python's limit error counting 4301 digits`, err)
	}
}
