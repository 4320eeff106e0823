package pyjson

import (
	"encoding/json"
	"testing"
)

// Small integers decode to the same json.Number as any other literal,
// from a table (no allocation per number); everything else, leading
// zeros included, takes the usual path.
func TestDecode_SmallNumbers(t *testing.T) { // not parallel: it counts allocations
	for _, lit := range []string{"0", "7", "42", "999", "1000", "-1", "-0", "1.5", "1e3", "12345"} {
		v, err := Decode([]byte(lit))
		if err != nil || v != json.Number(lit) {
			t.Errorf("Decode(%s) = %#v, %v; want json.Number(%q)", lit, v, err, lit)
		}
	}
	for _, bad := range []string{"01", "00", "007"} {
		if v, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) = %#v; want an error (leading zero)", bad, v)
		}
	}
	small := testing.AllocsPerRun(100, func() { _, _ = Decode([]byte(`[0, 1, 2, 3, 4, 5, 6, 7, 80, 999]`)) })
	large := testing.AllocsPerRun(100, func() { _, _ = Decode([]byte(`[1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1080, 1999]`)) })
	if small+10 > large {
		t.Errorf("decoding ten small integers took %.0f allocations, ten large ones %.0f; want 10 fewer", small, large)
	}
}
