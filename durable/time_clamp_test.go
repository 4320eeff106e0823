package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// A run Python wrote, waiting on WAIT_UNTIL with a "forever" deadline the
// node gave with a negative offset: Python stores until as given and
// fromisoformat reads it, but the instant, 10000-01-01T04:59:59 UTC, is
// past what Python's datetime holds in UTC. Written back as
// "10000-01-01T04:59:59+00:00" it was text ParseTime refused (the deadline
// was lost on the next read) and that Python's string comparisons sort
// before the present (the wait released at once). It is now read as
// 9999-12-31T23:59:59.999999 UTC, still "never", and written so.
func TestWaitUntilPastYear9999RoundTrips(t *testing.T) {
	const in = `{"run_id": "r1", "workflow_id": "wf", "status": "waiting", "current_node": "w", "vars": {}, ` +
		`"waiting": {"reason": "until", "wait_key": null, "until": "9999-12-31T23:59:59-05:00", "resume_to_node": "next", ` +
		`"result_key": null, "prompt": null, "choices": null, "allow_free_text": true, "details": null}, ` +
		`"output": null, "error": null, "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", ` +
		`"actor_id": null, "session_id": null, "parent_run_id": null}`
	r, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.Waiting.Until.IsZero() {
		t.Fatal("the deadline should parse")
	}
	out, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"until": "9999-12-31T23:59:59.999999+00:00"`) {
		t.Errorf("until not written as the last instant of year 9999: %s", out)
	}
	r2, err := durable.UnmarshalRun(out)
	if err != nil {
		t.Fatal(err)
	}
	// The value read equals the value re-read: a store's hot copy and a
	// read from disk agree.
	if !r2.Waiting.Until.Equal(r.Waiting.Until.Time) {
		t.Errorf("deadline changed on a round trip: read %v, re-read %v\nwritten: %s", r.Waiting.Until, r2.Waiting.Until, out)
	}
}

// Instants outside what Python's datetime holds in UTC are clamped by
// NewTime (so by ParseTime) and by FormatTime alike, so the value in
// memory is the one its written text reads back as, and the text is
// one Python reads and compares as a string correctly.
func TestTimeOutsidePythonRangeIsClamped(t *testing.T) {
	t.Parallel()
	last := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	first := time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC) // the zero Time is "no time"
	cases := []struct {
		in   time.Time
		want time.Time
		text string
	}{
		{time.Date(10000, 1, 1, 4, 59, 59, 0, time.UTC), last, "9999-12-31T23:59:59.999999+00:00"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), last, "9999-12-31T23:59:59.999999+00:00"},
		{time.Date(0, 12, 31, 19, 0, 0, 0, time.UTC), first, "0001-01-01T00:00:00.000001+00:00"},
		{time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), first, "0001-01-01T00:00:00.000001+00:00"},
	}
	for _, c := range cases {
		got := durable.NewTime(c.in)
		if !got.Equal(c.want) || got.String() != c.text {
			t.Errorf("NewTime(%v) = %v %q; want %v %q", c.in, got.Time, got.String(), c.want, c.text)
		}
		back, err := durable.ParseTime(got.String())
		if err != nil || !back.Equal(got.Time) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", got.String(), back.Time, err, got.Time)
		}
	}
	// The texts Python reads with an offset taking them out of range.
	for in, want := range map[string]time.Time{
		"9999-12-31T23:59:59-05:00": last,
		"0001-01-01T00:00:00+05:00": first,
	} {
		if got, err := durable.ParseTime(in); err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got.Time, err, want)
		}
	}
	if got := durable.FormatTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); got != "9999-12-31T23:59:59.999999+00:00" {
		t.Errorf("FormatTime past year 9999 = %q", got)
	}
	if got := durable.FormatTime(time.Time{}); got != "0001-01-01T00:00:00+00:00" {
		t.Errorf("FormatTime(time.Time{}) = %q; want Python's datetime.min", got)
	}
}
