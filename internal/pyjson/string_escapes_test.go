package pyjson

import (
	"testing"
)

// AppendString with ascii writes every non-ASCII code point as \uXXXX;
// invalid UTF-8 becomes U+FFFD, which in the ASCII style (idempotency key
// text) must be the escape \ufffd, not the raw three bytes.
func TestAppendStringASCIIEscapesInvalidUTF8(t *testing.T) {
	t.Parallel()
	got := string(AppendString(nil, "a\xffb", true))
	if got != `"a\ufffdb"` {
		t.Errorf("AppendString(ascii) of invalid UTF-8 = %q; want %q", got, `"a\ufffdb"`)
	}
	b, err := Marshal(map[string]any{"k": "x\xfe"}, CanonicalASCII)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b {
		if c >= 0x80 {
			t.Fatalf("CanonicalASCII text holds non-ASCII bytes: %q", b)
		}
	}
	if got := string(AppendString(nil, "a\xffb", false)); got != "\"a\uFFFDb\"" {
		t.Errorf("AppendString of invalid UTF-8 = %q; want U+FFFD raw", got)
	}
}

// Python's json.dumps writes \b and \f with their short escapes (its
// ESCAPE_DCT), other control characters as \u00XX, in every style: a
// record holding them hashes as Python hashes it only with the same
// spelling.
func TestControlCharactersUsePythonsShortEscapes(t *testing.T) {
	t.Parallel()
	for _, st := range []Style{Line, Canonical, CanonicalASCII} {
		b, err := Marshal("a\b\f\x1f", st)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"a\b\f\u001f"`; string(b) != want {
			t.Errorf("style %+v: Marshal(\"a\\b\\f\\x1f\") = %s; want %s (json.dumps)", st, b, want)
		}
	}
}
