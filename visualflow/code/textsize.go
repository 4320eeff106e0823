package code

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// textSize counts the bytes of a string go.starlark.net would build (a
// join, a str.format, a % formatting, a fail message) without building
// it, to compare with the memory limit first. Values are measured as
// Starlark writes them (its writeValue: str() of a non-string in format,
// repr for !r and %r), containers met again inside themselves as "[...]"
// and "{...}".
//
// The count is only compared with the limit, so it stops some way past
// it: once past, it goes on for at most extraWork more items, counting
// strings by their least quoted size, to name the size in the refusal
// (as "at least" when it could not finish). Below the limit the count is
// exact, except for ints past 64 bits (an upper bound from their bit
// length). Containers whose text does not depend on where they are (no
// cycle inside) are measured once: a list sharing one sub-list many times
// costs its distinct values, not its text.
type textSize struct {
	th      *starlark.Thread
	g       *guard
	n       int64 // bytes counted
	work    int   // items visited: values, fields, separators
	overAt  int   // work when n passed the limit, or -1
	lower   bool  // n is only a lower bound (see above)
	stopped bool  // counting gave up past the limit
	err     error // the watchdog stopped the code

	// path holds the lists and dicts being written, as writeValue's path
	// does (a count per value: a list may be met at several depths).
	path map[starlark.Value]int
	// cuts counts the "[...]" written: a container whose count changed
	// while it was measured has a text that depends on the path.
	cuts int
	memo map[any]int64 // text size of path-independent containers

	// python counts instead a lower bound of Python's repr of the value
	// (pystr.go), which writes strings, floats, sets and functions
	// differently: a string as at least itself and its quotes.
	python bool

	// depth is how many containers enclose the value being measured: the
	// walk is Go recursion, which a value nested millions deep would take
	// past the goroutine stack's limit (a fatal error). Past maxReprDepth
	// the text cannot be written (Python raises RecursionError, and
	// Starlark's own writer would overflow the stack), so the count fails
	// with errTooDeep; ints past maxIntDigits digits likewise fail with
	// Python's error (errIntDigits).
	depth int
	// measureOnly is set when the text is only measured, never written (a
	// repeat's, repeat.go): values nested too deep are then left out of
	// the count, which stays a lower bound, and long ints are counted.
	measureOnly bool
}

// errTooDeep is Python's RecursionError for writing a value nested past
// maxReprDepth.
var errTooDeep = errors.New("maximum recursion depth exceeded while getting the repr of an object")

// extraWork is how many more items textSize visits past the limit to
// name the size.
const extraWork = 1 << 20

func newTextSize(th *starlark.Thread, g *guard) *textSize {
	return &textSize{th: th, g: g, overAt: -1}
}

// add counts k bytes.
func (z *textSize) add(k int64) {
	if z.n += k; z.n < 0 {
		z.n = math.MaxInt64 // overflow: counting more changes nothing
	}
	if z.overAt < 0 && z.g.maxBytes >= 0 && z.n > z.g.maxBytes {
		z.overAt = z.work
	}
}

// tick counts one item and reports whether counting goes on: it stops
// when the watchdog stopped the code, or extraWork items past the limit.
func (z *textSize) tick() bool {
	if z.err != nil || z.stopped {
		return false
	}
	z.work++
	if err := pulse(z.th, z.work); err != nil {
		z.err = err
		return false
	}
	if z.overAt >= 0 && z.work-z.overAt > extraWork {
		z.stopped, z.lower = true, true
		return false
	}
	return true
}

// refusal is the limit error when the count passed the memory limit (or
// the watchdog's stop), else nil. what names the operation.
func (z *textSize) refusal(what string) error {
	if z.err != nil {
		return z.err
	}
	if z.g.maxBytes < 0 || z.n <= z.g.maxBytes {
		return nil // no byte limit: the count only checked depth and the watchdog
	}
	size := sizeText(z.n)
	if z.lower {
		size = "at least " + size
	}
	return z.g.refuseReason(z.th, fmt.Sprintf("%s would build a string of %s, which would exceed the memory limit of %s",
		what, size, sizeText(z.g.maxBytes)))
}

