package code

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// go.starlark.net compares, sorts and hashes values in one Go call the
// watchdog cannot interrupt: lists sharing one long list (x == y,
// sorted(x), x in l) or a tuple sharing its sub-tuples ((t, t) forty
// levels deep: 2^40 hash calls) run for hours on little memory. Its
// comparisons also differ from Python's: a bool is not an int (True == 1
// is False) and a container is not equal to itself unless its items are
// (Python's `is` shortcut). So the comparison operators (==, !=, <, <=,
// >, >=, in, not in) are rewritten as calls of builtins doing Python's
// comparison (compareGuardNames), and sorted, min, max, list.index and
// list.remove use it too: it checks the watchdog's stop every few hundred
// items. A key is walked (hashWalk) before a dict or set the sandbox
// reaches hashes it, the walk stopping with the code.

// compareGuardNames are the names the rewritten comparisons call, by
// operator. They are not identifiers, so user code can neither call,
// shadow nor reassign them.
var compareGuardNames = map[syntax.Token]string{
	syntax.EQL: "<==>", syntax.NEQ: "<!=>",
	syntax.LT: "<<>", syntax.LE: "<<=>", syntax.GT: "<>>", syntax.GE: "<>=>",
	syntax.IN: "<in>", syntax.NOT_IN: "<not in>",
}

// guardCompares rewrites the comparisons in n (a parsed file or
// expression, before it is resolved) as calls of compareGuardNames, and
// returns n, or what replaces it when n is a comparison. A comparison
// with a literal that Starlark does as Python (plainCompare) is left as
// it is: the call costs a few times the comparison, and i < 100 or
// s == "a" in loops are the common ones.
func guardCompares(n syntax.Node) syntax.Node {
	return replaceExprs(n, func(x syntax.Expr) syntax.Expr {
		b, ok := x.(*syntax.BinaryExpr)
		if !ok {
			return x
		}
		name, ok := compareGuardNames[b.Op]
		if !ok || plainCompare(b) {
			return x
		}
		c := guardCall(name, b.X, b.Y).(*syntax.CallExpr)
		c.Lparen = b.OpPos // errors at the operator, as Starlark's
		return c
	})
}

// plainCompare reports whether Starlark's comparison b gives Python's
// answer in bounded time: an operand is a string literal (compared with
// a string as Python does, with any other value at once), or a number
// literal other than 0 and 1 (which no bool equals; ordered with a bool,
// Starlark fails where Python compares 0 or 1) in an equality or an
// ordering that asks whether the other operand is the smaller one: Starlark
// orders a NaN above every number where Python's every ordering with it
// is false, so `x < 100` is false for a NaN x in both, `x > 100` only in
// Python. Not the left operand of `in`, the item looked for: the
// container is what is compared.
func plainCompare(b *syntax.BinaryExpr) bool {
	plain := func(x syntax.Expr, otherSmaller bool) bool {
		lit, ok := unparen(x).(*syntax.Literal)
		if !ok {
			return false
		}
		number := true
		switch v := lit.Value.(type) {
		case string:
			return true
		case int64:
			number = v != 0 && v != 1
		case float64:
			number = v != 0 && v != 1
		default:
			number = lit.Token == syntax.INT // a big int
		}
		switch b.Op {
		case syntax.EQL, syntax.NEQ, syntax.IN, syntax.NOT_IN:
			return number
		}
		return number && otherSmaller
	}
	switch b.Op {
	case syntax.IN, syntax.NOT_IN:
		return plain(b.X, false) // compared with each item in turn, at once
	case syntax.LT, syntax.LE: // x < lit asks whether x is the smaller
		return plain(b.Y, true) || plain(b.X, false)
	}
	// lit < x is x > lit; equalities take either side.
	return plain(b.X, b.Op == syntax.GT || b.Op == syntax.GE) || plain(b.Y, false)
}

