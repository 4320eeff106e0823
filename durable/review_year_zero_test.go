package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Python's datetime has no year 0: datetime.fromisoformat (3.11) refuses
// every spelling of it ("year 0 is out of range"). ParseTime read year
// 0000 through time.Parse, which has one, and clamped it to year 1, so a
// deadline "0000-12-31T23:00:00-05:00" read as 0001-01-01T04:00:00Z
// instead of "invalid ISO timestamp".
func TestParseTimeRefusesYearZero(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"0000-01-01T00:00:00+00:00",
		"0000-12-31T23:00:00-05:00",
		"0000-12-31",
		"00000101T000000",
		"0000-W01-1",
		"0000W011",
	} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s; Python's fromisoformat refuses year 0", s, got)
		}
	}
	// Year 1 still reads (datetime.min as one microsecond later, as documented).
	if got, err := durable.ParseTime("0001-01-01T00:00:00-00:01"); err != nil || got.String() != "0001-01-01T00:01:00+00:00" {
		t.Errorf("ParseTime(year 1) = %s, %v", got, err)
	}
}