// str counts x as Starlark writes it where a string stands for itself
// (print, fail, str.format's !s, %s).
func (z *textSize) str(x starlark.Value) {
	if s, ok := x.(starlark.String); ok {
		z.add(int64(len(s)))
		return
	}
	z.value(x)
}

// value counts Starlark's text of x (writeValue; String() of a string is
// its quoted form).
func (z *textSize) value(x starlark.Value) {
	if !z.tick() {
		return
	}
	switch x := x.(type) {
	case starlark.NoneType:
		z.add(4)
	case starlark.Bool:
		if x {
			z.add(4)
		} else {
			z.add(5)
		}
	case starlark.Int:
		if !z.measureOnly {
			if err := checkIntDigits(x); err != nil {
				z.err = err
				return
			}
		}
		z.add(intTextLen(x, 10))
	case starlark.Float:
		if z.python {
			z.add(3) // 0.0, inf, nan, 1e+16, ...
		} else {
			z.add(int64(len(x.String())))
		}
	case starlark.String:
		if z.python {
			z.add(int64(len(x)) + 2)
		} else {
			z.add(z.quotedLen(string(x)))
		}
	case starlark.Bytes:
		if z.python {
			z.add(int64(len(x)) + 3)
		} else {
			z.add(1 + z.quotedLen(string(x)))
		}
	case *starlark.List:
		z.container(x, x, "[...]", func() {
			z.add(2) // [ ]
			for i := 0; i < x.Len() && z.tick(); i++ {
				if i > 0 {
					z.add(2) // ", "
				}
				z.value(x.Index(i))
			}
		})
	case starlark.Tuple:
		if len(x) == 0 {
			z.add(2)
			return
		}
		// Not on the path (a tuple cannot hold itself but through a list);
		// keyed by its first element's address and its length.
		z.container(tupleKey{&x[0], len(x)}, nil, "", func() {
			z.add(2) // ( )
			if len(x) == 1 {
				z.add(1) // (x,)
			}
			for i, e := range x {
				if i > 0 {
					z.add(2)
				}
				z.value(e)
				if !z.tick() {
					return
				}
			}
		})
	case *starlark.Dict:
		z.container(x, x, "{...}", func() {
			z.add(2) // { }
			for i, kv := range x.Items() {
				if i > 0 {
					z.add(2)
				}
				z.value(kv[0]) // hashable: holds no list or dict
				z.add(2)       // ": "
				z.value(kv[1])
				if !z.tick() {
					return
				}
			}
		})
	case *starlark.Set:
		z.container(x, nil, "", func() {
			switch {
			case !z.python:
				z.add(int64(len("set([])")))
			case x.Len() == 0:
				z.add(int64(len("set()")))
			default:
				z.add(2) // { }
			}
			iter := x.Iterate()
			defer iter.Done()
			var e starlark.Value
			for i := 0; z.tick() && iter.Next(&e); i++ {
				if i > 0 {
					z.add(2)
				}
				z.value(e)
			}
		})
	default:
		// Functions, builtins, ranges, x.elems(): a text about as long as
		// what they hold.
		if z.python {
			z.add(1)
		} else {
			z.add(int64(len(x.String())))
		}
	}
}

type tupleKey struct {
	first *starlark.Value
	n     int
}

// container counts a container's text, written by write: cut (5 bytes)
// when it is on the path (onPath, nil for types never on it), else the
// memoised size or write's count.
func (z *textSize) container(key any, onPath starlark.Value, cut string, write func()) {
	if z.depth >= maxReprDepth {
		if z.measureOnly {
			z.lower = true
		} else {
			z.err = errTooDeep
		}
		return
	}
	z.depth++
	defer func() { z.depth-- }()
	if onPath != nil && z.path[onPath] > 0 {
		z.add(int64(len(cut)))
		z.cuts++
		return
	}
	if size, ok := z.memo[key]; ok {
		z.add(size)
		return
	}
	start, cuts := z.n, z.cuts
	if onPath != nil {
		if z.path == nil {
			z.path = map[starlark.Value]int{}
		}
		z.path[onPath]++
		defer func() {
			if z.path[onPath]--; z.path[onPath] == 0 {
				delete(z.path, onPath)
			}
		}()
	}
	write()
	// (A size counted as a lower bound is memoised as one: z.lower stays
	// set.)
	if z.cuts == cuts && z.err == nil && !z.stopped {
		if z.memo == nil {
			z.memo = map[any]int64{}
		}
		z.memo[key] = z.n - start
	}
}

