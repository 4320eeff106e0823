// Package pyjson encodes and decodes JSON exactly as Python's json module
// writes it, so that files, hashes and idempotency keys match the Python
// runtime byte for byte.
//
// Values are the generic JSON tree used across the project: nil, bool,
// string, json.Number, float64, float32, the integer kinds, []any and
// map[string]any. Typed slices, arrays, maps with string keys and named
// number types are read element by element, so a float stays a float;
// other Go values (structs above all) are converted through encoding/json
// first, which writes an integral float field as an int. A struct with no
// field encoding/json writes (an error value) is refused, as Python's
// json.dumps refuses an object it cannot encode, not stored as {}.
package pyjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Style selects one of Python's json.dumps layouts.
type Style struct {
	// SortKeys sorts object keys (Python sort_keys=True). Without it keys
	// are still written sorted, because Go maps have no order; the flag
	// only matters for documentation of intent and struct encoders.
	SortKeys bool
	// ASCII escapes every non-ASCII character (Python ensure_ascii=True).
	ASCII bool
	// Compact uses the separators "," and ":" (no spaces). When false the
	// Python defaults ", " and ": " are used.
	Compact bool
	// Indent, when positive, pretty-prints with that many spaces per level
	// (Python indent=N, which implies the separators "," and ": ").
	Indent int
	// PyNumbers writes a json.Number as Python's json.dumps writes the
	// number json.loads reads from it (1e-7 as 1e-07, 1.50 as 1.5, -0 as
	// 0, 1e400 as Infinity) instead of the literal as read.
	PyNumbers bool
	// AllowNaN writes NaN and infinite floats as the literals NaN,
	// Infinity and -Infinity (Python allow_nan=True, json.dumps' default)
	// instead of refusing them. json.Number literals NaN and ±Infinity
	// are written in every style.
	AllowNaN bool
}

// Common styles.
var (
	// Canonical is sort_keys=True, separators=(",", ":"), ensure_ascii=False:
	// the text hashed by the ledger hash chain. Its numbers are Python's
	// (PyNumbers), so a literal another writer spelt its own way hashes as
	// Python re-encodes it.
	Canonical = Style{SortKeys: true, Compact: true, PyNumbers: true}
	// CanonicalASCII additionally escapes non-ASCII: the idempotency key text.
	CanonicalASCII = Style{SortKeys: true, Compact: true, ASCII: true, PyNumbers: true}
	// Line is Python's json.dumps default separators with non-ASCII raw:
	// JSONL ledger lines and SQLite run_json.
	Line = Style{}
	// Pretty is indent=2 with non-ASCII raw: run_<id>.json files.
	Pretty = Style{Indent: 2}
)

// Error reports a value that cannot be encoded, naming where it is.
type Error struct {
	Path   string // e.g. vars.a.b[2]
	Reason string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "value is not JSON-serialisable: " + e.Reason
	}
	return fmt.Sprintf("%s is not JSON-serialisable: %s", e.Path, e.Reason)
}

// Marshal encodes v in the given style.
func Marshal(v any, st Style) ([]byte, error) {
	return Append(nil, v, st, "")
}

// Append appends the encoding of v to buf. root names v in error paths.
func Append(buf []byte, v any, st Style, root string) ([]byte, error) {
	return AppendMember(buf, v, st, root, 0)
}

// AppendMember appends the encoding of v as the value of the object member
// at path root, depth levels down, in an object its caller writes by hand:
// the bytes, error paths and nesting limit are those of v encoded in place
// within the whole object.
func AppendMember(buf []byte, v any, st Style, root string, depth int) ([]byte, error) {
	e := getEncoder(st, root)
	defer putEncoder(e)
	e.buf = buf
	if err := e.value(v, depth); err != nil {
		return buf, err
	}
	return e.buf, nil
}

// encoders keeps encoders with their stacks (path, ancestors, keys), so
// encoding a value allocates only what the output buffer needs.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

func getEncoder(st Style, root string) *encoder {
	e := encoders.Get().(*encoder)
	e.st, e.root = st, root
	return e
}

