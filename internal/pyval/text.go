package pyval

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Len returns the number of Unicode code points in s (Python len(str)).
func Len(s string) int {
	return utf8.RuneCountInString(s)
}

// Slice implements Python's s[start:end] on code points. Negative indexes
// count from the end and out-of-range indexes clamp. A nil end means "to
// the end".
func Slice(s string, start int64, end *int64) string {
	runes := []rune(s)
	n := int64(len(runes))
	clamp := func(i int64) int64 {
		if i < 0 {
			i += n
			if i < 0 {
				i = 0
			}
		}
		if i > n {
			i = n
		}
		return i
	}
	lo := clamp(start)
	hi := n
	if end != nil {
		hi = clamp(*end)
	}
	if hi <= lo {
		return ""
	}
	return string(runes[lo:hi])
}

// Strip implements Python's str.strip(): removes leading and trailing
// Unicode whitespace.
func Strip(s string) string {
	return strings.TrimFunc(s, isPySpace)
}

// RStrip implements Python's str.rstrip(): removes trailing Unicode
// whitespace.
func RStrip(s string) string {
	return strings.TrimRightFunc(s, isPySpace)
}

// isPySpace reports Python's str.isspace for one code point. It adds the
// information separators U+001C..U+001F, which Python treats as whitespace.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Upper implements Python's str.upper(): the full Unicode case mapping,
// with the multi-character special cases (ß → SS, ǰ → J̌, ΐ → Ϊ́, …).
func Upper(s string) string {
	var b strings.Builder
	for _, r := range s {
		if u, ok := specialUpper(r); ok {
			b.WriteString(u)
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// Lower implements Python's str.lower(): simple lower-case mappings plus
// the two language-independent special cases, İ → i̇ and a capital sigma
// ending a word → ς (Unicode's Final_Sigma condition).
func Lower(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the capital sigma at byte i of s ends a word:
// a cased letter before it and none after it, case-ignorable characters
// (marks, apostrophes…) skipped on both sides.
func finalSigma(s string, i int) bool {
	before := strings.TrimRightFunc(s[:i], caseIgnorable)
	r, _ := utf8.DecodeLastRuneInString(before)
	if before == "" || !cased(r) {
		return false
	}
	after := strings.TrimLeftFunc(s[i+len("Σ"):], caseIgnorable)
	r, _ = utf8.DecodeRuneInString(after)
	return after == "" || !cased(r)
}

// cased is Unicode's Cased property.
func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.In(r, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifiers, and the word-internal punctuation of Word_Break
// (MidLetter, MidNumLet, Single_Quote).
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00b7', '\u0387', '\u055f', '\u05f4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// SplitN implements Python's s.split(sep, maxsplit) for a non-empty sep;
// maxsplit < 0 means no limit.
func SplitN(s, sep string, maxsplit int) []string {
	if maxsplit < 0 {
		return strings.Split(s, sep)
	}
	return strings.SplitN(s, sep, maxsplit+1)
}

// Replace implements Python's s.replace(old, new, count); count < 0
// replaces all occurrences.
func Replace(s, old, repl string, count int) string {
	return strings.Replace(s, old, repl, count)
}

// DecodeEscapes replaces the two-character sequences \n, \t and \r with
// the characters they name (the editor stores separators escaped).
func DecodeEscapes(s string) string {
	s = strings.ReplaceAll(s, `\n`, "\n")
	s = strings.ReplaceAll(s, `\t`, "\t")
	return strings.ReplaceAll(s, `\r`, "\r")
}
