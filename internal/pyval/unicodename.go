package pyval

import (
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/unicode/runenames"
)

// lookupCharName finds the code point a \N{name} escape in a Python str
// literal names, as CPython's unicode-escape decoder does: names are
// matched case-insensitively (ASCII letters only) against the Unicode
// character names, including the computed ones "CJK UNIFIED
// IDEOGRAPH-<hex>" and "HANGUL SYLLABLE <jamo>". Named sequences are not
// accepted, as in Python string literals.
//
// Not covered: the formal aliases of NameAliases.txt (\N{NULL},
// \N{BYTE ORDER MARK}, …), which CPython also accepts, and the difference
// between the Unicode version of golang.org/x/text and the interpreter's.
func lookupCharName(name string) (rune, bool) {
	name = asciiUpper(name)
	if hex, ok := strings.CutPrefix(name, "CJK UNIFIED IDEOGRAPH-"); ok {
		if len(hex) != 4 && len(hex) != 5 {
			return 0, false
		}
		n, err := strconv.ParseUint(hex, 16, 32)
		if err != nil || !strings.HasPrefix(runenames.Name(rune(n)), "<CJK Ideograph") {
			return 0, false
		}
		return rune(n), true
	}
	r, ok := charNames()[name]
	return r, ok
}

// charNames maps every named character (and every Hangul syllable) to its
// code point; built once on first use (about 46k entries, some 30 ms).
var charNames = sync.OnceValue(func() map[string]rune {
	m := make(map[string]rune, 46000)
	for r := rune(0); r <= 0x10FFFF; r++ {
		// Ranges (ideographs, surrogates, private use) and controls have
		// placeholder names in angle brackets: they have no name to look up.
		if n := runenames.Name(r); n != "" && n[0] != '<' {
			m[n] = r
		}
	}
	// Hangul syllable names are computed from their jamo (Unicode §3.12).
	lead := strings.Split("G GG N D DD R M B BB S SS  J JJ C K T P H", " ")
	vowel := strings.Split("A AE YA YAE EO E YEO YE O WA WAE OE YO U WEO WE WI YU EU YI I", " ")
	tail := strings.Split(" G GG GS N NJ NH D L LG LM LB LS LT LP LH M B BS S SS NG J C K T P H", " ")
	r := rune(0xAC00)
	for _, l := range lead {
		for _, v := range vowel {
			for _, t := range tail {
				m["HANGUL SYLLABLE "+l+v+t] = r
				r++
			}
		}
	}
	return m
})

// asciiUpper upper-cases ASCII letters only, as CPython compares names.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
