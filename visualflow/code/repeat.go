package code

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Starlark evaluates a repeat ([0] * n, n * "a", (1,) * n, b"a" * n and
// their *= forms) in one allocation of up to 2^30 items (16 GiB for a
// list), which the watchdog sees only afterwards; where the process cannot
// get the memory the Go runtime aborts it, with every run in the gateway.
// Starlark has no hook for it, so when the execution has a memory limit
// the sandbox rewrites the parsed code: the right operand y of every
// `x * y` and `x *= y` becomes
// repeatGuardName(y), a builtin that wraps a possible repeat operand in a
// repeatOperand. Starlark has no rule for the wrapper, so it asks it
// (starlark.HasBinary); it checks the result's size against the memory
// limit, then does Starlark's own multiplication on the unwrapped
// operands, so results and error messages stay Starlark's. Rewriting the
// operand, not the whole expression, keeps the evaluation order and
// evaluates the target of `a[k()] *= n` once.

// repeatGuardName is the predeclared name the rewritten code calls. It is
// not an identifier, so user code can neither call, shadow nor reassign it.
const repeatGuardName = "<repeat guard>"

// guardRepeats rewrites the multiplications in n (a parsed file or
// expression, before it is resolved) as the comment at the top of this
// file says.
func guardRepeats(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryExpr:
			if n.Op == syntax.STAR {
				n.Y = repeatGuardCall(n.Y)
			}
		case *syntax.AssignStmt:
			if n.Op == syntax.STAR_EQ {
				n.RHS = repeatGuardCall(n.RHS)
			}
		}
		return true // the wrapped operand is walked next: nested repeats
	})
}

// repeatGuardCall returns the syntax of repeatGuardName(y), placed at y.
func repeatGuardCall(y syntax.Expr) syntax.Expr {
	start, end := y.Span()
	return &syntax.CallExpr{
		Fn:     &syntax.Ident{NamePos: start, Name: repeatGuardName},
		Lparen: start,
		Args:   []syntax.Expr{y},
		Rparen: end,
	}
}

// newRepeatGuard returns the builtin repeatGuardName names for th's
// execution, or nil when it has no memory limit (the code is then not
// rewritten: nothing to check). The builtin wraps its argument when it may
// be one side of a repeat: an int count, or a sequence an int on the other
// side repeats.
func newRepeatGuard(th *starlark.Thread) *starlark.Builtin {
	g := threadGuard(th)
	if g == nil || g.maxItems < 0 {
		return nil
	}
	return starlark.NewBuiltin(repeatGuardName, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		v := args[0] // the rewrite always passes exactly one
		switch v.(type) {
		case starlark.Int, starlark.String, starlark.Bytes, *starlark.List, starlark.Tuple:
			return repeatOperand{v: v, th: th, g: g}, nil
		}
		return v, nil
	})
}

// repeatOperand is the right operand of a `*` that may make a repeat. It
// exists only while Starlark's Binary looks for a rule for it: Binary
// returns what its Binary method returns, never the wrapper.
type repeatOperand struct {
	v  starlark.Value
	th *starlark.Thread
	g  *guard
}

var _ starlark.HasBinary = repeatOperand{}

func (r repeatOperand) String() string        { return r.v.String() }
func (r repeatOperand) Type() string          { return r.v.Type() }
func (r repeatOperand) Freeze()               { r.v.Freeze() }
func (r repeatOperand) Truth() starlark.Bool  { return r.v.Truth() }
func (r repeatOperand) Hash() (uint32, error) { return r.v.Hash() }

// Binary refuses a repeat past the memory limit, and otherwise is
// Starlark's x op r.v (x r.v op on the left side, which the rewrite never
// produces).
func (r repeatOperand) Binary(op syntax.Token, x starlark.Value, side starlark.Side) (starlark.Value, error) {
	l, rv := x, r.v
	if side == starlark.Left {
		l, rv = r.v, x
	}
	if op == syntax.STAR {
		if err := r.g.checkRepeat(r.th, l, rv); err != nil {
			return nil, err
		}
	}
	return starlark.Binary(op, l, rv)
}

// checkRepeat refuses x * y when it repeats a sequence into more than the
// memory limit allows (items for a list or tuple, bytes for a string or
// bytes), before anything is allocated.
func (g *guard) checkRepeat(th *starlark.Thread, x, y starlark.Value) error {
	seq, count := x, y
	if _, ok := x.(starlark.Int); ok {
		seq, count = y, x
	}
	n, ok := count.(starlark.Int)
	if !ok || n.Sign() <= 0 {
		return nil // not a repeat, or an empty one
	}
	var length int
	// limit is in units of per bytes.
	what, unit, per, limit := seq.Type(), "byte", int64(1), g.maxBytes
	switch s := seq.(type) {
	case starlark.String:
		length = len(s)
	case starlark.Bytes:
		length, what = len(s), "bytes value"
	case *starlark.List:
		length, unit, per, limit = s.Len(), "item", valueSize, g.maxItems
	case starlark.Tuple:
		length, unit, per, limit = len(s), "item", valueSize, g.maxItems
	default:
		return nil // int * int, or a type error Starlark reports
	}
	if length == 0 {
		return nil
	}
	c, fits := n.Int64()
	if fits && c <= limit/int64(length) {
		return g.checkRepeatText(th, seq, c)
	}
	if length != 1 {
		unit += "s"
	}
	size := "" // the result's size, when it can be written
	if fits && c <= math.MaxInt64/int64(length)/per {
		size = ", " + sizeText(c*int64(length)*per) + ","
	}
	return g.refuseReason(th, fmt.Sprintf("repeat of a %s (%d %s) %s times%s would exceed the memory limit of %s",
		what, length, unit, n, size, sizeText(g.maxBytes)))
}

// checkRepeatText refuses a list or tuple repeat whose text (each item
// written c times) would be past the memory limit, though its items are
// not: ("a" * (1 << 20),) * (1 << 20) is 16 MiB of references to one
// string, but a result that can never be converted to JSON within the
// limit, and hashing or comparing it is 1 TiB of work in one Go loop,
// which the watchdog cannot interrupt. The text counted is a lower bound
// of Python's repr, walked no further than the bound.
func (g *guard) checkRepeatText(th *starlark.Thread, seq starlark.Value, c int64) error {
	switch seq.(type) {
	case *starlark.List, starlark.Tuple:
	default:
		return nil // a string's or bytes' size is its text's
	}
	z := newTextSize(th, &guard{maxBytes: g.maxBytes / c})
	z.python, z.lower, z.measureOnly = true, true, true
	z.value(seq)
	if z.err != nil {
		return z.err
	}
	if z.overAt < 0 {
		return nil
	}
	size := "more than " + sizeText(g.maxBytes)
	if z.n <= math.MaxInt64/c {
		size = "at least " + sizeText(z.n*c)
	}
	return g.refuseReason(th, fmt.Sprintf("repeat of a %s %d times would make a value whose text (%s) would exceed the memory limit of %s",
		seq.Type(), c, size, sizeText(g.maxBytes)))
}

// sizeText writes a memory size in MiB (the unit of the limit errors), or
// in bytes when under one MiB.
func sizeText(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%d bytes", b)
	}
	return fmt.Sprintf("%d MiB", b>>20)
}
