package pyval

import "testing"

// CPython's json scanner reports "Invalid \uXXXX escape" (at the 'u')
// when the four hex digits of an escape reach the end of the text, not
// "Unterminated string": it wants a character after them. LoadsJSON's
// errors are the ones the parse_json node reports, in Python's words.
// Expected texts: str() of CPython 3.11.7's JSONDecodeError.
func TestLoadsJSONEscapeEndingTheTextIsInvalidEscape(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`"\u1200`:        `Invalid \uXXXX escape: line 1 column 3 (char 2)`,
		`"\ud800`:        `Invalid \uXXXX escape: line 1 column 3 (char 2)`,
		`["\ud800\udc00`: `Invalid \uXXXX escape: line 1 column 10 (char 9)`,
		`"\u12`:          `Invalid \uXXXX escape: line 1 column 3 (char 2)`,
	} {
		_, err := LoadsJSON(doc)
		if err == nil || err.Error() != want {
			t.Errorf("LoadsJSON(%q) error = %v; Python: %s", doc, err, want)
		}
	}
	if v, err := LoadsJSON(`"\ud800\udc00"`); err != nil || v != "\U00010000" {
		t.Errorf("surrogate pair: %q, %v", v, err)
	}
}