// newCompareGuards returns the builtins of compareGuardNames for an
// execution under g.
func newCompareGuards(g *guard) starlark.StringDict {
	env := starlark.StringDict{}
	for op, name := range compareGuardNames {
		env[name] = starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			c := comparer{g: g}
			var r bool
			var err error
			switch op {
			case syntax.IN, syntax.NOT_IN:
				r, err = c.contains(args[1], args[0])
				r = r != (op == syntax.NOT_IN)
			default:
				if nanOperand(args[0], args[1]) {
					// Python's NaN equals nothing, itself included, and
					// orders false against every number; Starlark orders
					// it above +Inf, equal to itself. Only for the
					// operands themselves: items of lists, tuples and
					// dicts keep Starlark's equality, which answers as
					// Python's identity shortcut does for one NaN object
					// (json.loads shares one).
					return starlark.Bool(op == syntax.NEQ), nil
				}
				r, err = c.compare(op, args[0], args[1], maxCompareDepth)
			}
			return starlark.Bool(r), err
		})
	}
	return env
}

// maxCompareDepth is how deep compare goes into nested lists, tuples and
// dicts, as Python's default recursion limit lets it (go.starlark.net's
// own CompareLimit, 10, refuses ordinary JSON documents); it also bounds
// the Go recursion. The same bound as str()'s.
const maxCompareDepth = maxReprDepth

// comparer compares values as Python does, checking the watchdog's stop
// every stopEvery items.
type comparer struct {
	g *guard // nil outside an execution
	n int
}

const stopEvery = 256

func newComparer(th *starlark.Thread) *comparer {
	g := threadGuard(th)
	return &comparer{g: g}
}

// tick counts one item and reports the watchdog's stop.
func (c *comparer) tick() error {
	if c.n++; c.n%stopEvery != 0 || c.g == nil {
		return nil
	}
	if r := c.g.stop.Load(); r != nil {
		return errors.New(*r)
	}
	return nil
}

// compare is x op y (op one of ==, !=, <, <=, >, >=) as in Python: a bool
// compares as the int 0 or 1 with numbers, and items of lists, tuples and
// dicts that are the same container are equal without being compared.
// Other values are compared by Starlark.
func (c *comparer) compare(op syntax.Token, x, y starlark.Value, depth int) (bool, error) {
	switch x.(type) { // the common cases first
	case starlark.String, starlark.Int, starlark.Float:
		if sameType(x, y) {
			return starlark.Compare(op, x, y)
		}
	}
	x, y = boolWithNumber(x, y), boolWithNumber(y, x)
	if depth < 1 {
		return false, errors.New("comparison exceeded maximum recursion depth")
	}
	switch x := x.(type) {
	case *starlark.List:
		if y, ok := y.(*starlark.List); ok {
			return c.sequences(op, x, y, depth)
		}
	case starlark.Tuple:
		if y, ok := y.(starlark.Tuple); ok {
			return c.sequences(op, x, y, depth)
		}
	case *starlark.Dict:
		if y, ok := y.(*starlark.Dict); ok && (op == syntax.EQL || op == syntax.NEQ) {
			eq, err := c.dictsEqual(x, y, depth)
			return eq == (op == syntax.EQL), err
		}
	}
	return starlark.CompareDepth(op, x, y, depth)
}

// nanOperand reports whether x and y are numbers (a bool counts as one)
// and one of them is a float NaN.
func nanOperand(x, y starlark.Value) bool {
	isNaN := func(v starlark.Value) bool {
		f, ok := v.(starlark.Float)
		return ok && f != f
	}
	if !isNaN(x) && !isNaN(y) {
		return false
	}
	for _, v := range []starlark.Value{boolWithNumber(x, y), boolWithNumber(y, x)} {
		switch v.(type) {
		case starlark.Int, starlark.Float:
		default:
			return false
		}
	}
	return true
}

// sameType reports whether x and y are of the same Go type.
func sameType(x, y starlark.Value) bool {
	switch x.(type) {
	case starlark.String:
		_, ok := y.(starlark.String)
		return ok
	case starlark.Int:
		_, ok := y.(starlark.Int)
		return ok
	case starlark.Float:
		_, ok := y.(starlark.Float)
		return ok
	}
	return false
}

// boolWithNumber is x as an int (boolAsInt) when other is a number, as
// Python compares them.
func boolWithNumber(x, other starlark.Value) starlark.Value {
	switch other.(type) {
	case starlark.Int, starlark.Float:
		return boolAsInt(x)
	}
	return x
}

