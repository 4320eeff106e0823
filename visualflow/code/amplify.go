package code

import (
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Some operations build a result far larger than their operands, each
// operand being under the memory limit: "".join([s] * n), s.replace("",
// t), ("{0}" * n).format(s), ("%s" * n) % ((s,) * n), a list extended by
// range(1 << 40). go.starlark.net builds each in one Go loop or
// allocation, which the watchdog sees only afterwards; where the process
// cannot get the memory the Go runtime aborts it, with every run in the
// gateway. So, as for the repeats (repeat.go), when the execution has a
// memory limit the parsed code is rewritten before it is resolved:
//
//   - x.name, for the methods that can outgrow their operands (str.join,
//     replace and format; list.extend; set.update, union and
//     symmetric_difference), becomes methodGuardName(x, "name").name: the
//     guard wraps a receiver of those types so that the attribute is the
//     method behind a check of what the call would build (a
//     methodReceiver), and returns any other value as it is, for
//     Starlark's own attribute lookup and errors. getattr is wrapped the
//     same way (builtinGetattr), so an alias (f = s.join) is checked too.
//   - x % y becomes percentGuardName(x) % y: a string x is wrapped in a
//     formatOperand, whose Binary checks what the formatting would build
//     (and a number x in an intModOperand or floatModOperand, for
//     Python's float remainder: this one with or without a memory limit).
//     (The right operand cannot be wrapped, as for *: Starlark formats
//     with any right operand without asking it.) x %= y is rewritten as
//     x = x % y, with the target's operands held in hidden locals, so
//     that they are evaluated once and in the same order.
//
// The checks bound the size from the operands cheaply (a count, a sum of
// lengths, a walk of the values to format that stops past the limit) and
// fail with the sandbox's limit error before Starlark allocates;
// otherwise Starlark's own operation runs, so results and error messages
// stay Starlark's. zip, reversed, bytes, fail and str/repr, which have
// the same flaw as builtins, are wrapped in predeclared(). The other Go
// loops that can outgrow their input take it from a range, whose length
// costs nothing (x += range(1 << 40) extends a list in one loop): the
// sandbox's ranges (sandboxRange) stop iterating when the watchdog stops
// the code.

// The names the rewritten code calls. They are not identifiers, so user
// code can neither call, shadow nor reassign them.
const (
	methodGuardName  = "<method guard>"
	percentGuardName = "<format guard>"
	// targetTempName and keyTempName hold the operands of the target of a
	// rewritten x[k] %= y or x.f %= y.
	targetTempName = "<format target>"
	keyTempName    = "<format key>"
)

// guardedMethodNames are the attribute names guardAmplifiers rewrites:
// the methods of some type whose result can outgrow their operands.
var guardedMethodNames = map[string]bool{
	"join": true, "replace": true, "format": true, "extend": true,
	"update": true, "union": true, "symmetric_difference": true,
	"split": true, "rsplit": true, "splitlines": true,
	"codepoints": true, "codepoint_ords": true,
	// Python's semantics (pyops.go): comparing as Python, a bool found
	// under the int it equals.
	"index": true, "remove": true, "get": true,
	// Their key is walked first with the watchdog (pyops.go hashWalk).
	"add": true, "discard": true, "pop": true, "setdefault": true,
	// Python's semantics (pycase.go): full case mapping, LIFO popitem.
	"upper": true, "lower": true, "popitem": true,
}

// guardAmplifiers rewrites the method accesses, % and %= in n (a parsed
// file or expression, before it is resolved) as the comment at the top of
// this file says.
func guardAmplifiers(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		// Statement lists first: a rewritten x %= y is walked next, as
		// the statements it becomes.
		switch n := n.(type) {
		case *syntax.File:
			n.Stmts = expandFormatAssigns(n.Stmts)
		case *syntax.DefStmt:
			n.Body = expandFormatAssigns(n.Body)
		case *syntax.IfStmt:
			n.True, n.False = expandFormatAssigns(n.True), expandFormatAssigns(n.False)
		case *syntax.ForStmt:
			n.Body = expandFormatAssigns(n.Body)
		case *syntax.WhileStmt:
			n.Body = expandFormatAssigns(n.Body)
		case *syntax.DotExpr:
			if guardedMethodNames[n.Name.Name] {
				n.X = guardCall(methodGuardName, n.X, &syntax.Literal{
					Token: syntax.STRING, TokenPos: n.NamePos, Raw: `"` + n.Name.Name + `"`, Value: n.Name.Name,
				})
			}
		case *syntax.BinaryExpr:
			if n.Op == syntax.PERCENT && mayFormat(n) {
				n.X = guardCall(percentGuardName, n.X)
			}
		}
		return true
	})
}

