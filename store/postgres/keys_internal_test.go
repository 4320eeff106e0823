package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// keyText is reversible over valid UTF-8 (it maps each byte that is not
// UTF-8 to U+FFFD first, as PostgreSQL's text needs: idText is the
// injective form), leaves strings without \x00 and \x01 as they are,
// never yields a NUL, and keeps byte order (the key columns collate "C",
// and listings order by them).
func FuzzKeyText(f *testing.F) {
	for _, s := range []string{"", "run-1", "\x00", "\x01", "\x01\x01", "a\x00b", "\x00\x00\x01\x02", "é\x00", "\x8c"} {
		f.Add(s, s+"\x00")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := keyText(a), keyText(b)
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			a, b = pyjson.ToValidUTF8(a), pyjson.ToValidUTF8(b)
			if ka != keyText(a) || kb != keyText(b) {
				t.Fatalf("keyText of %q, %q is not keyText of their bytes replaced by U+FFFD", a, b)
			}
		}
		if got := keyTextOf(ka); got != a {
			t.Fatalf("keyTextOf(keyText(%q)) = %q", a, got)
		}
		if strings.IndexByte(ka, 0) >= 0 {
			t.Fatalf("keyText(%q) = %q holds a NUL", a, ka)
		}
		if !strings.ContainsAny(a, "\x00\x01") && ka != a {
			t.Fatalf("keyText(%q) = %q; want it unchanged", a, ka)
		}
		if c, kc := strings.Compare(a, b), strings.Compare(ka, kb); c != kc {
			t.Fatalf("order of %q, %q is %d; of their key texts %d", a, b, c, kc)
		}
	})
}

// idText is reversible and injective (also over bytes that are not
// UTF-8, which keyText maps to U+FFFD), always valid UTF-8 without a NUL
// (PostgreSQL's text), and keyText for valid strings, so that rows
// written before it read the same.
func FuzzIDText(f *testing.F) {
	for _, s := range []string{"", "runner-1", "runner-\xff", "runner-\xfe", "\x01\x03ff", "\x00\xff\x01", "é\xc3", "\uFFFD"} {
		f.Add(s, s+"\xff")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := idText(a), idText(b)
		if got := idTextOf(ka); got != a {
			t.Fatalf("idTextOf(idText(%q)) = %q", a, got)
		}
		if (a == b) != (ka == kb) {
			t.Fatalf("idText(%q) = %q, idText(%q) = %q", a, ka, b, kb)
		}
		if !utf8.ValidString(ka) || strings.IndexByte(ka, 0) >= 0 {
			t.Fatalf("idText(%q) = %q: not valid UTF-8, or holds a NUL", a, ka)
		}
		if utf8.ValidString(a) && ka != keyText(a) {
			t.Fatalf("idText(%q) = %q; want keyText's %q", a, ka, keyText(a))
		}
	})
}
