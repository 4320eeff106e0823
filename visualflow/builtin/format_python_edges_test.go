package builtin

import (
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// TestFormatNULPresentationTypeIsUnknown (found by FuzzFormatPython): a format
// spec whose presentation type is a NUL character. CPython reads the
// explicit type over the value type's default, so int, bool and str raise
// ValueError "Unknown format code '\x0' for object of type '<type>'" (the
// format node fails), while float, whose default type is NUL, formats as
// if no type were given. pyval's spec parser used 0 for "no type", so
// "{b:\x00}" gave "0" for False instead of failing.
func TestFormatNULPresentationTypeIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		tmpl    string
		v       any
		wantErr string
		want    string
	}{
		{"{v:\x00}", false, "Unknown format code '\\x0' for object of type 'bool'", ""},
		{"{v:>5\x00}", int64(5), "Unknown format code '\\x0' for object of type 'int'", ""},
		{"{v:\x00}", "ab", "Unknown format code '\\x0' for object of type 'str'", ""},
		{"{v:\x00}", 1.5, "", "'1.5'"},
		{"{v:>5\x00}", 1.5, "", "'  1.5'"},
	} {
		got, err := callBuiltin(t, nil, "format", map[string]any{"template": tc.tmpl, "values": map[string]any{"v": tc.v}})
		if tc.wantErr != "" {
			if err == nil || err.Error() != "format: "+tc.wantErr {
				t.Errorf("format(%q, v=%s) = %s, %v; want error %q", tc.tmpl, pyval.Repr(tc.v), pyval.Repr(got), err, tc.wantErr)
			}
			continue
		}
		wantRepr(t, "format("+pyval.Repr(tc.tmpl)+")", got, err, tc.want)
	}
}

// TestFormatHugeFloatPrecisionIsRefused (found by FuzzFormatPython): a
// float presentation with a precision past INT_MAX panicked in
// strconv.FormatFloat ("makeslice: cap out of range"), crashing the
// process instead of failing the node. A nested replacement field makes
// such a spec from a value: "{x:{x:0}0}" with x = -0.41374999999999984
// formats x with ".413749999999999840". CPython raises ValueError
// "precision too big" (format_float_internal), for ints formatted with a
// float type and for inf too. (Precisions between 2**31 and the makeslice
// limit are not listed: the old code tried to allocate gigabytes for them.)
func TestFormatHugeFloatPrecisionIsRefused(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		v    any
	}{
		{"{v:{v:0}0}", -0.41374999999999984},
		{"{v:.413749999999999840}", 0.5},
		{"{v:.413749999999999840e}", int64(5)},
		{"{v:.413749999999999840%}", math.Inf(1)},
	} {
		var got any
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("format(%q, v=%s) panicked: %v", tc.tmpl, pyval.Repr(tc.v), r)
					err = nil
				}
			}()
			got, err = callBuiltin(t, nil, "format", map[string]any{"template": tc.tmpl, "values": map[string]any{"v": tc.v}})
		}()
		if err == nil {
			if got != nil {
				t.Errorf("format(%q, v=%s) = %s, want Python's ValueError: precision too big", tc.tmpl, pyval.Repr(tc.v), pyval.Repr(got))
			}
			continue
		}
		if err.Error() != "format: precision too big" {
			t.Errorf("format(%q, v=%s): error %q, want \"format: precision too big\"", tc.tmpl, pyval.Repr(tc.v), err)
		}
	}
}

// TestFormatRefusesSizesPastTheLimit: a width or a float precision taken
// from a run's values ("{x:{n}}") would make the format node allocate
// whatever it says, as CPython does: a value of a billion would take the
// gateway's memory. Past pyval.MaxFormattedLen the node fails naming the
// limit, quickly; at the limit it formats.
func TestFormatRefusesSizesPastTheLimit(t *testing.T) {
	big := int64(pyval.MaxFormattedLen + 1)
	half := strings.Repeat("é", pyval.MaxFormattedLen/4+1) // just over half the limit in bytes
	for _, tc := range []struct {
		tmpl   string
		values map[string]any
		want   string
	}{
		{"{x:{n}}", map[string]any{"x": "a", "n": int64(1) << 30}, "format width 1073741824 is past this runtime's limit"},
		{"{x:>{n}}", map[string]any{"x": int64(7), "n": big}, "format width 16777217 is past"},
		{"{x:.{n}f}", map[string]any{"x": 0.5, "n": big}, "format precision 16777217 is past"},
		{"{s}{s}", map[string]any{"s": half}, "formatted text would pass this runtime's limit"},
	} {
		_, err := callBuiltin(t, nil, "format", map[string]any{"template": tc.tmpl, "values": tc.values})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("format(%q): %v; want an error containing %q", tc.tmpl, err, tc.want)
		}
	}
	got, err := callBuiltin(t, nil, "format", map[string]any{"template": "{x:>{n}}", "values": map[string]any{"x": "a", "n": int64(pyval.MaxFormattedLen)}})
	if s, _ := got.(string); err != nil || len(s) != pyval.MaxFormattedLen {
		t.Errorf("format at the limit: %d bytes, %v; want %d", len(s), err, pyval.MaxFormattedLen)
	}
}