// guardCall returns the syntax of name(args...), placed at args[0].
func guardCall(name string, args ...syntax.Expr) syntax.Expr {
	start, end := args[0].Span()
	return &syntax.CallExpr{
		Fn:     &syntax.Ident{NamePos: start, Name: name},
		Lparen: start,
		Args:   args,
		Rparen: end,
	}
}

// mayFormat reports whether x % y may be a formatting far larger than
// its operands, or a float remainder (whose zero takes the divisor's
// sign, floatModOperand). Not when x is a string literal and y a literal:
// a single argument that is not a tuple or a dict fills one directive
// (Starlark fails at the second), so the result is about as long as x;
// nor when both are int literals.
func mayFormat(b *syntax.BinaryExpr) bool {
	x, xLiteral := unparen(b.X).(*syntax.Literal)
	y, yLiteral := unparen(b.Y).(*syntax.Literal)
	if !xLiteral || !yLiteral {
		return true
	}
	return x.Token != syntax.STRING && (x.Token != syntax.INT || y.Token != syntax.INT)
}

func unparen(x syntax.Expr) syntax.Expr {
	for {
		p, ok := x.(*syntax.ParenExpr)
		if !ok {
			return x
		}
		x = p.X
	}
}

// expandFormatAssigns returns stmts with each x %= y rewritten as
// statements using % (formatAssign); stmts itself when there is none.
func expandFormatAssigns(stmts []syntax.Stmt) []syntax.Stmt {
	var out []syntax.Stmt
	for i, s := range stmts {
		a, ok := s.(*syntax.AssignStmt)
		if !ok || a.Op != syntax.PERCENT_EQ {
			if out != nil {
				out = append(out, s)
			}
			continue
		}
		if out == nil {
			out = append(make([]syntax.Stmt, 0, len(stmts)+2), stmts[:i]...)
		}
		out = append(out, formatAssign(a)...)
	}
	if out == nil {
		return stmts
	}
	return out
}

// formatAssign rewrites x %= y, which Starlark evaluates as x % y without
// asking either operand, into an assignment of x % y, which the guard can
// see. Starlark evaluates the target's operands once, then reads the
// target, then y; so does the rewrite: x[k] %= y becomes
//
//	<format target> = x
//	<format key> = k
//	<format target>[<format key>] = <format target>[<format key>] % y
//
// (the right side of an assignment is evaluated before its target's
// operands, which here are plain locals), and x.f %= y likewise.
func formatAssign(a *syntax.AssignStmt) []syntax.Stmt {
	pos := a.OpPos
	ident := func(name string) *syntax.Ident { return &syntax.Ident{NamePos: pos, Name: name} }
	assign := func(lhs, rhs syntax.Expr) syntax.Stmt {
		return &syntax.AssignStmt{OpPos: pos, Op: syntax.EQ, LHS: lhs, RHS: rhs}
	}
	format := func(x syntax.Expr) syntax.Expr {
		return &syntax.BinaryExpr{X: x, OpPos: pos, Op: syntax.PERCENT, Y: a.RHS}
	}
	switch lhs := unparen(a.LHS).(type) {
	case *syntax.Ident:
		return []syntax.Stmt{assign(lhs, format(ident(lhs.Name)))}
	case *syntax.IndexExpr:
		index := func() syntax.Expr {
			return &syntax.IndexExpr{X: ident(targetTempName), Lbrack: lhs.Lbrack, Y: ident(keyTempName), Rbrack: lhs.Rbrack}
		}
		return []syntax.Stmt{
			assign(ident(targetTempName), lhs.X),
			assign(ident(keyTempName), lhs.Y),
			assign(index(), format(index())),
		}
	case *syntax.DotExpr:
		field := func() syntax.Expr {
			return &syntax.DotExpr{X: ident(targetTempName), Dot: lhs.Dot, NamePos: lhs.NamePos,
				Name: &syntax.Ident{NamePos: lhs.NamePos, Name: lhs.Name.Name}}
		}
		return []syntax.Stmt{
			assign(ident(targetTempName), lhs.X),
			assign(field(), format(field())),
		}
	}
	return []syntax.Stmt{a} // not a valid target: the resolver says so
}