func putEncoder(e *encoder) {
	e.buf = nil
	e.root = ""
	e.checkOnly = false
	e.locating = false
	e.pointers = e.pointers[:0]
	// Drop the references to the last value's keys (the stacks are empty
	// again, but their arrays still hold them).
	clear(e.keys[:cap(e.keys)])
	clear(e.path[:cap(e.path)])
	e.path = e.path[:0]
	e.ancestors = e.ancestors[:0]
	e.keys = e.keys[:0]
	encoders.Put(e)
}

// Check reports whether v is a JSON value this package can encode, with an
// error naming the offending path (NaN, infinities, functions, channels,
// cycles).
func Check(v any, root string) error { return CheckMember(v, root, 0) }

// CheckMember is Check of v as the value of an object member depth
// levels down, where the nesting limit counts from the whole document.
func CheckMember(v any, root string, depth int) error {
	e := getEncoder(Canonical, root)
	defer putEncoder(e)
	e.checkOnly = true
	return e.value(v, depth)
}

type encoder struct {
	root      string
	path      []pathElem
	buf       []byte
	st        Style
	checkOnly bool
	// locating is set while locate walks a struct or map encoding/json
	// refused: members are checked one by one, not marshalled.
	locating  bool
	ancestors []container
	// pointers are those being followed, each a level of the walk but
	// not of the JSON: they count towards the nesting limit, not towards
	// the depth that indents the output.
	pointers []pointerKey
	// keys is a stack of the sorted keys of the objects being encoded:
	// each object pushes its keys and pops them when done.
	keys []string
}

// MaxIntDigits is the most decimal digits of an integer this package
// encodes: CPython (3.11, and 3.10.7 on) converts no longer integer to or
// from text (int_max_str_digits), so json.dumps refuses it and json.loads
// of a document holding one raises. Refused like NaN, so that Python can
// always read what we write. Numbers with a fraction or an exponent are
// floats to Python, and not limited.
const MaxIntDigits = 4300

// intDigits is the number of digits of an integer literal (sign left
// out), 0 for a literal with a fraction or an exponent.
func intDigits(lit string) int {
	if strings.ContainsAny(lit, ".eE") {
		return 0
	}
	return len(strings.TrimPrefix(lit, "-"))
}

// MaxDepth is how deep values nest in a document this package encodes:
// a value at depth MaxDepth+1 (the root at 0) is refused, naming its path.
const MaxDepth = maxDepth

// maxDepth keeps every document written readable by Python, which shares
// the data: CPython's json.loads (and json.dumps) raise RecursionError
// (uncaught by its stores) near the interpreter's recursion limit, 1000
// frames less those already on the stack (a runner's or a web server's
// call chain, a few dozen; the pure-Python indent encoder of run files
// takes a frame per level). 900 leaves that room.
const maxDepth = 900

// maxDecodeDepth is how deep a document the decoder reads: more than
// maxDepth, so a document another writer nested deeper still loads.
const maxDecodeDepth = 10000

// pathElem is one step of the key path of the value being encoded. The
// encoder keeps a stack of them and formats it only when an error needs
// it, so encoding a valid value allocates no path strings.
type pathElem struct {
	key   string
	index int
	isKey bool
}

func (e *encoder) pathString() string {
	var b strings.Builder
	b.WriteString(e.root)
	for _, p := range e.path {
		if p.isKey {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p.key)
		} else {
			b.WriteString("[" + strconv.Itoa(p.index) + "]")
		}
	}
	return b.String()
}

