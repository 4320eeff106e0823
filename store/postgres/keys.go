package postgres

import (
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// PostgreSQL's text type cannot hold a NUL byte, which a key or an id may
// (a wait key a workflow builds, a session id an API caller gives: JSON
// "\u0000"); the memory, SQLite and JSON stores keep such values. The key
// columns hold keyText(s) instead: NUL becomes \x01\x01 and \x01 becomes
// \x01\x02. Every other string is stored as it is, and byte order, which
// the columns collate by ("C"), is kept. The JSON text columns escape NUL
// themselves (\u0000).

// keyText returns s as a key column holds it. A byte that is not UTF-8
// (a Go host's string; PostgreSQL refuses it) becomes U+FFFD, one per
// byte, as the JSON text of the run or record spells it, so that the
// column holds what a read gives back.
func keyText(s string) string {
	if !utf8.ValidString(s) {
		s = pyjson.ToValidUTF8(s)
	}
	if strings.IndexByte(s, 0) < 0 && strings.IndexByte(s, 1) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString("\x01\x01")
		case 1:
			b.WriteString("\x01\x02")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// keyTextOf returns the value a key column's text t holds. A \x01 not
// followed by \x01 or \x02 (written raw before this escaping) is kept.
func keyTextOf(t string) string {
	if strings.IndexByte(t, 1) < 0 {
		return t
	}
	var b strings.Builder
	b.Grow(len(t))
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == 1 && i+1 < len(t) && (t[i+1] == 1 || t[i+1] == 2) {
			b.WriteByte(t[i+1] - 1)
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// keyTexts maps keyText over ss.
func keyTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = keyText(s)
	}
	return out
}

// nullKey is nullString(keyText(s)).
func nullKey(s string) *string { return nullString(keyText(s)) }

// derefKey is keyTextOf of a nullable key column ("" for NULL).
func derefKey(t *string) string { return keyTextOf(deref(t)) }

// idText returns s as the columns holding ids that no JSON text spells
// (run_claims.owner, command_cursors.consumer_id) hold it: keyText, but
// each byte that is not UTF-8 becomes \x01\x03 and its two hex digits, so
// that owners or consumers differing only in such bytes stay distinct, as
// in the other stores (keyText's U+FFFD would make "runner-\xff" and
// "runner-\xfe" one claim owner). A valid id is stored as keyText stores
// it, as before this encoding.
func idText(s string) string {
	if utf8.ValidString(s) {
		return keyText(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString("\x01\x03")
			b.WriteString(hex.EncodeToString([]byte{s[i]}))
		case r == 0:
			b.WriteString("\x01\x01")
		case r == 1:
			b.WriteString("\x01\x02")
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// idTextOf returns the id an idText column's text t holds.
func idTextOf(t string) string {
	if strings.IndexByte(t, 1) < 0 {
		return t
	}
	var b strings.Builder
	b.Grow(len(t))
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == 1 && i+3 < len(t) && t[i+1] == 3 {
			if v, err := hex.DecodeString(t[i+2 : i+4]); err == nil {
				b.Write(v)
				i += 3
				continue
			}
		}
		if c == 1 && i+1 < len(t) && (t[i+1] == 1 || t[i+1] == 2) {
			b.WriteByte(t[i+1] - 1)
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