// newAmplifyGuards returns the builtins the code guardAmplifiers rewrote
// calls, for th's execution under g.
func newAmplifyGuards(th *starlark.Thread, g *guard) starlark.StringDict {
	return starlark.StringDict{
		methodGuardName: starlark.NewBuiltin(methodGuardName, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			x, name := args[0], string(args[1].(starlark.String)) // as the rewrite passes them
			if m := guardedMethod(x, name); m != nil {
				return methodReceiver{v: x, name: name, m: m}, nil
			}
			return x, nil
		}),
		percentGuardName: starlark.NewBuiltin(percentGuardName, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			switch x := args[0].(type) {
			case starlark.String:
				// Also without a memory limit: the count refuses a value
				// nested too deep to write (errTooDeep), which Starlark's
				// formatting would recurse into without bound, deaf to
				// the timeout.
				if g != nil {
					return formatOperand{s: x, th: th, g: g}, nil
				}
			case starlark.Int:
				return intModOperand{x}, nil
			case starlark.Float:
				return floatModOperand{x}, nil
			}
			return args[0], nil
		}),
	}
}

// threadGuard returns th's guard, with or without a memory limit (nil
// outside the sandbox).
func threadGuard(th *starlark.Thread) *guard {
	g, _ := th.Local(guardKey).(*guard)
	return g
}

// limitGuard returns th's guard when the execution has a memory limit.
func limitGuard(th *starlark.Thread) *guard {
	if g := threadGuard(th); g != nil && g.maxItems >= 0 {
		return g
	}
	return nil
}

