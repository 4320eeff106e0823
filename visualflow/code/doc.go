// Package code runs the user code of VisualFlow `code` and `function`
// nodes in a Starlark sandbox (go.starlark.net) instead of the reference
// RestrictedPython.
//
// The sandbox has no load(), no file, network, clock or environment
// access, a step budget (starlark.Thread.SetMaxExecutionSteps), a
// wall-clock timeout and an approximate memory watchdog (both cancel the
// thread). Values cross the boundary as JSON: nil, bool, int64, float64,
// string, []any and map[string]any become None, bool, int, float, string,
// list and dict, and back (tuples and sets become lists).
//
// Starlark is a Python dialect, so typical transform functions run
// unchanged; docs/visualflow.md lists the differences (no classes, no
// exceptions/try, no imports, no f-strings, ints are arbitrary precision
// but results beyond int64 come back as floats, strings are byte-indexed,
// ...).
package code
