package pyval

import (
	"strings"
	"testing"
)

// \N{NAME} in a str literal decodes as in CPython: names (computed CJK and
// Hangul ones too) match case-insensitively; bytes and raw literals keep
// the escape as written; bad escapes are errors.
func TestParseLiteralNamedEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`'\N{LATIN SMALL LETTER E WITH ACUTE}'`, "é"},
		{`'\N{em dash}x'`, "—x"},
		{`'\N{CJK UNIFIED IDEOGRAPH-4E00}'`, "一"},
		{`'\N{HANGUL SYSLLABLE GA}'`, ""}, // misspelt: an error
		{`'\N{HANGUL SYLLABLE GA}\N{HANGUL SYLLABLE HIH}'`, "가힣"},
		{`r'\N{BULLET}'`, `\N{BULLET}`},
		{`b'\N{BULLET}'`, `b'\\N{BULLET}'`},
	} {
		got, err := ParseLiteral(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseLiteral(%s) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseLiteral(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for in, msg := range map[string]string{
		`'\N{NOPE}'`:                       `unknown Unicode character name in \N{NOPE}`,
		`'\N{}'`:                           `malformed \N character escape`,
		`'\N'`:                             `malformed \N character escape`,
		`'\NBULLET'`:                       `malformed \N character escape`,
		`'\N{BULLET'`:                      `malformed \N character escape`,
		`'\N{CJK UNIFIED IDEOGRAPH-0041}'`: `unknown Unicode character name`,
	} {
		if _, err := ParseLiteral(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLiteral(%s) error = %v, want containing %q", in, err, msg)
		}
	}
}