// methodCheck checks a call of a guarded method on recv before Starlark
// runs it: an error refuses the call.
type methodCheck func(th *starlark.Thread, g *guard, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error

// Guarded methods, unbound, by receiver type: each checks its call, then
// calls the receiver's own method. Names as Starlark's, so that a bound
// one writes as "<built-in method join of string value>".
var (
	guardedStringMethods = map[string]*starlark.Builtin{
		"join":    guardedBuiltin("join", checkJoin),
		"replace": guardedBuiltin("replace", checkReplace),
		"format":  textBuiltin("format", checkFormat),
		// A piece is a string in a []string, then a boxed Value in a list.
		"split":      guardedBuiltin("split", checkSplit("str.split")),
		"rsplit":     guardedBuiltin("rsplit", checkSplit("str.rsplit")),
		"splitlines": pythonBuiltin("splitlines", checkSplitlines, stringSplitlines),
		// Iterables of no length: len(s) items, watched (watched.go).
		"codepoints":     codepointsBuiltin("codepoints"),
		"codepoint_ords": codepointsBuiltin("codepoint_ords"),
		"upper":          pythonBuiltin("upper", checkCase("upper", pyval.Upper), stringCase(pyval.Upper)),
		"lower":          pythonBuiltin("lower", checkCase("lower", pyval.Lower), stringCase(pyval.Lower)),
	}
	guardedListMethods = map[string]*starlark.Builtin{
		"extend": guardedBuiltin("extend", checkItems("list.extend()")),
		"index":  pythonBuiltin("index", nil, listIndex),
		"remove": pythonBuiltin("remove", nil, listRemove),
	}
	// Their iterable arguments are watched (watched.go): colliding hashes
	// make inserting them quadratic.
	guardedSetMethods = map[string]*starlark.Builtin{
		"update":               watchingArgs(guardedBuiltin("update", checkItems("set.update()"))),
		"union":                watchingArgs(guardedBuiltin("union", checkItems("set.union()"))),
		"symmetric_difference": watchingArgs(guardedBuiltin("symmetric_difference", checkItems("set.symmetric_difference()"))),
		"add":                  hashWalking("add"),
		"discard":              hashWalking("discard"),
		"remove":               hashWalking("remove"),
	}
	guardedDictMethods = map[string]*starlark.Builtin{
		"update":     watchingArgs(guardedBuiltin("update", checkItems("dict.update()"))),
		"get":        pythonBuiltin("get", nil, dictGet),
		"pop":        hashWalking("pop"),
		"setdefault": hashWalking("setdefault"),
		"popitem":    pythonBuiltin("popitem", nil, dictPopitem),
	}
)

// pieceCost is the memory one piece of a split costs, in bytes: its
// string header in Starlark's []string, its slot in the list, and the
// boxed String.
const pieceCost = 3 * valueSize

// checkSplit returns the check of s.split or s.rsplit: the pieces may
// not cost more than the memory limit.
func checkSplit(what string) methodCheck {
	return func(th *starlark.Thread, g *guard, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
		var sep starlark.Value = starlark.None
		maxsplit := -1
		if err := starlark.UnpackPositionalArgs(what, args, kwargs, 0, &sep, &maxsplit); err != nil {
			return nil // Starlark's own error
		}
		return g.checkPieces(th, what, splitPieces(string(recv.(starlark.String)), sep, maxsplit))
	}
}

// checkSplitlines is checkSplit for s.splitlines.
func checkSplitlines(th *starlark.Thread, g *guard, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) error {
	return g.checkPieces(th, "str.splitlines", lineCount(string(recv.(starlark.String))))
}

// checkPieces refuses a split into n pieces past the memory limit.
func (g *guard) checkPieces(th *starlark.Thread, what string, n int64) error {
	if n <= g.maxBytes/pieceCost {
		return nil
	}
	return g.refuseReason(th, fmt.Sprintf("%s into %d pieces would exceed the memory limit of %s", what, n, sizeText(g.maxBytes)))
}

// codepointsBuiltin is the string method name (codepoints or
// codepoint_ords), whose result is watched and has len(s) items for the
// size checks (watched.go).
func codepointsBuiltin(name string) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		recv := b.Receiver()
		m, err := recv.(starlark.HasAttrs).Attr(name)
		if err != nil {
			return nil, err
		}
		v, err := m.(*starlark.Builtin).CallInternal(th, args, kwargs)
		if g := limitGuard(th); err == nil && g != nil {
			if it, ok := v.(starlark.Iterable); ok {
				return watchedIterable{v: it, items: len(recv.(starlark.String)), th: th, g: g}, nil
			}
		}
		return v, err
	})
}

// watchingArgs is the guarded method m with its iterable arguments
// watched (watchIterable).
func watchingArgs(m *starlark.Builtin) *starlark.Builtin {
	return starlark.NewBuiltin(m.Name(), func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if g := limitGuard(th); g != nil {
			watched := make(starlark.Tuple, len(args))
			for i, a := range args {
				watched[i] = watchIterable(th, g, a)
			}
			args = watched
		}
		return m.BindReceiver(b.Receiver()).CallInternal(th, args, kwargs)
	})
}

// guardedMethod returns x's method name behind its check, bound to x,
// when it is one that can outgrow its operands; nil otherwise.
func guardedMethod(x starlark.Value, name string) *starlark.Builtin {
	var m *starlark.Builtin
	switch x.(type) {
	case starlark.String:
		m = guardedStringMethods[name]
	case *starlark.List:
		m = guardedListMethods[name]
	case *starlark.Set:
		m = guardedSetMethods[name]
	case *starlark.Dict:
		m = guardedDictMethods[name]
	}
	if m == nil {
		return nil
	}
	return m.BindReceiver(x)
}

func guardedBuiltin(name string, check methodCheck) *starlark.Builtin {
	return checkedBuiltin(limitGuard, name, check, receiverMethod(name))
}

