package code

import (
	"context"
	"strings"
	"testing"
	"time"
)

// int() of a long digit string was one math/big call, quadratic in the
// digits, that neither the timeout nor the run's cancellation could stop
// (2M digits: ~7 s). Python (3.10.7+) refuses past 4,300 digits in a base
// that is not a power of two; so does the sandbox, at once.
func TestIntOfHugeDigitStringIsRefused(t *testing.T) {
	src := "def transform(_input):\n" +
		"    s = \"7\" * 2000000\n" +
		"    return int(s) > 0\n"
	// A minute's timeout: the parse must be refused, not stopped by the
	// watchdog (a quadratic parse would end in a timeout error or succeed).
	_, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "Exceeds the limit (4300 digits)") {
		t.Fatalf("int() of a 2M-digit string: error %v, want Python's digit limit", err)
	}
}

// The same parse through Starlark's int(s, base) is refused at once too,
// under a run's context that has no deadline of its own.
func TestIntOfHugeDigitStringInBase10IsRefused(t *testing.T) {
	src := "def transform(_input):\n" +
		"    return int(\"9\" * 2000000, 10) > 0\n"
	_, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "Exceeds the limit (4300 digits)") {
		t.Fatalf("int(s, 10) of a 2M-digit string: error %v, want Python's digit limit", err)
	}
}

// Writing an int of more than 4,300 decimal digits (str, repr, %d, %s,
// format) is refused as Python refuses it; a 24M-bit int read from hex
// (a power-of-two base: linear, allowed) took seconds to write in
// decimal, past a 1 s timeout.
func TestFormatOfHugeIntIsRefused(t *testing.T) {
	src := "def transform(_input):\n" +
		"    x = int(\"f\" * 6000000, 16)\n" +
		"    return len(\"%d\" % x)\n"
	_, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "Exceeds the limit (4300 digits)") {
		t.Fatalf("\"%%d\" of a 24M-bit int: error %v, want Python's digit limit", err)
	}
}

// The limit's edges, as Python 3.12: 4,300 digits pass, 4,301 fail (the
// sign not counted); power-of-two bases have no limit.
func TestIntDigitLimitAsPython(t *testing.T) {
	const big = `int("1" * 4300) * 10` // 4,301 digits
	for _, tc := range []struct{ expr, err string }{
		{`len(str(int("1" * 4300)))`, ""},
		{`len(str(-int("1" * 4300)))`, ""},
		{`int("1" * 4301)`, "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits"},
		{`int("1" * 5000, 10)`, "value has 5000 digits"},
		{`int("1" * 5000, base=10)`, "value has 5000 digits"},
		{`int("1" * 5000, 0)`, "value has 5000 digits"},
		{`int("f" * 5000, 16) > 0`, ""},
		{`int("0x" + "f" * 5000, 0) > 0`, ""},
		{`str(` + big + `)`, "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits()"},
		{`repr([` + big + `])`, "Exceeds the limit"},
		{`"%d" % (` + big + `)`, "Exceeds the limit"},
		{`"%s" % (` + big + `)`, "Exceeds the limit"},
		{`"{}".format(` + big + `)`, "Exceeds the limit"},
		{`len("%x" % (` + big + `)) > 0`, ""},
	} {
		_, _, err := Eval(context.Background(), tc.expr, map[string]any{}, Limits{})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.expr, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.expr, err, tc.err)
		}
	}
}
