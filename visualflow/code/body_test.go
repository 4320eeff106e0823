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

// Guards Ident against the spec's rules for a pin id (§6.9): characters
// outside [A-Za-z0-9_] become '_', a leading digit (any of 0-9) gets a
// "p_" prefix, a keyword a '_' suffix, and empty becomes "param".
func TestIdentSanitisesPinIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"0abc", "p_0abc"},
		{"9lives", "p_9lives"},
		{"5", "p_5"},
		{"my-pin", "my_pin"},
		{"a.b c", "a_b_c"},
		{"class", "class_"},
		{"load", "load_"},
		{"", "param"},
		{"_x1", "_x1"},
	} {
		if got := Ident(tc.in); got != tc.want {
			t.Errorf("Ident(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Guards dedent as Python's textwrap.dedent: the margin removed is the
// whitespace prefix common to the non-blank lines (a tab and spaces have
// none in common), and a line of only spaces and tabs becomes empty
// without narrowing the margin.
func TestDedentAsTextwrap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"    a\n      b", "a\n  b"},
		{"\ta\n  b", "\ta\n  b"},
		{"  a\n \tb", " a\n\tb"},
		{"  a\n \n  b", "a\n\nb"},
		{"a\n  b", "a\n  b"},
	} {
		if got := dedent(tc.in); got != tc.want {
			t.Errorf("dedent(%q) = %q, want %q (textwrap.dedent)", tc.in, got, tc.want)
		}
	}
}
