package pyjson

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Decode parses one JSON value into the generic tree: objects become
// map[string]any, arrays []any, numbers json.Number (the literal kept, so
// 1 and 1.0 stay distinct), plus string, bool and nil. Python's NaN,
// Infinity and -Infinity literals are accepted as numbers. Trailing
// non-space data is an error.
func Decode(data []byte) (any, error) {
	d := newDecoder(data)
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// DecodeObject is Decode for a value that must be a JSON object.
func DecodeObject(data []byte) (map[string]any, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", KindOf(v))
	}
	return m, nil
}

// DecodeStream parses consecutive JSON values from data (whitespace
// between them allowed) and returns them all (a caller wanting records
// keeps the objects). It is how a JSONL line written by two racing
// writers is recovered.
func DecodeStream(data []byte) ([]any, error) {
	d := newDecoder(data)
	var out []any
	for {
		d.skipSpace()
		if d.pos >= len(d.data) {
			return out, nil
		}
		v, err := d.value(0)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// KindOf names the JSON kind of a generic value, for error messages.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, float32, int, int64, int32, uint, uint64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// SyntaxError is a JSON parse error with its byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

type decoder struct {
	data []byte
	// src is data as one string: strings and number literals without
	// escapes are slices of it, so each costs no copy of its own (they
	// keep the document's text alive, which holds little else).
	src string
	pos int
	// members is a stack of decoded object members: an object's members
	// are gathered here, then the map is made at its final size.
	members []member
}

type member struct {
	key   string
	value any
}

func newDecoder(data []byte) decoder {
	return decoder{data: data, src: string(data)}
}

func (d *decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDecodeDepth {
		return nil, d.errorf("nesting too deep")
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == 'N':
		return json.Number("NaN"), d.literal("NaN")
	case c == 'I':
		return json.Number("Infinity"), d.literal("Infinity")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return nil, d.errorf("unexpected character %q", c)
	}
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.errorf("invalid literal")
	}
	d.pos += len(word)
	return nil
}

func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
		if d.pos < len(d.data) && d.data[d.pos] == 'I' {
			if err := d.literal("Infinity"); err != nil {
				return nil, err
			}
			return json.Number("-Infinity"), nil
		}
	}
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			d.pos++
			continue
		}
		break
	}
	lit := d.src[start:d.pos]
	if v, ok := smallNumber(lit); ok {
		return v, nil
	}
	if !validNumber(lit) {
		d.pos = start
		return nil, d.errorf("invalid number %q", lit)
	}
	return json.Number(lit), nil
}

// smallNumbers holds json.Number("0") … json.Number("999") already boxed:
// a decoded document is full of small integers (counters, limits,
// percentages), and boxing each into an any is an allocation.
var smallNumbers = func() (t [1000]any) {
	for i := range t {
		t[i] = json.Number(strconv.Itoa(i))
	}
	return t
}()

// smallNumber returns the boxed json.Number of lit when lit is an integer
// literal from 0 to 999 as the encoder writes it (no sign, no leading
// zero).
func smallNumber(lit string) (any, bool) {
	if len(lit) == 0 || len(lit) > 3 || (lit[0] == '0' && len(lit) > 1) {
		return nil, false
	}
	n := 0
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c < '0' || c > '9' {
			return nil, false
		}
		n = n*10 + int(c-'0')
	}
	return smallNumbers[n], true
}

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // {
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return map[string]any{}, nil
	}
	base := len(d.members)
	defer func() { d.members = d.members[:base] }()
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("expected an object key")
		}
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.members = append(d.members, member{k, v})
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input in object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			ms := d.members[base:]
			m := make(map[string]any, len(ms))
			for _, mb := range ms {
				m[mb.key] = mb.value
			}
			return m, nil
		default:
			return nil, d.errorf("expected ',' or '}' in object")
		}
	}
}

// key decodes an object key, reusing the string of a well-known key so
// decoding records and run states does not allocate their keys.
func (d *decoder) key() (string, error) {
	start := d.pos + 1
	for i := start; i < len(d.data) && i-start <= maxInternLen; i++ {
		c := d.data[i]
		if c == '"' {
			if k, ok := internedKeys[string(d.data[start:i])]; ok {
				d.pos = i + 1
				return k, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	return d.string()
}

func (d *decoder) array(depth int) (any, error) {
	d.pos++ // [
	a := make([]any, 0, 4)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, nil
	}
	for {
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input in array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return a, nil
		default:
			return nil, d.errorf("expected ',' or ']' in array")
		}
	}
}

func (d *decoder) string() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			if !utf8.ValidString(s) {
				return ToValidUTF8(s), nil
			}
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.errorf("control character in string")
		}
		d.pos++
	}
	buf := make([]byte, 0, d.pos-start+16)
	buf = append(buf, d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			s := string(buf)
			if !utf8.ValidString(s) {
				s = ToValidUTF8(s)
			}
			return s, nil
		case c == '\\':
			d.pos++
			if d.pos >= len(d.data) {
				return "", d.errorf("unexpected end of input in escape")
			}
			e := d.data[d.pos]
			d.pos++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := d.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					// A pair, if the next escape completes it; a lone
					// surrogate (legal in Python) becomes U+FFFD.
					if d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
						save := d.pos
						d.pos += 2
						r2, err := d.hex4()
						if err == nil {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								continue
							}
						}
						d.pos = save
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.errorf("invalid escape \\%c", e)
			}
		case c < 0x20:
			return "", d.errorf("control character in string")
		default:
			buf = append(buf, c)
			d.pos++
		}
	}
	return "", d.errorf("unterminated string")
}