// textBuiltin is guardedBuiltin for a method that writes values as text
// (str.format): its check runs also without a memory limit, where the
// count (textsize.go) has no byte bound but still refuses a value nested
// past maxReprDepth, which Starlark's writer would recurse into without
// bound and without looking at the timeout.
func textBuiltin(name string, check methodCheck) *starlark.Builtin {
	return checkedBuiltin(threadGuard, name, check, receiverMethod(name))
}

// receiverMethod calls the receiver's own method name (Starlark's).
func receiverMethod(name string) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		m, err := b.Receiver().(starlark.HasAttrs).Attr(name)
		if err != nil {
			return nil, err
		}
		return m.(*starlark.Builtin).CallInternal(th, args, kwargs)
	}
}

// hashWalking is the method name of a dict or set (Starlark's), whose
// first argument, a key it hashes, is walked first with the watchdog
// (pyops.go hashWalk).
func hashWalking(name string) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			if err := hashWalkKey(th, args[0]); err != nil {
				return nil, err
			}
		}
		m, err := b.Receiver().(starlark.HasAttrs).Attr(name)
		if err != nil {
			return nil, err
		}
		return m.(*starlark.Builtin).CallInternal(th, args, kwargs)
	})
}

// pythonBuiltin is the method name done by impl (Python's semantics where
// Starlark's differ), after check (when not nil, and the execution has a
// memory limit).
func pythonBuiltin(name string, check methodCheck, impl func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return checkedBuiltin(limitGuard, name, check, impl)
}

// checkedBuiltin is the method name done by impl, after check (when not
// nil) with the guard guardOf gives (none: no check).
func checkedBuiltin(guardOf func(*starlark.Thread) *guard, name string, check methodCheck, impl func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if g := guardOf(th); g != nil && check != nil {
			if err := check(th, g, b.Receiver(), args, kwargs); err != nil {
				return nil, err
			}
		}
		return impl(th, b, args, kwargs)
	})
}

// methodReceiver is x in methodGuardName(x, "name").name: it exists only
// until Starlark reads the attribute, which is the guarded method.
type methodReceiver struct {
	v    starlark.Value
	name string
	m    *starlark.Builtin
}

var _ starlark.HasAttrs = methodReceiver{}

func (r methodReceiver) String() string        { return r.v.String() }
func (r methodReceiver) Type() string          { return r.v.Type() }
func (r methodReceiver) Freeze()               { r.v.Freeze() }
func (r methodReceiver) Truth() starlark.Bool  { return r.v.Truth() }
func (r methodReceiver) Hash() (uint32, error) { return r.v.Hash() }
func (r methodReceiver) AttrNames() []string   { return r.v.(starlark.HasAttrs).AttrNames() }

// Attr is the guarded method for the rewritten name (the only one the
// rewrite reads), else the value's own attribute.
func (r methodReceiver) Attr(name string) (starlark.Value, error) {
	if name == r.name {
		return r.m, nil
	}
	return r.v.(starlark.HasAttrs).Attr(name)
}

// formatOperand is the string x in percentGuardName(x) % y. It exists
// only while Starlark's Binary looks for a rule for it: Binary returns
// what its Binary method returns, never the wrapper.
type formatOperand struct {
	s  starlark.String
	th *starlark.Thread
	g  *guard
}

var _ starlark.HasBinary = formatOperand{}

func (f formatOperand) String() string        { return f.s.String() }
func (f formatOperand) Type() string          { return f.s.Type() }
func (f formatOperand) Freeze()               {}
func (f formatOperand) Truth() starlark.Bool  { return f.s.Truth() }
func (f formatOperand) Hash() (uint32, error) { return f.s.Hash() }

// Binary refuses a formatting past the memory limit or of a value nested
// too deep to write, and otherwise is Starlark's f.s op y (y op f.s on the
// right side, which the rewrite never produces).
func (f formatOperand) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if side == starlark.Right {
		return starlark.Binary(op, y, f.s)
	}
	if op == syntax.PERCENT {
		z := newTextSize(f.th, f.g)
		z.percent(string(f.s), y)
		if err := z.refusal("string %"); err != nil {
			return nil, err
		}
	}
	return starlark.Binary(op, f.s, y)
}

