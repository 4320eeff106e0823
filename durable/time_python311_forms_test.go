package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Python 3.11's fromisoformat takes any single code point between date
// and time (it skips the separator's UTF-8 continuation bytes), so a
// no-break space copied from formatted text, an ideographic space or 'é'
// read as 'T' does, after an extended, basic or week date. Expected
// values are python3 3.11.7's, read as UTC when naive.
func TestParseTimeMultiByteDateTimeSeparator(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"2030-01-01\u00a012:00:00":  "2030-01-01T12:00:00+00:00",
		"2030-01-01é12:00:00+05:00": "2030-01-01T07:00:00+00:00",
		"2030-01-01\u300012:00:00Z": "2030-01-01T12:00:00+00:00",
		"2030-01-01😀120000":         "2030-01-01T12:00:00+00:00",
		"20300101é120000":           "2030-01-01T12:00:00+00:00",
		"2030-W01-3\u00a012:00":     "2030-01-02T12:00:00+00:00",
		"2030W013\u00a012:00":       "2030-01-02T12:00:00+00:00",
	} {
		got, err := durable.ParseTime(s)
		if err != nil || got.String() != want {
			t.Errorf("ParseTime(%q) = %q, %v; want %s", s, got.String(), err, want)
		}
	}
	for _, s := range []string{"2030-01-01é", "2030-01-01ééé12:00"} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s; Python refuses it", s, got)
		}
	}
}

// CPython 3.11's parse_hh_mm_ss_ff goes on at a ':' after the seconds
// and reads the fraction from there: HH:MM:SS:f is HH:MM:SS.f, as the
// comma form is. Expected values are python3 3.11.7's.
func TestParseTimeColonFractionAsPython311(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"2030-01-01T12:00:00:30":           "2030-01-01T12:00:00.300000+00:00",
		"2030-01-01T12:00:00:5Z":           "2030-01-01T12:00:00.500000+00:00",
		"2030-01-01T12:00:00:123456+05:30": "2030-01-01T06:30:00.123456+00:00",
		"2030-01-01 12:00:00:1234567":      "2030-01-01T12:00:00.123456+00:00",
		"2030-01-01T12:00:00:+05:00":       "2030-01-01T07:00:00+00:00",
	} {
		got, err := durable.ParseTime(s)
		if err != nil || got.String() != want {
			t.Errorf("ParseTime(%q) = %q, %v; want %s", s, got.String(), err, want)
		}
	}
	for _, s := range []string{"2030-01-01T12:00:00:", "2030-01-01T12:00:00::5", "2030-01-01T12:00:00:5:5", "2030-01-01T1200:00:5"} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s; Python refuses it", s, got)
		}
	}
}

// A zero offset with a fraction (±00:00:00.f, ±000000.f) is UTC for
// Python 3.11's fromisoformat, which drops the fraction of an offset whose
// whole seconds are zero; a non-zero offset keeps it. Expected values are
// python3 3.11.7's.
func TestParseTimeZeroOffsetFractionIsUTC(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"2030-01-01T00:00:00-00:00:00.5":      "2030-01-01T00:00:00+00:00",
		"2030-01-01T00:00:00+000000.25":       "2030-01-01T00:00:00+00:00",
		"2030-01-01T12:00:00-00:00:00.999999": "2030-01-01T12:00:00+00:00",
		"2030-01-01T00:00:00+00:00:01.5":      "2029-12-31T23:59:58.500000+00:00",
	} {
		got, err := durable.ParseTime(s)
		if err != nil || got.String() != want {
			t.Errorf("ParseTime(%q) = %q, %v; want %s", s, got.String(), err, want)
		}
	}
}
