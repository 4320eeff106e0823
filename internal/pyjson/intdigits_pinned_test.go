package pyjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEncoderAcceptsIntegersAtPythonsDigitLimit guarantees that an integer
// of exactly MaxIntDigits digits, with or without a minus sign, is written:
// CPython's int_max_str_digits refuses only longer ones and does not count
// the sign.
func TestEncoderAcceptsIntegersAtPythonsDigitLimit(t *testing.T) {
	t.Parallel()
	digits := strings.Repeat("9", MaxIntDigits)
	for _, lit := range []string{digits, "-" + digits} {
		b, err := Marshal(json.Number(lit), Canonical)
		if err != nil || string(b) != lit {
			t.Errorf("Marshal of a %d-digit integer (%d chars) failed: %v", MaxIntDigits, len(lit), err)
		}
	}
}