// intModOperand and floatModOperand are the number x in
// percentGuardName(x) % y, for Python's float remainder (percent). They
// exist only while Starlark's Binary looks for a rule for them.
type (
	intModOperand   struct{ x starlark.Int }
	floatModOperand struct{ x starlark.Float }
)

var (
	_ starlark.HasBinary = intModOperand{}
	_ starlark.HasBinary = floatModOperand{}
)

func (o intModOperand) String() string        { return o.x.String() }
func (o intModOperand) Type() string          { return o.x.Type() }
func (o intModOperand) Freeze()               {}
func (o intModOperand) Truth() starlark.Bool  { return o.x.Truth() }
func (o intModOperand) Hash() (uint32, error) { return o.x.Hash() }
func (o intModOperand) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	return modBinary(o.x, op, y, side)
}

func (o floatModOperand) String() string        { return o.x.String() }
func (o floatModOperand) Type() string          { return o.x.Type() }
func (o floatModOperand) Freeze()               {}
func (o floatModOperand) Truth() starlark.Bool  { return o.x.Truth() }
func (o floatModOperand) Hash() (uint32, error) { return o.x.Hash() }
func (o floatModOperand) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	return modBinary(o.x, op, y, side)
}

// modBinary is x % y as Python (percent) for the rewritten x % y, else
// Starlark's x op y (y op x on the right side, which the rewrite never
// produces).
func modBinary(x starlark.Value, op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if side == starlark.Right {
		return starlark.Binary(op, y, x)
	}
	if op == syntax.PERCENT {
		return percent(x, y)
	}
	return starlark.Binary(op, x, y)
}

// checkJoin refuses sep.join(iterable) when the string would be past the
// memory limit: the sum of the strings' lengths and the separators
// between them. (At the first item that is not a string Starlark fails,
// having built what was counted.)
func checkJoin(th *starlark.Thread, g *guard, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	if len(args) != 1 || len(kwargs) != 0 {
		return nil // Starlark's own error
	}
	it, ok := args[0].(starlark.Iterable)
	if !ok {
		return nil
	}
	sep := int64(len(recv.(starlark.String)))
	z := newTextSize(th, g)
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; z.tick() && iter.Next(&x); i++ {
		s, ok := x.(starlark.String)
		if !ok {
			break
		}
		if i > 0 {
			z.add(sep)
		}
		z.add(int64(len(s)))
	}
	return z.refusal("str.join")
}

// checkReplace refuses s.replace(old, new[, count]) when the string
// would be past the memory limit: len(s) plus, for each replacement
// (strings.Count of old, at most count), the growth len(new) - len(old).
func checkReplace(th *starlark.Thread, g *guard, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	var old, new string
	count := -1
	if err := starlark.UnpackPositionalArgs("replace", args, kwargs, 2, &old, &new, &count); err != nil {
		return nil // Starlark's own error
	}
	s := string(recv.(starlark.String))
	grow := int64(len(new)) - int64(len(old))
	if grow <= 0 || count == 0 {
		return nil // no longer than s
	}
	n := int64(strings.Count(s, old))
	if count > 0 && int64(count) < n {
		n = int64(count)
	}
	if n == 0 || n <= (g.maxBytes-int64(len(s)))/grow {
		return nil
	}
	size := "more than " + sizeText(math.MaxInt64)
	if n <= (math.MaxInt64-int64(len(s)))/grow {
		size = sizeText(int64(len(s)) + n*grow)
	}
	return g.refuseReason(th, fmt.Sprintf("str.replace would build a string of %s (%d replacements), which would exceed the memory limit of %s",
		size, n, sizeText(g.maxBytes)))
}

// checkFormat refuses fmt.format(...) when the string would be past the
// memory limit, or would write a value nested too deep (errTooDeep).
func checkFormat(th *starlark.Thread, g *guard, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	z := newTextSize(th, g)
	z.format(string(recv.(starlark.String)), args, kwargs)
	return z.refusal("str.format")
}

