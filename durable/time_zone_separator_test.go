package durable_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestParseTimeSeparatorBeforeOffset: ParseTime promises
// to read timestamps "as leniently as Python's datetime.fromisoformat
// (3.11)", and docs/compatibility.md that deadlines in "any spelling
// datetime.fromisoformat reads" are compared as instants. Python 3.11
// reads one character between the time and its offset (a space, as in
// "2026-01-01 10:00:00 +05:00"); ParseTime refuses these, so a WAIT_UNTIL
// a Python process stored with such an until is kept as text and never
// falls due (store.Deadline is false), and our wait_until effect rejects
// a deadline Python accepts. Expected values are Python 3.11.7's
// datetime.fromisoformat(s).astimezone(timezone.utc).
func TestParseTimeSeparatorBeforeOffset(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]time.Time{
		"2026-01-01 10:00:00 +05:00": time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC),
		"2026-01-01T10:00 +05:00":    time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC),
		"2026-01-01 10:00:00 +0500":  time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC),
		"2026-01-01T10:00:00 -03":    time.Date(2026, 1, 1, 13, 0, 0, 0, time.UTC),
		"2026-01-01T10:00:00 Z":      time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC),
	} {
		got, err := durable.ParseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; Python reads %v", s, got, err, want)
		}
	}
}
