package durable

import "testing"

// TestParseTimeRefusesAOneDigitHour: a compact YYYYMMDDHH ("2024010112"),
// which Python's datetime.fromisoformat refuses (the digit after a basic
// date is its separator, leaving the one-digit hour "2"), is refused, not
// read as 02:00, ten hours from what its writer meant; so is any other
// one-digit hour.
func TestParseTimeRefusesAOneDigitHour(t *testing.T) {
	for _, s := range []string{"2024010112", "2024010112Z", "2024010112+05:00", "2030-01-02T9", "2030-01-02T1:30"} {
		if got, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s, want an error (Python: Invalid isoformat string)", s, got)
		}
	}
}

// TestParseTimeCutsAnOffsetsFractionToMicroseconds: an offset's fraction
// of a second is read to the microsecond, as Python reads it
// (+05:30:15.1234567 moves the instant by 0.123456 s).
func TestParseTimeCutsAnOffsetsFractionToMicroseconds(t *testing.T) {
	got, err := ParseTime("2030-01-02T12:00:00+05:30:15.1234567")
	if err != nil {
		t.Fatal(err)
	}
	if want := "2030-01-02T06:29:44.876544+00:00"; got.String() != want {
		t.Errorf("got %s, want %s (Python 3.11)", got, want)
	}
}