// quotedLen is the length of Starlark's quoted form of s (syntax.Quote):
// printable runes as they are, \" \\ and the C escapes in two bytes,
// other ASCII and invalid bytes as \xhh, other runes as \uhhhh or
// \Uhhhhhhhh. Past the limit only its least size is counted.
func (z *textSize) quotedLen(s string) int64 {
	if z.overAt >= 0 {
		z.lower = true
		return int64(len(s)) + 2
	}
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				n += 2
			case c >= 0x20 && c < 0x7f:
				n++
			case c == '\a' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' || c == '\v':
				n += 2
			default:
				n += 4
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case w == 1: // invalid byte
			n += 4
		case strconv.IsPrint(r):
			n += int64(w)
		case r < 0x10000:
			n += 6
		default:
			n += 10
		}
		i += w
	}
	return n
}

// intTextLen is the length of x written in base (10, 8 or 16) with its
// sign: exact within 64 bits, else an upper bound from the bit length.
func intTextLen(x starlark.Int, base int) int64 {
	if v, ok := x.Int64(); ok {
		n := int64(1)
		u := uint64(v)
		if v < 0 {
			n, u = 2, uint64(-v) // -MinInt64 wraps to 1<<63, its magnitude
		}
		for ; u >= uint64(base); u /= uint64(base) {
			n++
		}
		return n
	}
	bits := int64(x.BigInt().BitLen())
	switch base {
	case 8:
		return bits/3 + 2
	case 16:
		return bits/4 + 2
	}
	return bits*30103/100000 + 2 // log10(2) < 0.30103
}

// floatDirectiveLen is the length of Starlark's %e %f %g (or upper case)
// of f (its Float.format).
func floatDirectiveLen(f float64, conv byte) int64 {
	switch {
	case math.IsInf(f, 0):
		return 4 // +inf, -inf
	case math.IsNaN(f):
		return 3
	case conv == 'g' || conv == 'G':
		s := strconv.FormatFloat(f, conv, -1, 64)
		if strings.IndexByte(s, conv-'g'+'e') < 0 && strings.IndexByte(s, '.') < 0 {
			return int64(len(s)) + 2 // ".0"
		}
		return int64(len(s))
	}
	return int64(len(strconv.FormatFloat(f, conv, 6, 64)))
}

