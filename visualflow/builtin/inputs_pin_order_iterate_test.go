package builtin

import "testing"

// Spec §6.3 coalesce: empty names in _pin_order are dropped, and an order
// left empty falls back to ["a", "b"]. Breaks if "" is kept as a pin
// (coalesce would look only at the absent "" input and return null).
func TestCoalesceIgnoresEmptyPinOrderNames(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "empty name only", typ: "coalesce", in: obj{"_pin_order": arr{""}, "a": nil, "b": "x"}, want: "x"},
	})
}

// Spec §6.7 array_map iterates its items as Python does: an object yields
// its keys. Breaks if an object is refused as not iterable.
func TestArrayMapIteratesAnObjectsKeys(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "object items", typ: "array_map", in: obj{"items": obj{"k": int64(1)}, "key": "x"}, want: arr{"k"}},
	})
}

// Spec §6.7 parse_json strips a one-line code fence (```42```) down to its
// text, so a fenced scalar parses. Breaks if the one-line fence is kept.
func TestParseJSONOneLineFencedScalar(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "one-line fence", typ: "parse_json", in: obj{"text": "```42```"}, want: obj{"value": int64(42)}},
	})
}

// Spec §6.4 round: decimals far below int32 still round to a power of ten
// past the value, as Python's round(123.0, -3000000000) gives 0.0. Breaks
// if the low clamp lands on a small negative number of decimals.
func TestRoundHugeNegativeDecimalsIsZero(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "decimals -3e9", typ: "round", in: obj{"value": 123.0, "decimals": int64(-3000000000)}, want: 0.0},
	})
}
