package pyval

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DumpOptions configures Dumps, mirroring Python's json.dumps arguments
// with ensure_ascii=False.
type DumpOptions struct {
	// Indent > 0 pretty-prints with that many spaces per level; 0 or less
	// writes a single line.
	Indent int
	// ItemSep separates items (Python default ", "; "," when Indent > 0).
	ItemSep string
	// KeySep separates keys from values (Python default ": ").
	KeySep string
}

// Compact are the separators of json.dumps(separators=(",", ":")).
var Compact = DumpOptions{ItemSep: ",", KeySep: ":"}

// Spaced are the default single-line separators of json.dumps.
var Spaced = DumpOptions{ItemSep: ", ", KeySep: ": "}

// Dumps renders v as JSON text the way Python's json.dumps does with
// ensure_ascii=False: floats keep their Python repr (1.0, 1e-05), NaN and
// infinities are written NaN/Infinity/-Infinity, non-ASCII text is kept.
// Object keys are always sorted (Go maps have no insertion order).
func Dumps(v any, opts DumpOptions) (string, error) {
	if opts.ItemSep == "" {
		opts.ItemSep = ", "
		if opts.Indent > 0 {
			opts.ItemSep = ","
		}
	}
	if opts.KeySep == "" {
		opts.KeySep = ": "
	}
	var b strings.Builder
	if err := dumpValue(&b, v, opts, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func dumpValue(b *strings.Builder, v any, o DumpOptions, depth int) error {
	if depth > 1000 {
		return fmt.Errorf("json dumps: nesting too deep")
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeJSONString(b, x)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(o.ItemSep)
			}
			newline(b, o, depth+1)
			if err := dumpValue(b, e, o, depth+1); err != nil {
				return err
			}
		}
		newline(b, o, depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range SortedKeys(x) {
			if i > 0 {
				b.WriteString(o.ItemSep)
			}
			newline(b, o, depth+1)
			writeJSONString(b, k)
			b.WriteString(o.KeySep)
			if err := dumpValue(b, x[k], o, depth+1); err != nil {
				return err
			}
		}
		newline(b, o, depth)
		b.WriteByte('}')
	case []string:
		arr := make([]any, len(x))
		for i, s := range x {
			arr[i] = s
		}
		return dumpValue(b, arr, o, depth)
	default:
		n := asNumber(v)
		switch {
		case n.big:
			b.WriteString(n.digits)
		case n.kind == intNumber:
			b.WriteString(strconv.FormatInt(n.i, 10))
		case n.kind == floatNumber:
			b.WriteString(jsonFloat(n.f))
		default:
			return fmt.Errorf("Object of type %T is not JSON serializable", v)
		}
	}
	return nil
}

func newline(b *strings.Builder, o DumpOptions, depth int) {
	if o.Indent <= 0 {
		return
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", o.Indent*depth))
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return FormatFloat(f)
}

// writeJSONString writes s as a JSON string literal the way Python does
// with ensure_ascii=False.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
