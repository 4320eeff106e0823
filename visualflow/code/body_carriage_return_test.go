package code_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/visualflow/code"
)

// TestBuildBodyPinIDWithCarriageReturnRuns: a code node whose pin id holds
// a carriage return ("a\rb", possible in a hand-written flow) runs and
// reads that pin. Written raw into `a_b = _input.get("a\rb")`, the CR is
// a line break inside a Starlark string, and every run failed with
// "Syntax error: unexpected newline in string" (found by FuzzCodeBodyParam).
func TestBuildBodyPinIDWithCarriageReturnRuns(t *testing.T) {
	for _, pin := range []string{"a\rb", "x\r\ny", "\r"} {
		src := code.BuildBody("transform", "return "+code.Ident(pin), []string{pin})
		v, _, err := code.Run(context.Background(), src, "transform", map[string]any{pin: "v"}, code.Limits{})
		if err != nil || v != "v" {
			t.Errorf("pin %q: got %#v, %v; want \"v\"\n%s", pin, v, err, src)
		}
	}
}
