package durable

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Time is a UTC instant written as Python's isoformat() writes it
// (2026-11-29T23:12:07.099499+00:00, the fraction omitted when zero). The
// zero Time is written as null. Parsing is lenient (Z, other offsets, no
// offset meaning UTC, a space for the T), and times compare as instants.
type Time struct{ time.Time }

// NewTime truncates t to microseconds (what the wire keeps) in UTC, and
// clamps it to the instants Python's datetime holds in UTC: one past
// 9999-12-31T23:59:59.999999 reads as that instant, one before 0001-01-01
// as 0001-01-01T00:00:00.000001 (the first that is not the zero Time, as
// ParseTime reads datetime.min). Written as is, such an instant would be
// text neither Python nor ParseTime reads, and which Python's string
// comparisons sort wrongly ("10000-…" before "2026-…"): a deadline hours
// past the end of year 9999, which a node can give with an offset, is
// "never" either way. Clamping here, not only when writing, keeps the
// value in memory equal to what a read of the written text gives.
func NewTime(t time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	t = clampTime(t.UTC().Truncate(time.Microsecond))
	if t.IsZero() {
		t = t.Add(time.Microsecond) // minWireTime is the zero Time, "no time"
	}
	return Time{t}
}

// maxWireTime and minWireTime bound the instants the wire form holds:
// Python's datetime.max and datetime.min, in UTC.
var (
	maxWireTime = time.Date(9999, time.December, 31, 23, 59, 59, 999999000, time.UTC)
	minWireTime = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// clampTime brings t within [minWireTime, maxWireTime].
func clampTime(t time.Time) time.Time {
	if t.After(maxWireTime) {
		return maxWireTime
	}
	if t.Before(minWireTime) {
		return minWireTime
	}
	return t
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

// MarshalJSON writes t as its wire form, the isoformat text or null,
// instead of the RFC 3339 of the embedded time.Time ("…Z", which breaks
// Python's string comparisons): a Time a node puts in vars, a payload or
// a result reaches encoding/json, and pyjson through it.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 34)
	b = append(b, '"')
	b = appendTime(b, t.Time)
	return append(b, '"'), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and any timestamp
// ParseTime reads; null (and "", as the record decoders read it) is the
// zero Time.
func (t *Time) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("durable.Time: %w", err)
	}
	return t.UnmarshalText([]byte(s))
}

// MarshalText writes t as MarshalJSON does without the quotes: the
// isoformat text, or "" for the zero Time. Text encoders (map keys in
// encoding/json, slog, encoding/xml, flag) would otherwise take the
// embedded time.Time's RFC 3339, another spelling than the wire's.
func (t Time) MarshalText() ([]byte, error) {
	return t.AppendText(nil)
}

// AppendText appends MarshalText's text to b; it replaces time.Time's
// (encoding.TextAppender) for the same reason.
func (t Time) AppendText(b []byte) ([]byte, error) {
	if t.IsZero() {
		return b, nil
	}
	return appendTime(b, t.Time), nil
}

// UnmarshalText reads any timestamp ParseTime reads; "" is the zero Time.
func (t *Time) UnmarshalText(data []byte) error {
	if len(data) == 0 {
		*t = Time{}
		return nil
	}
	v, err := ParseTime(string(data))
	if err != nil {
		return fmt.Errorf("durable.Time: %w", err)
	}
	*t = v
	return nil
}

// FormatTime formats t in UTC the way Python's isoformat() does, clamped
// to the years 1–9999 Python's datetime holds (see NewTime).
func FormatTime(t time.Time) string {
	var buf [32]byte
	return string(appendTime(buf[:0], t))
}

// appendTime appends FormatTime(t) to b, formatted by hand in a third of
// AppendFormat's time (a commit formats a dozen timestamps). An instant
// outside years 1–9999 in UTC is written clamped, as NewTime clamps it.
func appendTime(b []byte, t time.Time) []byte {
	t = clampTime(t.UTC())
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+second/10), byte('0'+second%10))
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		b = append(b, byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
			byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10))
	}
	return append(b, "+00:00"...)
}

// timeLayouts read what extendedISO makes of a timestamp: a date alone, or
// a date and an HH:MM:SS[.f] time with or without a zone.
var timeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00:00",
	"2006-01-02",
}