// sequences compares two lists or two tuples item by item, as Python
// does: the first items that differ decide, else the lengths.
func (c *comparer) sequences(op syntax.Token, x, y starlark.Indexable, depth int) (bool, error) {
	nx, ny := x.Len(), y.Len()
	if nx != ny && (op == syntax.EQL || op == syntax.NEQ) {
		return op == syntax.NEQ, nil
	}
	for i := 0; i < nx && i < ny; i++ {
		if err := c.tick(); err != nil {
			return false, err
		}
		a, b := x.Index(i), y.Index(i)
		if same(a, b) {
			continue
		}
		eq, err := c.compare(syntax.EQL, a, b, depth-1)
		if err != nil || eq {
			if err != nil {
				return false, err
			}
			continue
		}
		switch op {
		case syntax.EQL:
			return false, nil
		case syntax.NEQ:
			return true, nil
		}
		return c.compare(op, a, b, depth-1)
	}
	return starlark.Compare(op, starlark.MakeInt(nx), starlark.MakeInt(ny))
}

// dictsEqual reports whether x and y have the same keys with equal values.
func (c *comparer) dictsEqual(x, y *starlark.Dict, depth int) (bool, error) {
	if x.Len() != y.Len() {
		return false, nil
	}
	for _, kv := range x.Items() {
		if err := c.tick(); err != nil {
			return false, err
		}
		v, found, err := dictLookup(y, kv[0])
		if err != nil || !found {
			return false, err
		}
		if same(kv[1], v) {
			continue
		}
		if eq, err := c.compare(syntax.EQL, kv[1], v, depth-1); err != nil || !eq {
			return false, err
		}
	}
	return true, nil
}

// same reports whether x and y are the same container (Python's `is`).
func same(x, y starlark.Value) bool {
	switch x := x.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set:
		return x == y
	case starlark.Tuple:
		y, ok := y.(starlark.Tuple)
		return ok && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
	}
	return false
}

// contains is x in y, as Python: items of a list or tuple are compared
// by compare, and a dict or set finds a bool as the int it equals.
func (c *comparer) contains(y, x starlark.Value) (bool, error) {
	switch y := y.(type) {
	case *starlark.List, starlark.Tuple:
		seq := y.(starlark.Indexable)
		for i := 0; i < seq.Len(); i++ {
			if err := c.tick(); err != nil {
				return false, err
			}
			e := seq.Index(i)
			if same(x, e) {
				return true, nil
			}
			if eq, err := c.compare(syntax.EQL, x, e, maxCompareDepth); err != nil || eq {
				return eq, err
			}
		}
		return false, nil
	case *starlark.Dict:
		if err := c.hashWalk(x); err != nil {
			return false, err
		}
		_, found, err := dictLookup(y, x)
		return found, err
	case *starlark.Set:
		if err := c.hashWalk(x); err != nil {
			return false, err
		}
		found, err := y.Has(x)
		if alt, ok := boolIntKey(x); ok && err == nil && !found {
			found, err = y.Has(alt)
		}
		return found, err
	case sandboxRange:
		x = boolAsInt(x)
	}
	r, err := starlark.Binary(syntax.IN, x, y)
	if err != nil {
		return false, err
	}
	return bool(r.Truth()), nil
}

// hashWalk visits the items of x that hashing it visits (the items of
// nested tuples, shared ones once per reference), stopping with the
// code: a tuple sharing its sub-tuples costs a hash of 2^depth calls,
// which go.starlark.net makes in one Go call the watchdog cannot stop.
// When the walk ends in time, the hash costs no more than it did.
// Past maxCompareDepth nested tuples it fails, as Python's recursion
// limit would: the walk, and Starlark's hash after it, are Go recursion,
// which a tuple nested millions deep would take past the stack's limit.
func (c *comparer) hashWalk(x starlark.Value) error {
	return c.hashWalkDepth(x, maxCompareDepth)
}

func (c *comparer) hashWalkDepth(x starlark.Value, depth int) error {
	t, ok := x.(starlark.Tuple)
	if !ok {
		return nil
	}
	if depth < 1 {
		return errors.New("maximum recursion depth exceeded while hashing a tuple")
	}
	for _, e := range t {
		if err := c.tick(); err != nil {
			return err
		}
		if err := c.hashWalkDepth(e, depth-1); err != nil {
			return err
		}
	}
	return nil
}

