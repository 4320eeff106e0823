// Package pyval emulates the Python value semantics that VisualFlow nodes
// depend on (spec visualflow.md, Appendix B).
//
// The project's JSON value model is: nil, bool, string, json.Number, float64,
// int64, int, []any and map[string]any. Every function here accepts all of
// these number kinds (and the other Go integer and float kinds) as input, and
// produces int64 for Python ints and float64 for Python floats. A json.Number
// whose literal contains no '.', 'e' or 'E' is a Python int; otherwise it is
// a float. An int beyond int64 stays a json.Number holding its digits, which
// str(), repr() and json.dumps() write; arithmetic reads it as a float.
//
// The package covers truthiness and boolean coercion, str()/repr(), float
// repr, numeric conversions (float(x), int(x)), equality and ordering,
// rounding and modulo, code-point string helpers, dotted paths, JSON text in
// Python's json.dumps style, a JSON decoder that accepts NaN/Infinity,
// Python-literal parsing (ast.literal_eval subset) and str.format.
//
// Deliberate difference from Python: Go maps do not keep insertion order, so
// wherever Python output depends on dict order (repr of dicts, JSON text),
// keys are emitted sorted.
package pyval
