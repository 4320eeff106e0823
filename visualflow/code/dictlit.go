package code

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// A dict literal whose key is met twice fails in go.starlark.net's
// interpreter with "duplicate key: %v", the whole key written into the
// error, as getIndex writes a missing key (index.go): a tuple sharing one
// long string many times is small in memory but its text is not, built
// in one Go call the watchdog cannot stop. So, when the execution has a
// memory limit, a dict literal whose keys are not all literals (the text
// of a literal is in the code already) is built by the sandbox:
//
//	{"a": 1, k: v, "b": w}
//
// is rewritten as
//
//	<dict entry>(<dict entry>({"a": 1}, k, v), "b", w)
//
// Each call adds one entry to the dict the previous one returned, so the
// operands are evaluated and inserted in Starlark's order, an error
// coming where Starlark's would. On a key already present, the error is
// Starlark's text unless the key's text is longer than maxKeyText: then
// it quotes the key's beginning and says how long it is. The key is
// walked with the watchdog before it is hashed (pyops.go hashWalk), so a
// single computed key is rewritten too.

// dictEntryGuardName is the predeclared name the rewritten code calls. It
// is not an identifier, so user code can neither call, shadow nor
// reassign it.
const dictEntryGuardName = "<dict entry>"

// guardDictLiterals rewrites the dict literals in n (a parsed file or
// expression, before it is resolved) as the comment at the top of this
// file says, and returns n, or what replaces it when n is such a literal.
func guardDictLiterals(n syntax.Node) syntax.Node {
	return replaceExprs(n, func(x syntax.Expr) syntax.Expr {
		if d, ok := x.(*syntax.DictExpr); ok {
			return dictLiteralCalls(d)
		}
		return x
	})
}

// replaceExprs replaces each expression x in n (n included) by
// replace(x), which returns x itself to keep it, and returns n or its
// replacement. A replacement is walked in turn: its operands are
// replaced too.
func replaceExprs(n syntax.Node, replace func(syntax.Expr) syntax.Expr) syntax.Node {
	sub := func(x *syntax.Expr) { *x = replace(*x) }
	subs := func(l []syntax.Expr) {
		for i := range l {
			sub(&l[i])
		}
	}
	if x, ok := n.(syntax.Expr); ok {
		n = replace(x)
	}
	// The literals are replaced in their parents: each node that holds
	// expressions has its own below.
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.AssignStmt:
			sub(&n.RHS)
		case *syntax.ExprStmt:
			sub(&n.X)
		case *syntax.IfStmt:
			sub(&n.Cond)
		case *syntax.WhileStmt:
			sub(&n.Cond)
		case *syntax.ForStmt:
			sub(&n.X)
		case *syntax.ReturnStmt:
			if n.Result != nil {
				sub(&n.Result)
			}
		case *syntax.ParenExpr:
			sub(&n.X)
		case *syntax.CallExpr:
			sub(&n.Fn)
			subs(n.Args)
		case *syntax.DotExpr:
			sub(&n.X)
		case *syntax.Comprehension:
			sub(&n.Body)
		case *syntax.ForClause:
			sub(&n.X)
		case *syntax.IfClause:
			sub(&n.Cond)
		case *syntax.DictEntry:
			sub(&n.Key)
			sub(&n.Value)
		case *syntax.LambdaExpr:
			sub(&n.Body)
		case *syntax.ListExpr:
			subs(n.List)
		case *syntax.TupleExpr:
			subs(n.List)
		case *syntax.CondExpr:
			sub(&n.Cond)
			sub(&n.True)
			sub(&n.False)
		case *syntax.UnaryExpr:
			if n.X != nil {
				sub(&n.X)
			}
		case *syntax.BinaryExpr: // also a parameter's default, a keyword argument
			sub(&n.X)
			sub(&n.Y)
		case *syntax.SliceExpr:
			for _, x := range []*syntax.Expr{&n.X, &n.Lo, &n.Hi, &n.Step} {
				if *x != nil {
					sub(x)
				}
			}
		case *syntax.IndexExpr:
			sub(&n.X)
			sub(&n.Y)
		}
		return true
	})
	return n
}

// dictLiteralCalls returns the syntax building d: d itself when its keys
// are all literals (no long text can repeat, no hash is costly), else
// the calls of dictEntryGuardName adding the entries from the first
// key that is not a literal to a literal of those before it.
func dictLiteralCalls(d *syntax.DictExpr) syntax.Expr {
	first := -1
	for i, e := range d.List {
		if _, ok := e.(*syntax.DictEntry).Key.(*syntax.Literal); !ok {
			first = i
			break
		}
	}
	if first < 0 {
		return d
	}
	var x syntax.Expr = &syntax.DictExpr{Lbrace: d.Lbrace, List: d.List[:first:first], Rbrace: d.Lbrace}
	for _, e := range d.List[first:] {
		e := e.(*syntax.DictEntry)
		x = guardCall(dictEntryGuardName, x, e.Key, e.Value)
		x.(*syntax.CallExpr).Lparen = e.Colon // errors at the entry, as Starlark's
	}
	return x
}

// newDictEntryGuard returns the builtin dictEntryGuardName names: it adds
// the entry (key, value) to the dict the rewrite passes, and returns it.
func newDictEntryGuard() *starlark.Builtin {
	return starlark.NewBuiltin(dictEntryGuardName, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		d, k, v := args[0].(*starlark.Dict), args[1], args[2] // as the rewrite passes them
		if err := hashWalkKey(th, k); err != nil {
			return nil, err
		}
		n := d.Len()
		if err := d.SetKey(k, v); err != nil {
			return nil, err // Starlark's text: an unhashable key
		}
		if d.Len() > n {
			return d, nil
		}
		if keyTextFits(th, k) {
			return nil, fmt.Errorf("duplicate key: %v", k)
		}
		return nil, fmt.Errorf("duplicate key: %s… (a text of more than %d bytes)", cutKeyText(k), maxKeyText)
	})
}
