package code

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Run's errors carry the reference's CodeExecutionError wrappers by phase
// (code_executor.py). Starlark rejects an undefined name before the code
// runs; it is reported as the NameError Python raises when the name is
// evaluated: in the module's top level an "Execution error", in a function
// body a "Runtime error". Other resolve errors are Python SyntaxErrors.
func TestRunErrorsCarryThePhaseWrapper(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"syntax", "def transform(_input)\n    return 1\n", "Syntax error: got newline, want ':'"},
		{"resolve error other than a name", "def transform(_input):\n    f() = 1\n    return 1\n", "Syntax error: can't assign to callexpr"},
		{"syntax error before an undefined name", "x = nope\ndef transform(_input):\n    f() = 1\n", "Syntax error: can't assign to callexpr"},
		{"undefined name in a body", "def transform(_input):\n    return nope\n", "Runtime error: undefined: nope"},
		{"undefined name in a lambda", "f = lambda x: nope\ndef transform(_input):\n    return f(1)\n", "Runtime error: undefined: nope"},
		{"undefined name at top level", "def transform(_input):\n    return other\nx = [nope]\n", "Execution error: undefined: nope"},
		{"undefined default value", "def transform(_input, y=nope):\n    return 1\n", "Execution error: undefined: nope"},
		{"first in source order", "def transform(_input):\n    return b + a\n", "Runtime error: undefined: b"},
		// Starlark reports a nested function's names before its parent's.
		{"first in source order across nested functions", "def transform(_input):\n    x = b\n    f = lambda: a\n    return x\n", "Runtime error: undefined: b"},
		{"module error", "x = 1 // 0\ndef transform(_input):\n    return 1\n", "Execution error: floored division by zero"},
		{"load", "load('x.star', 'y')\ndef transform(_input):\n    return 1\n", "Execution error: cannot load x.star: load() is not allowed in the sandbox"},
		{"function is None", "transform = None\n", "Function 'transform' not defined in code"},
		{"not callable", "transform = [1]\n", "'transform' is not a callable function"},
		{"call error", "def transform(_input):\n    return 1 // 0\n", "Runtime error: floored division by zero"},
		{"result not convertible", "def transform(_input):\n    return transform\n", "cannot return a value of type function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Run(context.Background(), tc.src, "transform", map[string]any{}, Limits{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A limit met during the call is a "Runtime error" and still an ErrLimit;
// met while the module runs, an "Execution error".
func TestRunLimitErrorsCarryThePhaseWrapper(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxSteps: 10000, Timeout: 10 * time.Second}
	for _, tc := range []struct{ name, src, want string }{
		{"call", "def transform(_input):\n    while True:\n        pass\n", "Runtime error: sandbox limit exceeded: exceeded 10000 execution steps"},
		{"module", "while True:\n    pass\ndef transform(_input):\n    return 1\n", "Execution error: sandbox limit exceeded: exceeded 10000 execution steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Run(context.Background(), tc.src, "transform", map[string]any{}, lim)
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want %q wrapping ErrLimit", err, tc.want)
			}
		})
	}
}