// hashWalkKey is hashWalk of k for th's execution.
func hashWalkKey(th *starlark.Thread, k starlark.Value) error {
	if _, ok := k.(starlark.Tuple); !ok {
		return nil
	}
	return newComparer(th).hashWalk(k)
}

// boolIntKey is the key equal to k of the other type, when k is a bool
// or a number equal to 0 or 1: Python finds True under the key 1.
func boolIntKey(k starlark.Value) (starlark.Value, bool) {
	switch k := k.(type) {
	case starlark.Bool:
		if k {
			return starlark.MakeInt(1), true
		}
		return starlark.MakeInt(0), true
	case starlark.Int:
		if n, ok := k.Int64(); ok && (n == 0 || n == 1) {
			return starlark.Bool(n == 1), true
		}
	case starlark.Float:
		if k == 0 || k == 1 {
			return starlark.Bool(k == 1), true
		}
	}
	return nil, false
}

// dictLookup is d.Get(k), finding a bool under the int it equals and the
// reverse, as Python does.
func dictLookup(d *starlark.Dict, k starlark.Value) (starlark.Value, bool, error) {
	v, found, err := d.Get(k)
	if err != nil || found {
		return v, found, err
	}
	if alt, ok := boolIntKey(k); ok {
		return d.Get(alt)
	}
	return v, found, err
}

// dictSetKey is d.SetKey(k, v), except that a bool (or 0 or 1) already
// present as the other type is updated under that key, as in Python.
func dictSetKey(d *starlark.Dict, k, v starlark.Value) error {
	if alt, ok := boolIntKey(k); ok {
		if _, found, _ := d.Get(k); !found {
			if _, found, _ := d.Get(alt); found {
				k = alt
			}
		}
	}
	return d.SetKey(k, v)
}

// builtinSorted is Starlark's sorted with Python's comparison (compare).
func builtinSorted(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var iterable starlark.Iterable
	var key starlark.Callable
	var reverse bool
	if err := starlark.UnpackArgs("sorted", args, kwargs, "iterable", &iterable, "key?", &key, "reverse?", &reverse); err != nil {
		return nil, err
	}
	var values []starlark.Value
	if n := starlark.Len(iterable); n > 0 {
		values = make([]starlark.Value, 0, n)
	}
	iter := iterable.Iterate()
	var x starlark.Value
	for iter.Next(&x) {
		if err := pulse(th, len(values)); err != nil {
			iter.Done()
			return nil, err
		}
		values = append(values, x)
	}
	iter.Done()
	keys := values
	if key != nil {
		keys = make([]starlark.Value, len(values))
		for i, v := range values {
			k, err := starlark.Call(th, key, starlark.Tuple{v}, nil)
			if err != nil {
				return nil, err
			}
			keys[i] = k
		}
	}
	c := newComparer(th)
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	// less checks the watchdog's stop (c.tick) at every comparison, not
	// only inside containers: sorting millions of numbers is one Go call.
	// An error ends the sort at once (sortAbort), rather than letting it
	// finish its O(n log n) calls.
	less := func(i, j int) bool {
		if err := c.tick(); err != nil {
			panic(sortAbort{err})
		}
		lt, err := c.compare(syntax.LT, keys[order[i]], keys[order[j]], maxCompareDepth)
		if err != nil {
			panic(sortAbort{err})
		}
		return lt
	}
	if err := sortStable(order, less, reverse); err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(values))
	for i, k := range order {
		out[i] = values[k]
	}
	return starlark.NewList(out), nil
}

// sortAbort carries the error that ends a sort out of sort.SliceStable.
type sortAbort struct{ err error }

// sortStable sorts order by less (reversed when reverse: equal items stay
// in their order, as in Python), returning the error of a less that
// panicked with a sortAbort.
func sortStable(order []int, less func(i, j int) bool, reverse bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(sortAbort)
			if !ok {
				panic(r)
			}
			err = a.err
		}
	}()
	if reverse {
		sort.SliceStable(order, func(i, j int) bool { return less(j, i) })
	} else {
		sort.SliceStable(order, less)
	}
	return nil
}