// checkItems returns the check of a method adding its iterable arguments'
// items to a list or set (list.extend, set.update, ...): their lengths,
// which a range has for free, may not pass the memory limit.
func checkItems(what string) methodCheck {
	return func(th *starlark.Thread, g *guard, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) error {
		var n int64
		for _, a := range args {
			// A codepoints iterable's items are new values (itemCost).
			if l := int64(itemBound(a)) * itemCost(a); l > 0 {
				if l > g.maxItems-n {
					return g.refuseReason(th, fmt.Sprintf("%s of more than %d items would exceed the memory limit", what, g.maxItems/itemCost(a)))
				}
				n += l
			}
		}
		return nil
	}
}

// builtinGetattr is Starlark's getattr, except that a method guarded on
// its receiver's type (guardedMethod) is returned behind its check: an
// alias of s.join is checked as s.join is.
func builtinGetattr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) == 0 && (len(args) == 2 || len(args) == 3) {
		if name, ok := args[1].(starlark.String); ok {
			if m := guardedMethod(args[0], string(name)); m != nil {
				return m, nil
			}
		}
	}
	return universeBuiltin("getattr").CallInternal(th, args, kwargs)
}

// builtinPrint is Starlark's print in the sandbox, where the text goes
// nowhere (the thread's Print discards it): it checks the arguments as
// Starlark does and builds nothing. (Starlark's builds the whole text
// first, which for a list sharing one long string is far larger than the
// list.)
func builtinPrint(_ *starlark.Thread, _ *starlark.Builtin, _ starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sep := " "
	if err := starlark.UnpackArgs("print", nil, kwargs, "sep?", &sep); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

// builtinFail is Starlark's fail, refusing a message past the memory
// limit or holding a value nested too deep to write (its text is built as
// print's).
func builtinFail(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sep := " "
	if g := threadGuard(th); g != nil && starlark.UnpackArgs("fail", nil, kwargs, "sep?", &sep) == nil {
		z := newTextSize(th, g)
		z.add(int64(len("fail: ")))
		for i, v := range args {
			if i > 0 {
				z.add(int64(len(sep)))
			}
			z.str(v)
		}
		if err := z.refusal("fail"); err != nil {
			return nil, err
		}
	}
	return universeBuiltin("fail").CallInternal(th, args, kwargs)
}

// builtinZip is Starlark's zip, refusing a result past the memory limit:
// its rows are as many as the shortest argument's items (a range's length
// costs nothing), each a tuple of one item per argument. When an
// argument's length is unknown Starlark appends rows until one argument
// ends; this does the same, counting them.
func builtinZip(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	g := limitGuard(th)
	if g == nil || len(kwargs) > 0 || len(args) == 0 {
		return universeBuiltin("zip").CallInternal(th, args, kwargs)
	}
	rows, cols := 0, int64(len(args))
	for i, a := range args {
		if _, ok := a.(starlark.Iterable); !ok {
			return universeBuiltin("zip").CallInternal(th, args, kwargs) // its error
		}
		if n := starlark.Len(a); i == 0 || n < rows {
			rows = n
		}
	}
	if rows >= 0 {
		if int64(rows) > g.maxItems/(cols+1) {
			return nil, g.refuseReason(th, fmt.Sprintf("zip() of %d rows of %d items would exceed the memory limit", rows, cols))
		}
		return universeBuiltin("zip").CallInternal(th, args, kwargs)
	}
	iters := make([]starlark.Iterator, len(args))
	for i, a := range args {
		iters[i] = a.(starlark.Iterable).Iterate()
		defer iters[i].Done()
	}
	var result []starlark.Value
	for {
		if err := pulse(th, len(result)); err != nil {
			return nil, err
		}
		tuple := make(starlark.Tuple, len(iters))
		for i, iter := range iters {
			if !iter.Next(&tuple[i]) {
				return starlark.NewList(result), nil
			}
		}
		if int64(len(result)+1) > g.maxItems/(cols+1) {
			return nil, g.refuseReason(th, fmt.Sprintf("zip() of more than %d rows of %d items would exceed the memory limit", len(result), cols))
		}
		result = append(result, tuple)
	}
}

// builtinBytes is Starlark's bytes, refusing an iterable longer than the
// memory limit allows (Starlark reserves a byte per item first: bytes(
// range(1 << 40)) would reserve 1 TiB).
func builtinBytes(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if g := limitGuard(th); g != nil && len(args) == 1 && len(kwargs) == 0 {
		switch args[0].(type) {
		case starlark.String, starlark.Bytes:
		default:
			if n := starlark.Len(args[0]); int64(n) > g.maxBytes {
				return nil, g.refuse(th, "bytes()", n)
			}
		}
	}
	return universeBuiltin("bytes").CallInternal(th, args, kwargs)
}

// universeBuiltin is Starlark's builtin name.
func universeBuiltin(name string) *starlark.Builtin {
	return starlark.Universe[name].(*starlark.Builtin)
}

// builtinRange is Starlark's range, as a sandboxRange.
func builtinRange(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r, err := universeBuiltin("range").CallInternal(th, args, kwargs)
	if g := threadGuard(th); err == nil && g != nil {
		return sandboxRange{r: r, th: th, g: g}, nil
	}
	return r, err
}

// sandboxRange is a Starlark range (r, of Starlark's unexported type)
// whose iterator stops when the watchdog stops the code, or the heap grew
// past the memory limit. A range's length costs nothing, and Starlark
// iterates one to its end in Go loops the watchdog cannot interrupt: x +=
// range(1 << 40) grows a list until the process runs out of memory,
// all(range(1, 1 << 62)) ignores the timeout. Stopped early, such a loop
// returns, and Starlark's next step reports the stop. Every range of the
// sandbox is one (range builds them, slicing keeps them), so ranges
// compare with ranges as in Starlark.
type sandboxRange struct {
	r  starlark.Value
	th *starlark.Thread
	g  *guard
}

var (
	_ starlark.Indexable  = sandboxRange{}
	_ starlark.Sequence   = sandboxRange{}
	_ starlark.Comparable = sandboxRange{}
	_ starlark.Sliceable  = sandboxRange{}
	_ starlark.Container  = sandboxRange{}
)

func (x sandboxRange) String() string             { return x.r.String() }
func (x sandboxRange) Type() string               { return x.r.Type() }
func (x sandboxRange) Freeze()                    {}
func (x sandboxRange) Truth() starlark.Bool       { return x.r.Truth() }
func (x sandboxRange) Hash() (uint32, error)      { return x.r.Hash() }
func (x sandboxRange) Len() int                   { return x.r.(starlark.Sequence).Len() }
func (x sandboxRange) Index(i int) starlark.Value { return x.r.(starlark.Indexable).Index(i) }
func (x sandboxRange) Has(y starlark.Value) (bool, error) {
	return x.r.(starlark.Container).Has(y)
}

func (x sandboxRange) Slice(start, end, step int) starlark.Value {
	return sandboxRange{r: x.r.(starlark.Sliceable).Slice(start, end, step), th: x.th, g: x.g}
}

func (x sandboxRange) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return x.r.(starlark.Comparable).CompareSameType(op, y.(sandboxRange).r, depth)
}

