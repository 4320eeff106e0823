package pyval

import (
	"encoding/json"
	"strings"
	"testing"
)

// str.format finds the end of a replacement field as CPython does:
// brackets hide '{', '}', ':' and '!' only in the field name (before the
// first ':' or '!'); in the format spec a '[' is an ordinary character,
// as a fill ("{x:[^5}") or otherwise. Every want is what CPython 3.11's
// template.format(**values) returns; wantErr is a fragment of the
// exception text it raises.
func TestFormatStringFieldSyntaxAsCPython(t *testing.T) {
	t.Parallel()
	big := json.Number("1180591620717411303424") // 2**70
	for _, c := range []struct {
		tmpl          string
		values        map[string]any
		want, wantErr string
	}{
		{"{a:[^5}", map[string]any{"a": int64(1)}, "[[1[[", ""},
		{"{a:[^5}]", map[string]any{"a": int64(1)}, "[[1[[]", ""},
		{"{a!r:[^5}", map[string]any{"a": int64(1)}, "[[1[[", ""},
		{"{a[x]:[^5}", map[string]any{"a": map[string]any{"x": int64(1)}}, "[[1[[", ""},
		{"{a:[<{b}}", map[string]any{"a": int64(1), "b": int64(4)}, "1[[[", ""},
		{"{a:[>5} and {b}", map[string]any{"a": int64(1), "b": int64(2)}, "[[[[1 and 2", ""},
		{"{a!r[}", map[string]any{"a": int64(1)}, "", "expected ':' after conversion specifier"},
		// Brackets of the field name still hide the characters they hold.
		{"{a[}]}", map[string]any{"a": map[string]any{"}": int64(1)}}, "1", ""},
		{"{a[:]}", map[string]any{"a": map[string]any{":": int64(1)}}, "1", ""},
		{"{a:{b[x]}}", map[string]any{"a": int64(1), "b": map[string]any{"x": ">3"}}, "  1", ""},
		// An empty key, a '{' in a field name.
		{"{a[]}", map[string]any{"a": map[string]any{"": int64(1)}}, "", "Empty attribute in format string"},
		{"{a.}", map[string]any{"a": int64(1)}, "", "Empty attribute in format string"},
		{"{a..real}", map[string]any{"a": int64(1)}, "", "Empty attribute in format string"},
		{"{a{b}}", map[string]any{"a": int64(1), "a{b}": int64(5)}, "", "unexpected '{' in field name"},
		// A key of decimal digits of any script is an int.
		{"{a[١]}", map[string]any{"a": "xyz"}, "y", ""},
		{"{a[١]}", map[string]any{"a": []any{"p", "q"}}, "q", ""},
		{"{a[١]}", map[string]any{"a": map[string]any{"١": int64(3)}}, "", "KeyError: 1"},
		// The number attributes of an int past int64.
		{"{a.real}", map[string]any{"a": big}, "1180591620717411303424", ""},
		{"{a.numerator:,}", map[string]any{"a": big}, "1,180,591,620,717,411,303,424", ""},
		{"{a.imag}", map[string]any{"a": big}, "0", ""},
		{"{a.denominator}", map[string]any{"a": big}, "1", ""},
	} {
		got, err := FormatString(c.tmpl, c.values)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("FormatString(%q) = %q, %v; Python raises %q", c.tmpl, got, err, c.wantErr)
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("FormatString(%q) = %q, %v; Python gives %q", c.tmpl, got, err, c.want)
		}
	}
}