// percent counts what format % x builds, following Starlark's
// interpolate; where Starlark fails it stops, having counted what
// Starlark builds before failing.
func (z *textSize) percent(format string, x starlark.Value) {
	index, nargs := 0, 1
	tuple, isTuple := x.(starlark.Tuple)
	if isTuple {
		nargs = len(tuple)
	}
	for z.tick() {
		i := strings.IndexByte(format, '%')
		if i < 0 {
			z.add(int64(len(format)))
			return
		}
		z.add(int64(i))
		format = format[i+1:]
		if format != "" && format[0] == '%' {
			z.add(1)
			format = format[1:]
			continue
		}
		var arg starlark.Value
		if format != "" && format[0] == '(' {
			format = format[1:]
			j := strings.IndexByte(format, ')')
			if j < 0 {
				return
			}
			m, ok := x.(starlark.Mapping)
			if !ok {
				return
			}
			v, found, _ := m.Get(starlark.String(format[:j]))
			if !found {
				return
			}
			arg, format = v, format[j+1:]
		} else {
			if index >= nargs {
				return
			}
			arg = x
			if isTuple {
				arg = tuple[index]
			}
		}
		if format == "" {
			return
		}
		switch c := format[0]; c {
		case 's':
			z.str(arg)
		case 'r':
			z.value(arg)
		case 'd', 'i', 'o', 'x', 'X':
			n, err := starlark.NumberToInt(arg)
			if err != nil {
				return
			}
			base := 10
			if c == 'o' {
				base = 8
			} else if c == 'x' || c == 'X' {
				base = 16
			} else if err := checkIntDigits(n); err != nil {
				z.err = err
				return
			}
			z.add(intTextLen(n, base))
		case 'e', 'f', 'g', 'E', 'F', 'G':
			f, ok := starlark.AsFloat(arg)
			if !ok {
				return
			}
			z.add(floatDirectiveLen(f, c))
		case 'c':
			switch arg := arg.(type) {
			case starlark.Int:
				r, err := starlark.AsInt32(arg)
				if err != nil || r < 0 || r > unicode.MaxRune {
					return
				}
				z.add(runeLen(rune(r)))
			case starlark.String:
				r, size := utf8.DecodeRuneInString(string(arg))
				if size != len(arg) || len(arg) == 0 {
					return
				}
				z.add(runeLen(r))
			default:
				return
			}
		case '%':
			z.add(1)
		default:
			return
		}
		format = format[1:]
		index++
	}
}

// format counts what format.format(*args, **kwargs) builds, following
// Starlark's string_format; where Starlark fails it stops, having counted
// what Starlark builds before failing.
func (z *textSize) format(format string, args starlark.Tuple, kwargs []starlark.Tuple) {
	var auto, manual bool
	index := 0
	for z.tick() {
		literal := format
		i := strings.IndexByte(format, '{')
		if i >= 0 {
			literal = format[:i]
		}
		for { // "}}" is "}"; a lone "}" fails
			j := strings.IndexByte(literal, '}')
			if j < 0 {
				z.add(int64(len(literal)))
				break
			}
			if len(literal) == j+1 || literal[j+1] != '}' {
				return
			}
			z.add(int64(j + 1))
			literal = literal[j+2:]
		}
		if i < 0 {
			return
		}
		if i+1 < len(format) && format[i+1] == '{' {
			z.add(1)
			format = format[i+2:]
			continue
		}
		format = format[i+1:]
		i = strings.IndexByte(format, '}')
		if i < 0 {
			return
		}
		field := format[:i]
		format = format[i+1:]

		name, conv, spec := field, "s", ""
		if i := strings.IndexByte(field, '!'); i < 0 {
			if i := strings.IndexByte(field, ':'); i >= 0 {
				name, spec = field[:i], field[i+1:]
			}
		} else {
			name = field[:i]
			conv = field[i+1:]
			if before, after, ok := strings.Cut(conv, ":"); ok {
				conv, spec = before, after
			}
		}

		var arg starlark.Value
		if name == "" {
			if manual || index >= len(args) {
				return
			}
			auto = true
			arg = args[index]
			index++
		} else if num, ok := decimalIndex(name); ok {
			if auto || num >= len(args) {
				return
			}
			manual = true
			arg = args[num]
		} else {
			for _, kv := range kwargs {
				if string(kv[0].(starlark.String)) == name {
					arg = kv[1]
					break
				}
			}
			if arg == nil {
				return
			}
		}
		if spec != "" {
			return
		}
		switch conv {
		case "s":
			z.str(arg)
		case "r":
			z.value(arg)
		default:
			return
		}
	}
}

// runeLen is the length of r as strings.Builder.WriteRune writes it (a
// surrogate as U+FFFD).
func runeLen(r rune) int64 {
	if n := utf8.RuneLen(r); n > 0 {
		return int64(n)
	}
	return int64(utf8.RuneLen(utf8.RuneError))
}

// decimalIndex reads a field name made of decimal digits, as Starlark's
// format does (decimal).
func decimalIndex(s string) (int, bool) {
	x := 0
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		if x = x*10 + int(d); x < 0 {
			return 0, false
		}
	}
	return x, true
}
