package code

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRun_TransformAndConversions(t *testing.T) {
	t.Parallel()
	src := `
def transform(_input):
    items = _input["items"]
    out = {"n": len(items), "sum": sum(items), "half": round(2.5), "r2": round(2.675, 2),
           "ok": isinstance(items, list), "none": _input.get("missing"), "f": 1 / 2,
           "m": list(map(lambda x: x * 2, items)), "flt": filter(None, [0, 1, 2])}
    return out
`
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"items": []any{int64(1), int64(2), int64(3)}}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	want := map[string]any{"n": int64(3), "sum": int64(6), "half": int64(2), "r2": 2.67, "ok": true, "none": nil, "f": 0.5}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
}

func TestRun_Sandbox(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
		lim             Limits
		limit           bool
	}{
		{"load refused", "load('x.star', 'y')\ndef transform(_input):\n    return 1", "load() is not allowed", Limits{}, false},
		{"no open", "def transform(_input):\n    return open('/etc/passwd')", "undefined: open", Limits{}, false},
		{"no import", "import os\ndef transform(_input):\n    return 1", "got import", Limits{}, false},
		{"steps", "def transform(_input):\n    while True:\n        pass", "execution steps", Limits{MaxSteps: 10000}, true},
		{"timeout", "def transform(_input):\n    while True:\n        pass", "timeout", Limits{Timeout: 50 * time.Millisecond, MaxSteps: 1 << 62}, true},
		{"memory", "def transform(_input):\n    x = []\n    for i in range(100000000):\n        x.append('abcdefghijklmnopqrstuvwxyz' * 10)\n    return len(x)", "memory limit", Limits{MaxMemory: 32 << 20, MaxSteps: 1 << 62, Timeout: 30 * time.Second}, true},
		{"missing function", "def other(_input):\n    return 1", "Function 'transform' not defined in code", Limits{}, false},
		{"runtime error", "def transform(_input):\n    return 1 // 0", "division by zero", Limits{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Run(context.Background(), tc.src, "transform", map[string]any{}, tc.lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if tc.limit != errors.Is(err, ErrLimit) {
				t.Fatalf("errors.Is(err, ErrLimit) = %v", !tc.limit)
			}
		})
	}
}

func TestBuildBodyAndEval(t *testing.T) {
	t.Parallel()
	src := BuildBody("transform", "return {'s': my_pin + 1, 'k': class_}", []string{"my-pin", "class"})
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"my-pin": int64(1), "class": "c"}, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if m := got.(map[string]any); m["s"] != int64(2) || m["k"] != "c" {
		t.Fatalf("got %v", got)
	}
	if Ident("9lives") != "p_9lives" || Ident("") != "param" || FunctionName("bad name") != "transform" {
		t.Fatal("identifier sanitising")
	}
	v, _, err := Eval(context.Background(), "x['a'] * 2", map[string]any{"x": map[string]any{"a": int64(21)}}, Limits{})
	if err != nil || v != int64(42) {
		t.Fatalf("eval = %v, %v", v, err)
	}
}

// evalOK evaluates expr with names bound and fails the test on error.
func evalOK(t *testing.T, expr string, names map[string]any) any {
	t.Helper()
	v, _, err := Eval(context.Background(), expr, names, Limits{})
	if err != nil {
		t.Fatalf("Eval(%q): %v", expr, err)
	}
	return v
}

func runSource(t *testing.T, src string, input map[string]any) any {
	t.Helper()
	got, _, err := Run(context.Background(), src, "f", input, Limits{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return got
}
