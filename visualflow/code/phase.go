package code

import (
	"slices"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/syntax"
)

// The reference's wrappers of an error, by the phase that raised it
// (code_executor.py: validate_code, then the handler's exec and call).
const (
	syntaxError    = "Syntax error: "
	executionError = "Execution error: "
	runtimeError   = "Runtime error: "
)

// resolveFailure is the wrapper and the error to report for err, the
// resolver's failure on src. Starlark reports an undefined name before
// the code runs, where Python raises a NameError when the name is
// evaluated: at the module's top level ("Execution error"), or in a
// function body when the function is called ("Runtime error"). Every
// other resolve error (assigning to a call, a duplicate parameter, break
// outside a loop) is a SyntaxError in Python. Python raises the syntax
// errors first, then runs the module, then calls the function: the error
// reported is the first, in source order, of the earliest phase.
func resolveFailure(src string, err error) (string, error) {
	errs, ok := err.(resolve.ErrorList)
	if !ok {
		return syntaxError, err
	}
	var bodies [][2]syntax.Position
	if f, perr := fileOptions.Parse("code", src, 0); perr == nil {
		// A fresh parse: guardCode's rewrites made nodes without positions.
		bodies = functionBodies(f)
	}
	var first [3]*resolve.Error // by phase: syntax, module, function body
	for i := range errs {
		e := &errs[i]
		phase := 0
		if strings.HasPrefix(e.Msg, "undefined: ") {
			phase = 1
			if slices.ContainsFunc(bodies, func(b [2]syntax.Position) bool { return !before(e.Pos, b[0]) && !before(b[1], e.Pos) }) {
				phase = 2
			}
		}
		if first[phase] == nil || before(e.Pos, first[phase].Pos) {
			first[phase] = e
		}
	}
	for phase, prefix := range []string{syntaxError, executionError, runtimeError} {
		if e := first[phase]; e != nil {
			return prefix, *e
		}
	}
	return syntaxError, err // not reached: ErrorList is not empty
}

// functionBodies is the span of every def's and lambda's body in f (the
// code that runs when the function is called, not its parameters'
// defaults, which run when it is defined).
func functionBodies(f *syntax.File) [][2]syntax.Position {
	var spans [][2]syntax.Position
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DefStmt:
			if len(n.Body) > 0 {
				spans = append(spans, [2]syntax.Position{syntax.Start(n.Body[0]), syntax.End(n.Body[len(n.Body)-1])})
			}
		case *syntax.LambdaExpr:
			spans = append(spans, [2]syntax.Position{syntax.Start(n.Body), syntax.End(n.Body)})
		}
		return true
	})
	return spans
}

// before reports whether p comes before q in the same file.
func before(p, q syntax.Position) bool {
	return p.Line < q.Line || p.Line == q.Line && p.Col < q.Col
}
