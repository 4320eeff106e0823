package postgres

import (
	"strings"
	"testing"
)

// keyText is reversible, leaves strings without \x00 and \x01 as they
// are, never yields a NUL, and keeps byte order (the key columns collate
// "C", and listings order by them).
func FuzzKeyText(f *testing.F) {
	for _, s := range []string{"", "run-1", "\x00", "\x01", "\x01\x01", "a\x00b", "\x00\x00\x01\x02", "é\x00"} {
		f.Add(s, s+"\x00")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := keyText(a), keyText(b)
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
