package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// ParseTime reads ISO week dates as Python 3.11's datetime.fromisoformat
// does ("ISO week dates" in its documentation), with week 53 only in a
// year whose ISO calendar has one, and keeps refusing ordinal dates
// (YYYY-DDD), which fromisoformat refuses. Every case was run through
// datetime.fromisoformat on Python 3.11.7; a naive result is read as UTC,
// as ParseTime reads every naive timestamp.
func TestWeekDatesReadAndOrdinalDatesRefusedAsPython(t *testing.T) {
	t.Parallel()
	utc := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }
	for in, want := range map[string]time.Time{
		"2026-W48-3":                utc(2026, 11, 25, 0),
		"2026W483":                  utc(2026, 11, 25, 0),
		"2026-W48":                  utc(2026, 11, 23, 0), // the Monday
		"2026W48":                   utc(2026, 11, 23, 0),
		"2026-W48-3T10:00:00+00:00": utc(2026, 11, 25, 10),
		"2026W483T10:00:00+00:00":   utc(2026, 11, 25, 10),
		"2026-W48T10:00:00+00:00":   utc(2026, 11, 23, 10),
		"2026-W52-7T23:59:59-05:00": time.Date(2026, 12, 28, 4, 59, 59, 0, time.UTC),
		"2026-W53":                  utc(2026, 12, 28, 0), // 2026 has 53 ISO weeks
		"2020-W53-7":                utc(2021, 1, 3, 0),
		"2004-W53-6":                utc(2005, 1, 1, 0),
		"2009-W01-1":                utc(2008, 12, 29, 0),
	} {
		got, err := durable.ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"2025-W53", "2025-W53-1", "2021W531", // no week 53 in 2025 or 2021
		"2026-W54-1", "2026-W00-1", "2026-W48-0", "2026-W48-8", "2026-W1-1", "2026-W481",
		"2026-334", "2026334", "2026-334T10:00:00+00:00", // ordinal dates
	} {
		_, err := durable.ParseTime(bad)
		if err == nil {
			t.Errorf("ParseTime(%q) accepted; Python raises Invalid isoformat string", bad)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseTime(%q): error %q does not name the text", bad, err)
		}
	}
}