func (d *decoder) hex4() (rune, error) {
	if len(d.data)-d.pos < 4 {
		return 0, d.errorf("short \\u escape")
	}
	n, err := strconv.ParseUint(string(d.data[d.pos:d.pos+4]), 16, 32)
	if err != nil {
		return 0, d.errorf("invalid \\u escape")
	}
	d.pos += 4
	return rune(n), nil
}

// ToValidUTF8 is s with U+FFFD for each byte that is not part of a valid
// UTF-8 sequence: the text every store reads back for s, since the
// encoder writes such a byte so (strings.ToValidUTF8 would put one
// U+FFFD for a whole run of them).
func ToValidUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const maxInternLen = 32

// internedKeys are the keys of the runtime's own JSON objects.
var internedKeys = func() map[string]string {
	keys := []string{
		// RunState, WaitState, Effect
		"run_id", "workflow_id", "status", "current_node", "vars", "waiting", "output", "error",
		"created_at", "updated_at", "actor_id", "session_id", "parent_run_id", "reason", "wait_key",
		"until", "resume_to_node", "result_key", "prompt", "choices", "allow_free_text", "details",
		"type", "payload",
		// StepRecord
		"step_id", "node_id", "effect", "result", "started_at", "ended_at", "attempt",
		"idempotency_key", "prev_hash", "record_hash", "signature",
		// common vars and results
		"_limits", "_runtime", "_temp", "context", "scratchpad", "messages", "node_traces",
		"node_outputs", "effects", "prev_node_id", "prev_next_node", "effect_seq", "completed",
		"name", "scope", "text", "emitted", "steps", "ts", "duration_ms", "reused_prior_result",
		"wait", "value", "success", "mode", "results", "call_id", "content", "role", "metadata",
		"max_iterations", "current_iteration", "max_tokens", "max_output_tokens", "max_input_tokens",
		"estimated_tokens_used", "max_history_messages", "warn_iterations_pct", "warn_tokens_pct",
		"resumed", "via", "wait_reason", "sub_run_id", "response", "answer",
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = k
	}
	return m
}()

// DecodeObjectFunc parses a JSON object and calls fn with each member in
// document order, without building the object itself: decoders of known
// shapes (ledger records, run states) fill their structs directly.
func DecodeObjectFunc(data []byte, fn func(key string, value any) error) error {
	d := newDecoder(data)
	return d.objectFunc(fn)
}

// DecodeObjectFuncString is DecodeObjectFunc reading a string, which it
// does not copy: the decoded strings are slices of it.
func DecodeObjectFuncString(s string, fn func(key string, value any) error) error {
	// The decoder only reads data, so it may view the string's bytes.
	d := decoder{data: unsafe.Slice(unsafe.StringData(s), len(s)), src: s}
	return d.objectFunc(fn)
}

func (d *decoder) objectFunc(fn func(key string, value any) error) error {
	d.skipSpace()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		if d.pos >= len(d.data) {
			return d.errorf("unexpected end of input")
		}
		return d.errorf("expected a JSON object")
	}
	d.pos++
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
	} else {
		for {
			d.skipSpace()
			if d.pos >= len(d.data) || d.data[d.pos] != '"' {
				return d.errorf("expected an object key")
			}
			k, err := d.key()
			if err != nil {
				return err
			}
			d.skipSpace()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return d.errorf("expected ':' after object key")
			}
			d.pos++
			d.skipSpace()
			v, err := d.value(1)
			if err != nil {
				return err
			}
			if err := fn(k, v); err != nil {
				return err
			}
			d.skipSpace()
			if d.pos >= len(d.data) {
				return d.errorf("unexpected end of input in object")
			}
			if d.data[d.pos] == '}' {
				d.pos++
				break
			}
			if d.data[d.pos] != ',' {
				return d.errorf("expected ',' or '}' in object")
			}
			d.pos++
		}
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.errorf("unexpected data after the JSON value")
	}
	return nil
}