// ParseTime parses an ISO-8601 timestamp as Python's
// datetime.fromisoformat (3.11) reads one: any single character between
// date and time (T, t, a space, a non-ASCII one) and between a time and
// its zone, the basic forms (20300101T000000), a Z or an offset of ±HH,
// ±HHMM, ±HH:MM or ±HH:MM:SS (none means UTC), one or more fractional
// digits (cut to microseconds) after a '.', a ',' or, as 3.11 reads
// HH:MM:SS:f, a ':', and ISO week dates (2026-W48-3, 2026W483, 2026-W48
// for its Monday; week 53 only in a year whose ISO calendar has one), but
// not ordinal dates (2026-334), which Python refuses too. It also reads a
// lower-case z, which Python refuses. Python's datetime.min, the zero
// Time, reads as one microsecond later.
func ParseTime(s string) (Time, error) {
	if t, ok := parseWireTime(s); ok {
		return t, nil
	}
	return parseTimeAnyForm(s)
}

// parseWireTime reads the one form appendTime writes (and Python's
// isoformat in UTC), YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00, by hand: every
// stored record and run holds several, and the general path builds
// strings and tries layouts in turn, a third of the decoding of a ledger
// record. ok is false for anything else, an invalid date or clock
// included, which parseTimeAnyForm then reads or refuses.
func parseWireTime(s string) (Time, bool) {
	var us int
	switch {
	case len(s) == 25:
	case len(s) == 32 && s[19] == '.':
		for i := 20; i < 26; i++ {
			if !isDigit(s[i]) {
				return Time{}, false
			}
			us = us*10 + int(s[i]-'0')
		}
	default:
		return Time{}, false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-6:] != "+00:00" {
		return Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	second, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 1 || month < 1 || month > 12 || day < 1 ||
		hour > 23 || minute > 59 || second > 59 {
		return Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, us*1000, time.UTC)
	if t.Day() != day {
		return Time{}, false // past the month's end: time.Date moved it on
	}
	if t.IsZero() {
		t = t.Add(time.Microsecond) // datetime.min, as parseTimeAnyForm reads it
	}
	return Time{t}, true
}

// digits returns the value of a run of ASCII digits; ok is false if s
// holds anything else.
func digits(s string) (n int, ok bool) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// parseTimeAnyForm is ParseTime for every form Python reads.
func parseTimeAnyForm(s string) (Time, error) {
	v, offsetFrac, ok := extendedISO(strings.TrimSpace(s))
	if ok {
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, v); err == nil {
				if t.Year() < 1 {
					// Python's datetime has no year 0 (time.Parse does):
					// fromisoformat refuses it, in any zone.
					break
				}
				t = t.Add(-offsetFrac)
				if t.IsZero() {
					// Python's datetime.min is Go's zero time, which Time
					// keeps for "no time": read it as the next instant.
					t = t.Add(time.Microsecond)
				}
				return NewTime(t), nil
			}
		}
	}
	return Time{}, fmt.Errorf("invalid ISO timestamp %q", s)
}

