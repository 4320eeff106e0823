package builtin

// Tests added by a mutation-testing pass over visualflow/builtin: each
// guards a behaviour of spec visualflow.md §6 that no other test checked.

import "testing"

// compare `<=` and `>=` hold for equal operands (Python ordering), and
// `<`/`>` do not.
func TestCompareOrderingOperatorsOnEqualOperands(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "le equal", typ: "compare", in: obj{"a": int64(2), "b": 2.0, "op": "<="}, want: true},
		{name: "ge equal", typ: "compare", in: obj{"a": "x", "b": "x", "op": ">="}, want: true},
		{name: "lt equal", typ: "compare", in: obj{"a": int64(2), "b": int64(2), "op": "<"}, want: false},
		{name: "gt equal", typ: "compare", in: obj{"a": int64(2), "b": int64(2), "op": ">"}, want: false},
	})
}

// split with maxsplit 0 splits nothing ("at most maxsplit times when it
// is an int >= 0"), as Python's str.split(sep, 0).
func TestSplitMaxsplitZeroDoesNotSplit(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "maxsplit 0", typ: "split", in: obj{"text": "a,b,c", "maxsplit": int64(0)}, want: arr{"a,b,c"}},
		{name: "maxsplit 1", typ: "split", in: obj{"text": "a,b,c", "maxsplit": int64(1)}, want: arr{"a", "b,c"}},
		{name: "maxsplit -1", typ: "split", in: obj{"text": "a,b,c", "maxsplit": int64(-1)}, want: arr{"a", "b", "c"}},
	})
}
