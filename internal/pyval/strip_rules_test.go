package pyval

import (
	"errors"
	"testing"
)

// Coerced booleans and dotted-path writes judge text with Python's
// strip(), which also removes U+001C–U+001F: "true\x1f" is true and
// "\x1e" is an empty path.
func TestStripRulesOfCoercionAndPaths(t *testing.T) {
	if v, ok := CoerceBoolTri("true\x1f"); !ok || !v {
		t.Errorf("CoerceBoolTri(%q) = %v, %v; want true, true", "true\x1f", v, ok)
	}
	if err := SetDotted(map[string]any{}, "\x1e", 1); !errors.Is(err, ErrEmptyPath) {
		t.Errorf("SetDotted(%q) = %v, want ErrEmptyPath", "\x1e", err)
	}
}
