package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// ParseTime promises to read a timestamp "as Python's
// datetime.fromisoformat (3.11) reads one", and docs/compatibility.md
// that deadlines in "any spelling datetime.fromisoformat reads" are
// compared as instants. Python 3.11 reads the zone with the same
// HH[:MM[:SS]][.f] parser as the time: a fraction (after '.' or ',') may
// follow the hours or the minutes of an offset, as it may follow its
// seconds, and counts as a fraction of a second (+05:30.15 is
// +05:30:00.15). Would break: reading the fraction only after ±HH:MM:SS
// with a '.', as ParseTime did, so that a WAIT_UNTIL with such an until
// failed where Python's waits, and a run Python stored waiting until one
// kept it as text and never fell due. Expected values: Python 3.11.7
// datetime.fromisoformat(s).astimezone(timezone.utc).isoformat().
func TestParseTimeReadsAFractionAfterAnOffsetsHoursOrMinutes(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"2030-01-01T12:00:00+05:30.15":   "2030-01-01T06:29:59.850000+00:00",
		"2030-01-01T12:00:00+0530.15":    "2030-01-01T06:29:59.850000+00:00",
		"2030-01-01T12:00:00+05:30,15":   "2030-01-01T06:29:59.850000+00:00",
		"2030-01-01T12:00:00-05:30.5":    "2030-01-01T17:30:00.500000+00:00",
		"2030-01-01T12:00:00+05.5":       "2030-01-01T06:59:59.500000+00:00",
		"2030-01-01T12:00:00+05:30:15,5": "2030-01-01T06:29:44.500000+00:00",
		"2030-01-01T12:00:00+00:00.5":    "2030-01-01T12:00:00+00:00",
	} {
		got, err := durable.ParseTime(s)
		if err != nil || got.String() != want {
			t.Errorf("ParseTime(%q) = %q, %v; Python's fromisoformat reads %s", s, got.String(), err, want)
		}
	}
}
