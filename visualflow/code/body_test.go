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
