package durable_test

import (
	"bytes"
	"encoding"
	"encoding/json"
	"encoding/xml"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// durable.Time's text form is its JSON form without the quotes: Python's
// isoformat (2026-11-29T23:12:07.099499+00:00), "" for the zero Time, and
// it reads any timestamp ParseTime reads. Promise: durable/time.go (Time
// "is written as Python's isoformat() writes it"); spec runtime-model.md
// §1 (timestamps are isoformat strings). Text encoders (JSON map keys,
// slog, encoding/xml, flag) used to get time.Time's RFC 3339 ("…Z", nine
// fraction digits) from the embedded time.Time instead.
func TestTimeTextMatchesJSON(t *testing.T) {
	t.Parallel()
	ts := durable.NewTime(time.Date(2026, 11, 29, 23, 12, 7, 99499000, time.UTC))
	const want = "2026-11-29T23:12:07.099499+00:00"

	j, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	txt, err := ts.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	if string(txt) != want || string(j) != `"`+want+`"` {
		t.Errorf("MarshalText = %s, MarshalJSON = %s; want both %s", txt, j, want)
	}
	var ta encoding.TextAppender = ts
	if b, err := ta.AppendText([]byte("at ")); err != nil || string(b) != "at "+want {
		t.Errorf("AppendText = %q, %v; want %q", b, err, "at "+want)
	}
	if b, err := (durable.Time{}).MarshalText(); err != nil || len(b) != 0 {
		t.Errorf("zero Time MarshalText = %q, %v; want empty", b, err)
	}

	// A map keyed by Time, through encoding/json.
	keyed, err := json.Marshal(map[durable.Time]int{ts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if string(keyed) != `{"`+want+`":1}` {
		t.Errorf("map key written as %s, want %s", keyed, `{"`+want+`":1}`)
	}
	var back map[durable.Time]int
	if err := json.Unmarshal(keyed, &back); err != nil || back[ts] != 1 {
		t.Errorf("map key read back: %v, %v", back, err)
	}

	// slog's text handler and encoding/xml.
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("m", "at", ts)
	if !strings.Contains(logged.String(), "at="+want) {
		t.Errorf("slog wrote %q, want at=%s", logged.String(), want)
	}
	x, err := xml.Marshal(struct {
		XMLName xml.Name     `xml:"e"`
		At      durable.Time `xml:"at,attr"`
	}{At: ts})
	if err != nil || !strings.Contains(string(x), `at="`+want+`"`) {
		t.Errorf("encoding/xml wrote %s, %v; want at=%q", x, err, want)
	}

	// Reading is as lenient as ParseTime, and "" is the zero Time.
	for text, wantT := range map[string]durable.Time{
		want:                               ts,
		"2026-11-30T04:42:07.099499+05:30": ts,
		"2026-11-29 23:12:07.099499Z":      ts,
		"2026-11-29T23:12:07.099499":       ts,
		"":                                 {},
	} {
		got := durable.NewTime(time.Now())
		if err := got.UnmarshalText([]byte(text)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", text, err)
			continue
		}
		if !got.Equal(wantT.Time) || got.IsZero() != wantT.IsZero() {
			t.Errorf("UnmarshalText(%q) = %v, want %v", text, got, wantT)
		}
	}
	var bad durable.Time
	if err := bad.UnmarshalText([]byte("yesterday")); err == nil {
		t.Error(`UnmarshalText("yesterday") succeeded`)
	}
}

// Text that is no timestamp is refused by Time's text and JSON decoders
// with an error saying whose it is and quoting the text. Would break:
// UnmarshalText returning ParseTime's error without the "durable.Time: "
// prefix.
func TestTimeUnmarshalRefusalNamesTheType(t *testing.T) {
	t.Parallel()
	want := `durable.Time: invalid ISO timestamp "tomorrow"`
	var tm durable.Time
	if err := tm.UnmarshalText([]byte("tomorrow")); err == nil || err.Error() != want {
		t.Errorf("UnmarshalText(tomorrow): error %v, want %s", err, want)
	}
	if err := json.Unmarshal([]byte(`"tomorrow"`), &tm); err == nil || err.Error() != want {
		t.Errorf("json.Unmarshal(\"tomorrow\"): error %v, want %s", err, want)
	}
}