func (e *encoder) value(v any, depth int) error {
	if depth+len(e.pointers) > maxDepth {
		// Any value, as the decoder counts: a scalar or an empty container
		// one level past the limit would be written and then unreadable.
		return &Error{Path: e.pathString(), Reason: "nesting too deep"}
	}
	switch x := v.(type) {
	case nil:
		e.raw("null")
	case bool:
		if x {
			e.raw("true")
		} else {
			e.raw("false")
		}
	case string:
		if !e.checkOnly {
			e.buf = AppendString(e.buf, x, e.st.ASCII)
		}
	case json.Number:
		if !validNumber(string(x)) {
			return &Error{Path: e.pathString(), Reason: fmt.Sprintf("invalid number literal %q", string(x))}
		}
		if len(x) > MaxIntDigits {
			if n := intDigits(string(x)); n > MaxIntDigits {
				return &Error{Path: e.pathString(), Reason: fmt.Sprintf("integer of %d digits: Python reads and writes at most %d", n, MaxIntDigits)}
			}
		}
		if e.st.PyNumbers && !e.checkOnly {
			// What Python writes for the number it parses: json.dumps of
			// json.loads. A literal Python did not write itself (1e-7 from
			// another writer, 1E5, 1.50, -0) is re-encoded as Python does.
			e.buf = appendPyNumber(e.buf, string(x))
			return nil
		}
		e.raw(string(x))
	case float64:
		if (math.IsNaN(x) || math.IsInf(x, 0)) && !e.st.AllowNaN {
			return &Error{Path: e.pathString(), Reason: fmt.Sprintf("float %v is not allowed", x)}
		}
		if !e.checkOnly {
			e.buf = AppendFloat(e.buf, x)
		}
	case float32:
		return e.value(float32Value(float64(x)), depth)
	case int:
		e.int(int64(x))
	case int64:
		e.int(x)
	case int32:
		e.int(int64(x))
	case int16:
		e.int(int64(x))
	case int8:
		e.int(int64(x))
	case uint:
		e.uint(uint64(x))
	case uint64:
		e.uint(x)
	case uint32:
		e.uint(uint64(x))
	case uint16:
		e.uint(uint64(x))
	case uint8:
		e.uint(uint64(x))
	case map[string]any:
		return e.object(x, depth)
	case Ordered:
		return e.ordered(x, depth)
	case []any:
		return e.array(x, depth)
	case json.RawMessage:
		t, err := Decode(x)
		if err != nil {
			return &Error{Path: e.pathString(), Reason: "invalid raw JSON: " + err.Error()}
		}
		return e.value(t, depth)
	default:
		return e.foreign(v, depth)
	}
	return nil
}

func (e *encoder) raw(s string) {
	if !e.checkOnly {
		e.buf = append(e.buf, s...)
	}
}

func (e *encoder) int(i int64) {
	if !e.checkOnly {
		e.buf = strconv.AppendInt(e.buf, i, 10)
	}
}

func (e *encoder) uint(u uint64) {
	if !e.checkOnly {
		e.buf = strconv.AppendUint(e.buf, u, 10)
	}
}

// enter pushes the container id on the ancestors, refusing it when it is
// one of them: a cycle.
func (e *encoder) enter(id container, depth int) error {
	if depth+len(e.pointers) > maxDepth {
		return &Error{Path: e.pathString(), Reason: "nesting too deep"}
	}
	if slices.Contains(e.ancestors, id) {
		return &Error{Path: e.pathString(), Reason: "cycle (the value contains itself)"}
	}
	e.ancestors = append(e.ancestors, id)
	return nil
}

func (e *encoder) leave() { e.ancestors = e.ancestors[:len(e.ancestors)-1] }

// pointerKey is a pointer being followed: its address and type, as the
// address of an array or struct is also that of its first element, which
// is a different value.
type pointerKey struct {
	p uintptr
	t reflect.Type
}

// pointer encodes what the non-nil pointer rv points to. That is a copy
// at every level (an array, an interface holding the pointer itself), so
// the cycle check must see the pointer, and the nesting limit count it,
// or var x any; x = &x recurses until the stack overflows.
func (e *encoder) pointer(rv reflect.Value, depth int) error {
	k := pointerKey{rv.Pointer(), rv.Type()}
	if depth+len(e.pointers)+1 > maxDepth {
		return &Error{Path: e.pathString(), Reason: "nesting too deep"}
	}
	if slices.Contains(e.pointers, k) {
		return &Error{Path: e.pathString(), Reason: "cycle (the value contains itself)"}
	}
	e.pointers = append(e.pointers, k)
	defer func() { e.pointers = e.pointers[:len(e.pointers)-1] }()
	return e.value(rv.Elem().Interface(), depth)
}

func (e *encoder) newline(depth int) {
	if e.st.Indent > 0 && !e.checkOnly {
		e.buf = append(e.buf, '\n')
		for i := 0; i < depth*e.st.Indent; i++ {
			e.buf = append(e.buf, ' ')
		}
	}
}

func (e *encoder) itemSep() {
	if e.checkOnly {
		return
	}
	if e.st.Compact || e.st.Indent > 0 {
		e.buf = append(e.buf, ',')
	} else {
		e.buf = append(e.buf, ", "...)
	}
}

