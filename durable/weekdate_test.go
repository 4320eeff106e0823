package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestMalformedWeekDatesRefused: the first week-date support rewrote
// the week date at the start of the text and handed the rest to the
// extended-form parser, whose separator is any single character and whose
// hour may be one digit. So malformed week dates that CPython's
// fromisoformat refuses (checked with 3.11) parsed to a different instant
// without an error:
// "2030W01-3" (Wednesday of week 1 in a mixed spelling) reads as Monday
// 03:00, "2030-W01-3-4" as Wednesday 04:00. A WAIT_UNTIL given such a
// text would have fired at the wrong time instead of failing.
func TestMalformedWeekDatesRefused(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"2030W01-3", "2030-W01-3-4", "2030-W01:3", "2030W01T3"} {
		if got, err := durable.ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) = %v; want an error (Python: Invalid isoformat string)", in, got)
		}
	}
}