// builtinMinMax is Starlark's min or max (b's name) with Python's
// comparison (compare).
func builtinMinMax(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%s requires at least one positional argument", b.Name())
	}
	var keyFunc starlark.Callable
	if err := starlark.UnpackArgs(b.Name(), nil, kwargs, "key?", &keyFunc); err != nil {
		return nil, err
	}
	op := syntax.LT
	if b.Name() == "max" {
		op = syntax.GT
	}
	var iterable starlark.Value = args
	if len(args) == 1 {
		iterable = args[0]
	}
	iter := starlark.Iterate(iterable)
	if iter == nil {
		return nil, fmt.Errorf("%s: %s value is not iterable", b.Name(), iterable.Type())
	}
	defer iter.Done()
	keyOf := func(x starlark.Value) (starlark.Value, error) {
		if keyFunc == nil {
			return x, nil
		}
		return starlark.Call(th, keyFunc, starlark.Tuple{x}, nil)
	}
	var extremum starlark.Value
	if !iter.Next(&extremum) {
		return nil, fmt.Errorf("%s: argument is an empty sequence", b.Name())
	}
	extremeKey, err := keyOf(extremum)
	if err != nil {
		return nil, err
	}
	c := newComparer(th)
	var x starlark.Value
	for iter.Next(&x) {
		if err := c.tick(); err != nil {
			return nil, err
		}
		k, err := keyOf(x)
		if err != nil {
			return nil, err
		}
		if better, err := c.compare(op, k, extremeKey, maxCompareDepth); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		} else if better {
			extremum, extremeKey = x, k
		}
	}
	return extremum, nil
}

// listIndex is list.index with Python's comparison (compare).
func listIndex(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var value, startArg, endArg starlark.Value
	if err := starlark.UnpackPositionalArgs("index", args, kwargs, 1, &value, &startArg, &endArg); err != nil {
		return nil, err
	}
	l := b.Receiver().(*starlark.List)
	start, end := 0, l.Len()
	for _, bound := range []struct {
		arg starlark.Value
		p   *int
	}{{startArg, &start}, {endArg, &end}} {
		if bound.arg == nil || bound.arg == starlark.None {
			continue
		}
		i, err := starlark.AsInt32(bound.arg)
		if err != nil {
			return nil, fmt.Errorf("index: %v", err)
		}
		*bound.p = clampIndex(i, l.Len())
	}
	c := newComparer(th)
	for i := start; i < end; i++ {
		if err := c.tick(); err != nil {
			return nil, err
		}
		e := l.Index(i)
		if same(e, value) {
			return starlark.MakeInt(i), nil
		}
		if eq, err := c.compare(syntax.EQL, e, value, maxCompareDepth); err != nil {
			return nil, fmt.Errorf("index: %v", err)
		} else if eq {
			return starlark.MakeInt(i), nil
		}
	}
	return nil, errors.New("index: value not in list")
}

// clampIndex is a Python slice bound i of a sequence of length n.
func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

// listRemove is list.remove with Python's comparison (compare).
func listRemove(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var value starlark.Value
	if err := starlark.UnpackPositionalArgs("remove", args, kwargs, 1, &value); err != nil {
		return nil, err
	}
	l := b.Receiver().(*starlark.List)
	c := newComparer(th)
	for i := 0; i < l.Len(); i++ {
		if err := c.tick(); err != nil {
			return nil, err
		}
		e := l.Index(i)
		eq := same(e, value)
		if !eq {
			var err error
			if eq, err = c.compare(syntax.EQL, e, value, maxCompareDepth); err != nil {
				return nil, fmt.Errorf("remove: %v", err)
			}
		}
		if eq { // list.pop(i) removes it, with Starlark's mutability checks
			pop, err := l.Attr("pop")
			if err != nil {
				return nil, err
			}
			if _, err := starlark.Call(th, pop, starlark.Tuple{starlark.MakeInt(i)}, nil); err != nil {
				return nil, fmt.Errorf("remove: %v", err)
			}
			return starlark.None, nil
		}
	}
	return nil, errors.New("remove: element not found")
}