func (e *encoder) keySep() {
	if e.checkOnly {
		return
	}
	if e.st.Compact {
		e.buf = append(e.buf, ':')
	} else {
		e.buf = append(e.buf, ": "...)
	}
}

func (e *encoder) object(m map[string]any, depth int) error {
	if m == nil {
		// A nil map is an absent object: Python writes {} for empty dict
		// fields, so do the same rather than null.
		e.raw("{}")
		return nil
	}
	if len(m) == 0 {
		e.raw("{}")
		return nil
	}
	if err := e.enter(mapID(m), depth); err != nil {
		return err
	}
	defer e.leave()
	if err := e.checkRepairedKeys(m); err != nil {
		return err
	}
	if e.checkOnly {
		for k, v := range m {
			e.path = append(e.path, pathElem{key: k, isKey: true})
			if err := e.value(v, depth+1); err != nil {
				return err
			}
			e.path = e.path[:len(e.path)-1]
		}
		return nil
	}
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[base:]
	slices.Sort(keys)
	defer func() { e.keys = e.keys[:base] }()
	e.raw("{")
	for i, k := range keys {
		if i > 0 {
			e.itemSep()
		}
		e.newline(depth + 1)
		if !e.checkOnly {
			e.buf = AppendString(e.buf, k, e.st.ASCII)
		}
		e.keySep()
		e.path = append(e.path, pathElem{key: k, isKey: true})
		if err := e.value(m[k], depth+1); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
	}
	e.newline(depth)
	e.raw("}")
	return nil
}

// checkRepairedKeys refuses an object two of whose keys are written the
// same once the bytes of a key that are not UTF-8 are replaced by U+FFFD
// ("k\xff" and "k\xfe", or "k\xff" and "k\ufffd"): the document would
// hold one member twice, and a reader keeps one value, the other lost
// without a word. Keys are UTF-8 almost always, which costs one check each.
func (e *encoder) checkRepairedKeys(m map[string]any) error {
	var repaired map[string]string // written form -> key, of the keys repaired
	for k := range m {
		if utf8.ValidString(k) {
			continue
		}
		w := repairUTF8(k)
		other, ok := repaired[w]
		if _, valid := m[w]; valid {
			other, ok = w, true
		}
		if ok {
			return &Error{Path: e.pathString(), Reason: fmt.Sprintf("keys %q and %q are the same key once their bytes that are not UTF-8 are replaced by U+FFFD", other, k)}
		}
		if repaired == nil {
			repaired = map[string]string{}
		}
		repaired[w] = k
	}
	return nil
}

