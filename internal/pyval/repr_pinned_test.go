package pyval

import (
	"math"
	"testing"
)

// TestQuoteStringEscapesDEL guarantees that repr() escapes DEL (U+007F) as
// \x7f, which Python counts as non-printable.
func TestQuoteStringEscapesDEL(t *testing.T) {
	t.Parallel()
	if got, want := QuoteString("\x7f"), `'\x7f'`; got != want {
		t.Errorf("QuoteString(DEL) = %s, want %s", got, want)
	}
}

// TestASCIIEscapeWidths guarantees Python's ascii(): \xhh up to U+00FF,
// \uhhhh from U+0100.
func TestASCIIEscapeWidths(t *testing.T) {
	t.Parallel()
	if got, want := ASCII("\u0100\u00ff"), `'\u0100\xff'`; got != want {
		t.Errorf("ASCII = %s, want %s", got, want)
	}
}

// TestNormalizeCopiesStringSlices guarantees Normalize's promise that the
// result shares no slice with its input: a []string comes back as a new
// []any.
func TestNormalizeCopiesStringSlices(t *testing.T) {
	t.Parallel()
	in := []string{"a"}
	out := Normalize(in)
	in[0] = "b"
	got, ok := out.([]any)
	if !ok || len(got) != 1 || got[0] != "a" {
		t.Errorf("Normalize([]string{a}) = %#v after the input changed; want []any{\"a\"}", out)
	}
}

// TestLoadsJSONExponentWithoutDigits guarantees that an 'e' with no digits
// after it ends the number where Python's json does, giving its error
// text ("Extra data" at the 'e', or "Expecting ',' delimiter" in an array).
func TestLoadsJSONExponentWithoutDigits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1e":   "Extra data: line 1 column 2 (char 1)",
		"1E+":  "Extra data: line 1 column 2 (char 1)",
		"[1e]": "Expecting ',' delimiter: line 1 column 3 (char 2)",
	} {
		_, err := LoadsJSON(in)
		if err == nil || err.Error() != want {
			t.Errorf("LoadsJSON(%q) error = %v, want %q", in, err, want)
		}
	}
}

// TestGetPathBracketIndexDoesNotReadObjects guarantees that a [n] segment
// only indexes a list: on an object it does not resolve (the reference's
// _get_path returns None for an int token on a dict).
func TestGetPathBracketIndexDoesNotReadObjects(t *testing.T) {
	t.Parallel()
	if v, ok := GetPath(map[string]any{"": "x", "0": "y"}, "[0]"); ok {
		t.Errorf("GetPath({...}, \"[0]\") = %#v, true; want no value", v)
	}
}

// TestDecodeEscapesAllThree guarantees that the escaped separators \n, \t
// and \r are all decoded, as the reference's .replace chain does.
func TestDecodeEscapesAllThree(t *testing.T) {
	t.Parallel()
	if got, want := DecodeEscapes(`a\nb\tc\rd`), "a\nb\tc\rd"; got != want {
		t.Errorf("DecodeEscapes = %q, want %q", got, want)
	}
}

// TestLoadsJSONNegativeInfinity guarantees that json.loads accepts the
// -Infinity literal Python's json.dumps writes.
func TestLoadsJSONNegativeInfinity(t *testing.T) {
	t.Parallel()
	v, err := LoadsJSON("[-Infinity]")
	if err != nil {
		t.Fatalf("LoadsJSON([-Infinity]): %v", err)
	}
	if a, ok := v.([]any); !ok || len(a) != 1 || a[0] != math.Inf(-1) {
		t.Errorf("LoadsJSON([-Infinity]) = %#v, want [-inf]", v)
	}
}

// TestLoadsJSONSurrogateNotFollowedByLowKeepsNextEscape guarantees that a
// high surrogate escape followed by an escape that is not a low surrogate
// leaves that escape to be decoded on its own (Python: "\ud800\u0041" is
// '\ud800A'; the lone surrogate is written U+FFFD here).
func TestLoadsJSONSurrogateNotFollowedByLowKeepsNextEscape(t *testing.T) {
	t.Parallel()
	v, err := LoadsJSON(`"\ud800\u0041"`)
	if err != nil || v != "\ufffdA" {
		t.Errorf(`LoadsJSON("\ud800\u0041") = %q, %v; want "\ufffdA"`, v, err)
	}
}

// TestReprQuotesDictKeysAsStrings guarantees that repr() of a dict writes
// each key as repr() of the string, with its quote choice and escapes.
func TestReprQuotesDictKeysAsStrings(t *testing.T) {
	t.Parallel()
	got := Repr(map[string]any{"it's": int64(1), "a\nb": int64(2)})
	if want := `{'a\nb': 2, "it's": 1}`; got != want {
		t.Errorf("Repr = %s, want %s", got, want)
	}
}

// TestRStripRemovesUnicodeWhitespace guarantees Python's str.rstrip():
// every Unicode whitespace character is removed, the information
// separators U+001C..U+001F included.
func TestRStripRemovesUnicodeWhitespace(t *testing.T) {
	t.Parallel()
	if got := RStrip(" a\u3000\x1c\u00a0"); got != " a" {
		t.Errorf("RStrip = %q, want \" a\"", got)
	}
}

// TestDumpsRefusesNestingPastLimit guarantees that Dumps refuses a value
// nested deeper than its limit with an error (Python's json.dumps raises
// RecursionError there) instead of recursing without bound.
func TestDumpsRefusesNestingPastLimit(t *testing.T) {
	t.Parallel()
	var v any = []any{}
	for range 1100 {
		v = []any{v}
	}
	if _, err := Dumps(v, Compact); err == nil {
		t.Errorf("Dumps of a list nested 1100 deep succeeded; want an error")
	}
}
