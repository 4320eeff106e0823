package pyval

import "testing"

// LoadsJSON errors read as str() of Python 3.11's json.JSONDecodeError
// (the wanted texts are Python's): line and column from 1, the position
// in characters, and each message placed where Python places it (an
// unterminated string at its quote, a bad escape at its backslash or 'u').
func TestLoadsJSONErrorTextIsPythons(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", "Expecting value: line 1 column 1 (char 0)"},
		{"{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
		{"[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"},
		{"{\"é\": 1 2}", "Expecting ',' delimiter: line 1 column 9 (char 8)"},
		{"{\"a\": 1,\n \"b\" 2}", "Expecting ':' delimiter: line 2 column 6 (char 14)"},
		{"\"abc", "Unterminated string starting at: line 1 column 1 (char 0)"},
		{"\"ab\\", "Unterminated string starting at: line 1 column 1 (char 0)"},
		{"\"é\\x\"", "Invalid \\escape: line 1 column 3 (char 2)"},
		{"\"a\\u12zz\"", "Invalid \\uXXXX escape: line 1 column 4 (char 3)"},
		{"\"\\ud800\\u12\"", "Invalid \\uXXXX escape: line 1 column 9 (char 8)"},
		{"\"a\nb\"", "Invalid control character at: line 1 column 3 (char 2)"},
		{"1 2", "Extra data: line 1 column 3 (char 2)"},
		{"{1:2}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
		{"[1,]", "Expecting value: line 1 column 4 (char 3)"},
		{"[\"é\",\n  \"ü\" x]", "Expecting ',' delimiter: line 2 column 7 (char 12)"},
		{"\ufeff{}", "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"},
	} {
		if _, err := LoadsJSON(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("LoadsJSON(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}