// repairUTF8 is s as AppendString writes it: each byte that does not
// start a valid UTF-8 sequence replaced by U+FFFD.
func repairUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func (e *encoder) ordered(o Ordered, depth int) error {
	if len(o) == 0 {
		e.raw("{}")
		return nil
	}
	// A member may hold the object itself (a slice, like []any); a
	// shorter prefix of it is another object.
	if err := e.enter(container{reflect.ValueOf(o).Pointer(), len(o)}, depth); err != nil {
		return err
	}
	defer e.leave()
	if e.st.SortKeys && !slices.IsSortedFunc(o, func(a, b KV) int { return strings.Compare(a.Key, b.Key) }) {
		o = slices.Clone(o)
		slices.SortFunc(o, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	}
	e.raw("{")
	for i, kv := range o {
		if i > 0 {
			e.itemSep()
		}
		e.newline(depth + 1)
		if !e.checkOnly {
			e.buf = AppendString(e.buf, kv.Key, e.st.ASCII)
		}
		e.keySep()
		e.path = append(e.path, pathElem{key: kv.Key, isKey: true})
		if err := e.value(kv.Value, depth+1); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
	}
	e.newline(depth)
	e.raw("}")
	return nil
}

func (e *encoder) array(a []any, depth int) error {
	if len(a) == 0 {
		e.raw("[]")
		return nil
	}
	if err := e.enter(sliceID(a), depth); err != nil {
		return err
	}
	defer e.leave()
	e.raw("[")
	for i, v := range a {
		if i > 0 {
			e.itemSep()
		}
		e.newline(depth + 1)
		e.path = append(e.path, pathElem{index: i})
		if err := e.value(v, depth+1); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
	}
	e.newline(depth)
	e.raw("]")
	return nil
}

// appendPyNumber appends what Python's json.dumps writes for the number
// json.loads reads from the valid literal lit: an integer as its digits
// ("-0" as 0), any other literal as the repr of the float it parses to
// (Infinity past the float range, 0.0 below it).
func appendPyNumber(b []byte, lit string) []byte {
	switch lit {
	case "NaN", "Infinity", "-Infinity":
		return append(b, lit...)
	case "-0":
		return append(b, '0')
	}
	if !strings.ContainsAny(lit, ".eE") {
		return append(b, lit...)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return append(b, lit...)
	}
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return AppendFloat(b, f)
}

// foreign handles Go values outside the generic tree, after refusing the
// kinds that can never be JSON: marshalers and structs through
// encoding/json, typed numbers, slices and maps element by element.
func (e *encoder) foreign(v any, depth int) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return &Error{Path: e.pathString(), Reason: fmt.Sprintf("a Go %s cannot be stored", rv.Kind())}
	case reflect.Pointer:
		if rv.IsNil() {
			e.raw("null")
			return nil
		}
		if !marshals(v) { // a method on the pointer (*big.Int) is lost past it
			if noJSONForm(rv.Type().Elem()) {
				return e.noFormError(v)
			}
			return e.pointer(rv, depth)
		}
	case reflect.Struct:
		if !marshals(v) && noJSONForm(rv.Type()) {
			return e.noFormError(v)
		}
	}
	if marshals(v) {
		// The type says how it is written: encoding/json honours that.
		return e.viaEncodingJSON(v, depth)
	}
	switch rv.Kind() {
	case reflect.Float64:
		return e.value(rv.Float(), depth)
	case reflect.Float32:
		return e.value(float32Value(rv.Float()), depth)
	case reflect.Slice, reflect.Array:
		// Elements one by one: encoding/json would spell a float 1.0 as
		// 1, an int for every reader. Bytes stay base64, as it writes them.
		if rv.Type().Elem().Kind() != reflect.Uint8 && (rv.Kind() == reflect.Array || !rv.IsNil()) {
			if rv.Kind() == reflect.Slice && rv.Len() > 0 {
				// The copy below is new at every level: the cycle check
				// must see the caller's slice.
				if err := e.enter(container{rv.Pointer(), rv.Len()}, depth); err != nil {
					return err
				}
				defer e.leave()
			}
			items := make([]any, rv.Len())
			for i := range items {
				items[i] = rv.Index(i).Interface()
			}
			return e.value(items, depth)
		}
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String && !rv.IsNil() {
			if err := e.enter(container{rv.Pointer(), -1}, depth); err != nil { // as for slices
				return err
			}
			defer e.leave()
			members := make(map[string]any, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				members[it.Key().String()] = it.Value().Interface()
			}
			return e.value(members, depth)
		}
	}
	return e.viaEncodingJSON(v, depth)
}

// marshals reports whether v's type says how encoding/json writes it.
func marshals(v any) bool {
	switch v.(type) {
	case json.Marshaler, encoding.TextMarshaler:
		return true
	}
	return false
}

// viaEncodingJSON encodes v through encoding/json (structs, marshalers),
// then as the value that gives. encoding/json says neither where a bad
// value sits in a struct or a map it walks nor that it wrote {} for a
// member with no JSON form, so such a container is then walked member by
// member (locate) to report the bad member's own path. A value that
// encodes fine with no empty object in it is not walked.
func (e *encoder) viaEncodingJSON(v any, depth int) error {
	rv := reflect.ValueOf(v)
	walkable := !marshals(v) && (rv.Kind() == reflect.Struct || rv.Kind() == reflect.Map)
	if walkable && e.locating {
		return e.members(rv, depth)
	}
	b, err := json.Marshal(v)
	if err != nil {
		if walkable {
			if lerr := e.locate(rv, depth); lerr != nil {
				return lerr
			}
		}
		return &Error{Path: e.pathString(), Reason: fmt.Sprintf("%T: %v", v, err)}
	}
	if walkable && bytes.Contains(b, []byte("{}")) {
		// Maybe a member with no JSON form written as {} (or only an
		// empty map or string): walk to tell.
		if lerr := e.locate(rv, depth); lerr != nil {
			return lerr
		}
	}
	t, err := Decode(b)
	if err != nil {
		return &Error{Path: e.pathString(), Reason: fmt.Sprintf("%T: %v", v, err)}
	}
	return e.value(t, depth)
}