// dictGet is dict.get, finding a bool under the int it equals (and the
// reverse) and walking a tuple key with the watchdog (hashWalk).
func dictGet(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var key starlark.Value
	var dflt starlark.Value = starlark.None
	if err := starlark.UnpackPositionalArgs("get", args, kwargs, 1, &key, &dflt); err != nil {
		return nil, err
	}
	if err := hashWalkKey(th, key); err != nil {
		return nil, err
	}
	v, found, err := dictLookup(b.Receiver().(*starlark.Dict), key)
	if err != nil {
		return nil, fmt.Errorf("get: %v", err)
	}
	if !found {
		return dflt, nil
	}
	return v, nil
}

// builtinHash is Starlark's hash, which hashes strings and bytes only,
// extended to Python's hash of ints, of floats equal to an int and of
// bools (hash(True) == hash(1) == 1).
func builtinHash(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 1 && len(kwargs) == 0 {
		x := boolAsInt(args[0])
		if f, ok := x.(starlark.Float); ok && f == starlark.Float(math.Trunc(float64(f))) && !math.IsInf(float64(f), 0) {
			x, _ = starlark.NumberToInt(f)
		}
		if i, ok := x.(starlark.Int); ok {
			return pyIntHash(i), nil
		}
	}
	return universeBuiltin("hash").CallInternal(th, args, kwargs)
}

// pyIntHash is Python's hash of the int i: its remainder modulo the prime
// 2^61 - 1 with i's sign, -2 for -1.
func pyIntHash(i starlark.Int) starlark.Value {
	const prime = 1<<61 - 1
	if n, ok := i.Int64(); ok && n > -prime && n < prime {
		if n == -1 {
			n = -2
		}
		return starlark.MakeInt64(n)
	}
	z := new(big.Int).Abs(i.BigInt())
	h := z.Mod(z, big.NewInt(prime)).Int64()
	if i.Sign() < 0 {
		h = -h
		if h == -1 {
			h = -2
		}
	}
	return starlark.MakeInt64(h)
}

// percent is x % y: a float remainder that is zero takes the divisor's
// sign, as in Python (-4.0 % 2 is 0.0, 4.0 % -2 is -0.0; Starlark keeps
// the dividend's).
func percent(x, y starlark.Value) (starlark.Value, error) {
	z, err := starlark.Binary(syntax.PERCENT, x, y)
	if f, ok := z.(starlark.Float); ok && err == nil && f == 0 {
		neg := false
		switch y := y.(type) {
		case starlark.Float:
			neg = math.Signbit(float64(y))
		case starlark.Int:
			neg = y.Sign() < 0
		}
		if neg {
			return starlark.Float(math.Copysign(0, -1)), nil
		}
		return starlark.Float(0), nil
	}
	return z, err
}

// stringSplitlines is Python's str.splitlines: lines end at "\r\n" and
// each of "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", U+0085, U+2028
// and U+2029 (Starlark's ends them at "\n" only), kept with keepends.
func stringSplitlines(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var keepends bool
	if err := starlark.UnpackPositionalArgs("splitlines", args, kwargs, 0, &keepends); err != nil {
		return nil, err
	}
	s := string(b.Receiver().(starlark.String))
	var lines []starlark.Value
	for start := 0; start < len(s); {
		end, next := lineEnd(s, start)
		if keepends {
			end = next
		}
		lines = append(lines, starlark.String(s[start:end]))
		start = next
	}
	return starlark.NewList(lines), nil
}

// lineEnd is the end of the line of s starting at start (its line break
// excluded), and where the next line starts.
func lineEnd(s string, start int) (end, next int) {
	for i := start; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				return i, i + 2
			}
			return i, i + 1
		case '\n', '\v', '\f', '\x1c', '\x1d', '\x1e', '\u0085', '\u2028', '\u2029':
			return i, i + size
		}
		i += size
	}
	return len(s), len(s)
}

// lineCount is how many lines s.splitlines() makes.
func lineCount(s string) int64 {
	var n int64
	for start := 0; start < len(s); n++ {
		_, start = lineEnd(s, start)
	}
	return n
}