func (x sandboxRange) Iterate() starlark.Iterator {
	return &rangeIterator{it: x.r.(starlark.Iterable).Iterate(), th: x.th, g: x.g}
}

// rangeIterator ends when the watchdog stopped the code, or the heap
// grew past the memory limit (checked every 1,024 items: a Go loop
// appending them would pass the limit long before the watchdog's next
// tick).
type rangeIterator struct {
	it starlark.Iterator
	th *starlark.Thread
	g  *guard
	i  int
}

func (it *rangeIterator) Next(p *starlark.Value) bool {
	// The stop is one atomic load, checked at every item: a single item
	// can be slow (a dict insert among colliding hashes scans them all).
	// The heap check costs more, so it runs every 1,024 items.
	if it.i++; it.g.stop.Load() != nil || (it.i&1023 == 0 && it.g.checkHeap(it.th)) {
		return false
	}
	if !it.it.Next(p) {
		return false
	}
	// A watched iterable's items are hashed (set(l), dict.update(l)): a
	// tuple is walked first with the watchdog (pyops.go hashWalk).
	if _, ok := (*p).(starlark.Tuple); ok {
		return (&comparer{g: it.g}).hashWalk(*p) == nil
	}
	return true
}

func (it *rangeIterator) Done() { it.it.Done() }
