package pyjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// A json.Number integer of more than MaxIntDigits digits (CPython
// 3.11's int_max_str_digits: json.loads and json.dumps raise ValueError
// on it) is refused by the encoder, so Normalize refuses it with the
// encoder's error and IsNormalized says false, as for any value with no
// round trip. Their fast paths checked only that the literal is a valid
// number: the value passed normalisation and failed only at the commit.
// A literal with a fraction or an exponent is a float and not limited.
func TestNormalizeRefusesAnIntegerPastPythonsDigitLimit(t *testing.T) {
	t.Parallel()
	v := map[string]any{"n": json.Number(strings.Repeat("1", MaxIntDigits+1))}
	if _, err := Marshal(v, Line); err == nil {
		t.Fatal("the encoder accepts the integer; the test's premise is gone")
	}
	if _, err := Normalize(v); err == nil {
		t.Errorf("Normalize of a %d-digit integer succeeded; the encoder refuses it", MaxIntDigits+1)
	}
	if IsNormalized(v) {
		t.Errorf("IsNormalized of a %d-digit integer = true; it has no round trip", MaxIntDigits+1)
	}
	for _, ok := range []json.Number{json.Number(strings.Repeat("9", MaxIntDigits)),
		json.Number("-" + strings.Repeat("9", MaxIntDigits)), json.Number(strings.Repeat("1", MaxIntDigits+1) + ".5"),
		json.Number(strings.Repeat("1", MaxIntDigits+1) + "e3")} {
		if _, err := Normalize(ok); err != nil || !IsNormalized(ok) {
			t.Errorf("a %d-character number within the limit: Normalize error %v, IsNormalized %v; want it kept",
				len(ok), err, IsNormalized(ok))
		}
	}
}