// extendedISO rewrites the spellings ParseTime's layouts lack into the
// extended form: YYYY-MM-DDTHH:MM:SS[.f][Z|±HH:MM]. An offset's fraction of
// a second (+05:30:15.5), which no layout reads, is cut off and returned
// signed, for the caller to apply. ok is false for a week date that names
// no day.
func extendedISO(v string) (_ string, offsetFrac time.Duration, ok bool) {
	if v, ok = weekDate(v); !ok {
		return "", 0, false
	}
	if len(v) >= 8 && allDigits(v[:8]) {
		// A basic date; the character after it is the separator, a digit
		// included, as in Python ("2030010101200" is 12:00).
		v = v[:4] + "-" + v[4:6] + "-" + v[6:]
	}
	if len(v) <= 10 {
		return v, 0, true
	}
	// Any single separator, a multi-byte character included: Python reads
	// one code point there ("2030-01-01\u00a012:00").
	date, clock := v[:10], v[10+sepLen(v[10:]):]
	// The offset: Z or z, else the last + or - (the date is cut off).
	var zone string
	if n := len(clock); n > 0 && (clock[n-1] == 'Z' || clock[n-1] == 'z') {
		clock, zone = clock[:n-1], "Z"
	} else if i := strings.LastIndexAny(clock, "+-"); i >= 0 {
		clock, zone = clock[:i], clock[i:]
		zone, offsetFrac = extendedOffset(zone)
	}
	if n := len(clock); zone != "" && n > 0 && !isDigit(clock[n-1]) {
		// One character between the time and its zone reads, as in
		// Python ("12:00:00 +05:00", "12:00:00.+00:00", "10:00 Z"), but
		// not a second zone designator, which Python refuses ("ZZ",
		// "+-05:30", "Z+05:00"): read as a separator, "+-05:30" was -05:30.
		if strings.IndexByte("Zz+-", clock[n-1]) >= 0 {
			return "", 0, false
		}
		clock = clock[:n-1]
	}
	if zone, ok = offsetUnderADay(zone); !ok {
		// Python: "offset must be a timedelta strictly between
		// -timedelta(hours=24) and timedelta(hours=24)"; Go's layouts read
		// +24:00 and +23:60, a deadline moved by a day.
		return "", 0, false
	}
	// The clock as HH:MM:SS[.f]: from the basic forms (HHMM, HHMMSS), and
	// from an hour or an hour and minutes, which Python reads with a
	// fraction (12:30.5 is 12:30:00.5) and with any offset.
	// Python takes a comma for the decimal sign too, and (3.11) a colon
	// after HH:MM:SS: its H:M:S loop goes on at a ':' and the fraction is
	// read from where the loop stops (12:00:00:5 is 12:00:00.5).
	if len(clock) > 8 && clock[8] == ':' && clock[2] == ':' && clock[5] == ':' {
		clock = clock[:8] + "." + clock[9:]
	}
	whole, frac, hasFrac := strings.Cut(strings.Replace(clock, ",", ".", 1), ".")
	switch {
	case allDigits(whole) && (len(whole) == 4 || len(whole) == 6):
		whole = whole[:2] + ":" + whole[2:4] + ":" + cmp.Or(whole[4:], "00")
	case allDigits(whole) && len(whole) == 2:
		whole += ":00:00"
	case len(whole) == 5 && whole[2] == ':' && allDigits(whole[:2]) && allDigits(whole[3:]):
		whole += ":00"
	}
	if len(whole) < 2 || !isDigit(whole[0]) || !isDigit(whole[1]) || (len(whole) > 2 && whole[2] != ':') {
		// A one-digit hour, which Python refuses: read as one, the digit
		// after a basic date taken for the separator would shift the time
		// ("2024010112" is not 02:00).
		return "", 0, false
	}
	if clock = whole; hasFrac {
		clock += "." + frac
	}
	return date + "T" + clock + zone, offsetFrac, true
}

// extendedOffset rewrites a signed offset in any form Python 3.11 reads
// as ±HH:MM or ±HH:MM:SS, the forms the layouts and offsetUnderADay take.
// Python reads an offset with the grammar of a time: HH, HHMM, HHMMSS or
// their colon forms, then a fraction of a second after '.' or ',' that
// may follow any of the parts (+05:30.15 is +05:30:00.15, +05.5 is
// +05:00:00.5). The fraction, which no layout reads, is returned signed,
// to the microsecond, for the caller to apply; Python 3.11 reads an
// offset of zero whole seconds as UTC and drops its fraction. A zone of
// another shape comes back as it is, for the layouts to refuse.
func extendedOffset(zone string) (string, time.Duration) {
	whole, frac := zone[1:], ""
	if len(whole) > 8 && whole[2] == ':' && whole[5] == ':' && whole[8] == ':' {
		// As in a clock, Python 3.11 reads a colon after HH:MM:SS as the
		// decimal sign (+05:30:15:5 is +05:30:15.5).
		whole = whole[:8] + "." + whole[9:]
	}
	if i := strings.IndexAny(whole, ".,"); i >= 0 {
		whole, frac = whole[:i], whole[i+1:]
		if !allDigits(frac) {
			return zone, 0
		}
	}
	var parts []string // HH, MM, SS as written
	switch {
	case allDigits(whole) && len(whole)%2 == 0 && len(whole) <= 6:
		for k := 0; k < len(whole); k += 2 {
			parts = append(parts, whole[k:k+2])
		}
	case len(whole) == 5 && whole[2] == ':' || len(whole) == 8 && whole[2] == ':' && whole[5] == ':':
		parts = strings.Split(whole, ":")
		for _, p := range parts {
			if !allDigits(p) {
				return zone, 0
			}
		}
	default:
		return zone, 0
	}
	if len(parts) == 1 {
		parts = append(parts, "00")
	}
	out := zone[:1] + strings.Join(parts, ":")
	if frac == "" || strings.Trim(strings.Join(parts, ""), "0") == "" {
		return out, 0
	}
	micro, _ := digits((frac + "00000")[:6])
	f := time.Duration(micro) * time.Microsecond
	if zone[0] == '-' {
		f = -f
	}
	return out, f
}

