package durable

import (
	"fmt"
	"strings"
	"time"
)

// Time is a UTC instant written as Python's isoformat() writes it
// (2026-11-29T23:12:07.099499+00:00, the fraction omitted when zero). The
// zero Time is written as null. Parsing is lenient (Z, other offsets, no
// offset meaning UTC, a space for the T), and times compare as instants.
type Time struct{ time.Time }

// NewTime truncates t to microseconds (what the wire keeps) in UTC.
func NewTime(t time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	return Time{t.UTC().Truncate(time.Microsecond)}
}

// String returns the Python isoformat text, or "" for the zero Time.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t.Time)
}

// jsonValue returns the string form or nil for zero, for encoders.
func (t Time) jsonValue() any {
	if t.IsZero() {
		return nil
	}
	return FormatTime(t.Time)
}

// FormatTime formats t in UTC the way Python's isoformat() does.
func FormatTime(t time.Time) string {
	var buf [32]byte
	return string(appendTime(buf[:0], t))
}

// appendTime appends FormatTime(t) to b. Years 0–9999 (all Python
// writes) are formatted by hand, in a third of AppendFormat's time:
// a commit formats a dozen timestamps.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	if year, month, day := t.Date(); year >= 0 && year <= 9999 {
		hour, minute, second := t.Clock()
		b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
			byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
			byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
			byte('0'+second/10), byte('0'+second%10))
	} else {
		b = t.AppendFormat(b, "2006-01-02T15:04:05")
	}
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		b = append(b, byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
			byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10))
	}
	return append(b, "+00:00"...)
}

var timeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02T15Z07:00", // isoformat(timespec="hours")
	"2006-01-02T15",
	"2006-01-02",
}

// ParseTime parses an ISO-8601 timestamp leniently: a Z or numeric offset
// (no offset means UTC), a T or a space between date and time, 0–9
// fractional digits.
func ParseTime(s string) (Time, error) {
	v := strings.TrimSpace(s)
	if len(v) > 10 && v[10] == ' ' {
		v = v[:10] + "T" + v[11:]
	}
	if strings.HasSuffix(v, "z") {
		v = v[:len(v)-1] + "Z"
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return NewTime(t), nil
		}
	}
	return Time{}, fmt.Errorf("invalid ISO timestamp %q", s)
}
