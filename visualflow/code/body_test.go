package code

import (
	"context"
	"testing"
)

// BuildBody wraps the body as Python's wrapper does: a body whose lines
// share an indentation is dedented (textwrap.dedent), CRLF becomes LF,
// and a tab inside a string literal is kept (only indentation tabs are
// expanded).
func TestBuildBodyAsPythonWrapper(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       any
	}{
		{"tab in a string literal", "return 'a\tb'", "a\tb"},
		{"common indentation", "    y = x + 1\n    return y\n", int64(3)},
		{"CRLF line ends", "y = x\r\nreturn y * 2\r\n", int64(4)},
	} {
		src := BuildBody("transform", tc.body, []string{"x"})
		got, _, err := Run(context.Background(), src, "transform", map[string]any{"x": int64(2)}, Limits{})
		if err != nil || got != tc.want {
			t.Errorf("%s: got %#v, %v; want %#v\n%s", tc.name, got, err, tc.want, src)
		}
	}
}

// Guards FunctionName: a keyword is not a usable function name, even
// though it matches the identifier pattern (docs/visualflow.md).
func TestFunctionNameReplacesKeywords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"def": "transform", "return": "transform", "None": "transform", "load": "transform", "my_fn": "my_fn", "_x1": "_x1"} {
		if got := FunctionName(in); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Guards BuildBody's empty body: a body of only whitespace is empty, so
// the function returns its input.
func TestBuildBodyBlankBodyReturnsInput(t *testing.T) {
	t.Parallel()
	src := BuildBody("transform", "  \n\t\n", []string{"a"})
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"a": int64(1)}, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if m, ok := got.(map[string]any); !ok || m["a"] != int64(1) || len(m) != 1 {
		t.Fatalf("got %#v, want the input", got)
	}
}

// Guards BuildBody's handling of a body indented with tabs, as editors
// produce it: a tab counts as four spaces, so a block may mix a tab and
// four spaces.
func TestBuildBodyAcceptsTabIndentation(t *testing.T) {
	t.Parallel()
	src := BuildBody("transform", "if x > 1:\n\tif x > 2:\n\t\ty = 'big'\n\t    return y\nreturn 'small'", []string{"x"})
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"x": int64(5)}, Limits{})
	if err != nil || got != "big" {
		t.Fatalf("got %#v, %v\n%s", got, err, src)
	}
}

// Guards the quoting of pin ids in the generated `_input.get("<pin id>")`:
// a pin id with a double quote, a backslash or a newline is read verbatim.
func TestBuildBodyQuotesOddPinIDs(t *testing.T) {
	t.Parallel()
	pins := []string{`say "hi"`, `back\slash`, "new\nline"}
	src := BuildBody("transform", "return [say__hi_, back_slash, new_line]", pins)
	in := map[string]any{`say "hi"`: "q", `back\slash`: "b", "new\nline": "n"}
	got, _, err := Run(context.Background(), src, "transform", in, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if l, ok := got.([]any); !ok || len(l) != 3 || l[0] != "q" || l[1] != "b" || l[2] != "n" {
		t.Fatalf("got %#v, want [q b n]", got)
	}
}