// weekDate rewrites an ISO week date at the start of v (YYYY-Www-D,
// YYYY-Www, YYYYWwwD, YYYYWww; the day defaults to Monday) as YYYY-MM-DD.
// ok is false for a week or day the year does not have (2025-W53-1).
func weekDate(v string) (_ string, ok bool) {
	var week, day string
	var n int // length of the week date in v
	switch {
	case len(v) >= 8 && v[4:6] == "-W":
		week, n = v[6:8], 8
		// YYYY-Www-D, unless a digit follows the D: Python then takes the
		// hyphen for the separator (YYYY-Www, then a time).
		if len(v) >= 10 && v[8] == '-' && isDigit(v[9]) && (len(v) == 10 || !isDigit(v[10])) {
			day, n = v[9:10], 10
		}
	case len(v) >= 7 && v[4] == 'W':
		week, n = v[5:7], 7
		// YYYYWwwD when the digits after the week end at index 8, or run
		// to an odd index past it (a digit separator and an even-length
		// time), as Python splits them.
		end := 7
		for end < len(v) && isDigit(v[end]) {
			end++
		}
		if end == 8 || (end > 8 && end%2 == 1) {
			day, n = v[7:8], 8
		}
	default:
		return v, true
	}
	if !allDigits(v[:4]) || !allDigits(week) {
		return v, true // not a week date: let the layouts refuse it
	}
	year, _ := strconv.Atoi(v[:4])
	w, _ := strconv.Atoi(week)
	d := 1
	if day != "" {
		d = int(day[0] - '0')
	}
	// Monday of week 1 is the Monday on or before January 4.
	jan4 := time.Date(year, time.January, 4, 0, 0, 0, 0, time.UTC)
	monday1 := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	t := monday1.AddDate(0, 0, (w-1)*7+d-1)
	if gy, gw := t.ISOWeek(); w < 1 || d < 1 || d > 7 || gy != year || gw != w {
		return "", false
	}
	// What follows is a separator and a two-digit hour, or nothing:
	// "2030W01-3" or "2030-W01-3-4" are not a week date and a time.
	if rest := v[n:]; rest != "" {
		if hour := rest[sepLen(rest):]; len(hour) < 2 || !isDigit(hour[0]) || !isDigit(hour[1]) {
			return "", false
		}
	}
	return t.Format("2006-01-02") + v[n:], true
}

// sepLen is the length in bytes of the date-time separator at the start
// of s: one character, which may take several bytes (1 for invalid UTF-8).
func sepLen(s string) int {
	if s[0] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRuneInString(s)
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// offsetUnderADay reads zone, "", "Z" or ±HH:MM[:SS] as extendedISO
// leaves it, as Python does: it adds the parts up (+05:60 is +06:00,
// +00:99 is +01:39) and refuses a total of a day or more. An offset comes
// back with minutes and seconds under 60, the form Go's layouts read; a
// zone of another shape comes back as it is, for the layouts to refuse.
func offsetUnderADay(zone string) (string, bool) {
	if len(zone) < 6 || zone == "Z" || zone[3] != ':' {
		return zone, true
	}
	num := func(s string) (int, bool) {
		if len(s) != 2 || !allDigits(s) {
			return 0, false
		}
		return int(s[0]-'0')*10 + int(s[1]-'0'), true
	}
	h, okH := num(zone[1:3])
	m, okM := num(zone[4:6])
	sec, okS := 0, true
	switch {
	case len(zone) == 9 && zone[6] == ':':
		sec, okS = num(zone[7:9])
	case len(zone) != 6:
		okS = false
	}
	if !okH || !okM || !okS {
		return zone, true // not an offset the layouts read: they refuse it
	}
	total := h*3600 + m*60 + sec
	if total >= 24*3600 {
		return "", false
	}
	out := fmt.Sprintf("%c%02d:%02d", zone[0], total/3600, total/60%60)
	if len(zone) == 9 {
		out += fmt.Sprintf(":%02d", total%60)
	}
	return out, true
}