// float32Value is the float64 a float32 spells: 0.1, not the
// 0.10000000149011612 a plain conversion gives (what encoding/json writes).
func float32Value(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	return v
}

// SortedKeys returns the keys of m in code-point order (the order of
// Python's sort_keys for str keys).
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal with Python's escapes.
// With ascii, every non-ASCII code point is written as \uXXXX (lower-case
// hex, surrogate pairs above U+FFFF). Invalid UTF-8 is written as U+FFFD.
func AppendString(buf []byte, s string, ascii bool) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// The ASCII style keeps only ' '..'~' raw, as Python's
			// ensure_ascii encoder: DEL (0x7f) is escaped there.
			if c >= 0x20 && c != '"' && c != '\\' && (c != 0x7f || !ascii) {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"':
				buf = append(buf, '\\', '"')
			case '\\':
				buf = append(buf, '\\', '\\')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			if ascii {
				buf = append(buf, `\ufffd`...)
			} else {
				buf = append(buf, "\uFFFD"...)
			}
			i++
			start = i
			continue
		}
		if ascii {
			buf = append(buf, s[start:i]...)
			if r > 0xFFFF {
				r -= 0x10000
				buf = appendU16(buf, 0xD800+(r>>10))
				buf = appendU16(buf, 0xDC00+(r&0x3FF))
			} else {
				buf = appendU16(buf, r)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

func appendU16(buf []byte, r rune) []byte {
	return append(buf, '\\', 'u', hexDigits[(r>>12)&0xf], hexDigits[(r>>8)&0xf], hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
}

// AppendFloat appends f as Python's repr(float) writes it.
func AppendFloat(buf []byte, f float64) []byte {
	return append(buf, FormatFloat(f)...)
}

// FormatFloat returns Python's repr of a float: the shortest digits that
// round-trip, with ".0" on integral values and exponent form when the
// decimal exponent is below -4 or at least 16.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	// 'e' with -1 precision yields the shortest round-trip digits.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	ePos := strings.IndexByte(s, 'e')
	mant, expStr := s[:ePos], s[ePos+1:]
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if exp < -4 || exp >= 16 {
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
		return b.String()
	}
	if exp < 0 {
		b.WriteString("0.")
		for i := 0; i < -exp-1; i++ {
			b.WriteByte('0')
		}
		b.WriteString(digits)
		return b.String()
	}
	if len(digits) <= exp+1 {
		b.WriteString(digits)
		for i := len(digits); i < exp+1; i++ {
			b.WriteByte('0')
		}
		b.WriteString(".0")
		return b.String()
	}
	b.WriteString(digits[:exp+1])
	b.WriteByte('.')
	b.WriteString(digits[exp+1:])
	return b.String()
}

// encodableNumber reports whether the encoder writes the literal s: a
// valid number that, if an integer, has at most MaxIntDigits digits.
func encodableNumber(s string) bool {
	return validNumber(s) && (len(s) <= MaxIntDigits || intDigits(s) <= MaxIntDigits)
}

func validNumber(s string) bool {
	if s == "" {
		return false
	}
	// Python may write these literals; keep them when round-tripping.
	switch s {
	case "NaN", "Infinity", "-Infinity":
		return true
	}
	i := 0
	if s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}

// KV is one member of an Ordered object.
type KV struct {
	Key   string
	Value any
}

// Ordered is an object whose members are written in the given order (as
// Python writes a dataclass), or sorted when the style sorts keys.
type Ordered []KV

// buffers recycles the byte slices that callers encode JSON texts into
// and drop within a call (a store's run files, ledger lines, SQL texts).
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// GetBuffer returns an empty pooled buffer to Append into; hand it back,
// grown, with PutBuffer once nothing refers to its bytes.
func GetBuffer() *[]byte { return buffers.Get().(*[]byte) }

// PutBuffer returns b to the pool (a buffer grown past 1 MB is let go).
func PutBuffer(b *[]byte) {
	if cap(*b) > 1<<20 {
		return
	}
	*b = (*b)[:0]
	buffers.Put(b)
}
