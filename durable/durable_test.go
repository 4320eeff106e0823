package durable_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/frozen"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

func TestFormatAndParseTime(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 11, 29, 22, 46, 49, 646662000, time.UTC)
	if got := durable.FormatTime(ts); got != "2026-11-29T22:46:49.646662+00:00" {
		t.Fatalf("FormatTime = %s", got)
	}
	if got := durable.FormatTime(ts.Truncate(time.Second)); got != "2026-11-29T22:46:49+00:00" {
		t.Fatalf("no fraction: %s", got)
	}
	for _, in := range []string{
		"2026-11-29T22:46:49.646662+00:00", "2026-11-29T22:46:49.646662Z",
		"2026-11-29T23:46:49.646662+01:00", "2026-11-29 22:46:49.646662", "2026-11-29T22:46:49.646662z",
	} {
		got, err := durable.ParseTime(in)
		if err != nil || !got.Equal(ts) {
			t.Errorf("ParseTime(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := durable.ParseTime("tomorrow"); err == nil || !strings.Contains(err.Error(), "tomorrow") {
		t.Fatalf("bad timestamp: %v", err)
	}
}

// The run written by the Python JsonFileRunStore (spec §1.5, abridged).
const pythonRun = `{
  "run_id": "d94e9e30-3689-4349-943c-8d437f62dcce",
  "workflow_id": "demo_wf",
  "status": "waiting",
  "current_node": "ask",
  "vars": {"context": {"task": "demo"}, "n": 1.0, "big": 12345678901234567890},
  "waiting": {
    "reason": "user",
    "wait_key": "user:d94e9e30-3689-4349-943c-8d437f62dcce:ask",
    "until": null,
    "resume_to_node": "done",
    "result_key": "answer",
    "prompt": "Continue?",
    "choices": ["yes", "no"],
    "details": null
  },
  "output": null,
  "error": null,
  "created_at": "2026-11-29T22:46:49.388378+00:00",
  "updated_at": "2026-11-29T22:46:49.646746+00:00",
  "actor_id": "actor_1",
  "session_id": "sess_1",
  "parent_run_id": null,
  "future_field": "ignored"
}`

func TestRunStateRoundTripsPythonJSON(t *testing.T) {
	t.Parallel()
	run, err := durable.UnmarshalRun([]byte(pythonRun))
	if err != nil {
		t.Fatal(err)
	}
	if !run.Waiting.AllowFreeText {
		t.Fatal("missing allow_free_text must default to true")
	}
	b, err := durable.MarshalRun(run, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "workflow_id": "demo_wf", "status": "waiting", ` +
		`"current_node": "ask", "vars": {"big": 12345678901234567890, "context": {"task": "demo"}, "n": 1.0}, ` +
		`"waiting": {"reason": "user", "wait_key": "user:d94e9e30-3689-4349-943c-8d437f62dcce:ask", "until": null, ` +
		`"resume_to_node": "done", "result_key": "answer", "prompt": "Continue?", "choices": ["yes", "no"], ` +
		`"allow_free_text": true, "details": null}, "output": null, "error": null, ` +
		`"created_at": "2026-11-29T22:46:49.388378+00:00", "updated_at": "2026-11-29T22:46:49.646746+00:00", ` +
		`"actor_id": "actor_1", "session_id": "sess_1", "parent_run_id": null}`
	if string(b) != want {
		t.Fatalf("re-encoded\n got %s\nwant %s", b, want)
	}
}

func TestDecodeRefusesBadRuns(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"run_id": "r", "status": "sleeping"}`:                 `unknown run status "sleeping"`,
		`{"run_id": "r", "status": "waiting", "waiting": {}}`:   `unknown wait reason ""`,
		`{"status": "running"}`:                                 `"run_id" is missing`,
		`{"run_id": "r", "status": "running", "vars": []}`:      `field "vars": expected an object`,
		`{"run_id": "r", "status": "running", "created_at": 7}`: `field "created_at"`, // text that is no time is kept (timestamp_text_kept_test.go)
		`{"run_id": "r"`: `invalid JSON`,
	} {
		if _, err := durable.UnmarshalRun([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("UnmarshalRun(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestRecordKeepsUnknownFieldsAndStatuses(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "cancelled", ` +
		`"effect": {"type": "resume", "payload": {}, "result_key": null}, "result": null, "error": null, ` +
		`"started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, ` +
		`"attempt": 2, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null, "cancelled_by": "op"}`
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != durable.StepCancelled || rec.Effect.Type != durable.EffectResume || rec.Attempt != 2 {
		t.Fatalf("%+v", rec)
	}
	out, _ := durable.MarshalRecord(rec, pyjson.Line)
	if string(out) != in {
		t.Fatalf("round trip\n got %s\nwant %s", out, in)
	}
}

// FuzzUnmarshalRecord: decoding never panics, and a decoded record
// re-encodes to a form that decodes to the same encoding.
func FuzzUnmarshalRecord(f *testing.F) {
	f.Add([]byte(`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "completed", "effect": {"type": "ask_user", "payload": {"prompt": "é"}, "result_key": "a"}, "result": {"x": [1, 2.5, null]}, "attempt": 2}`))
	f.Add([]byte(`{"run_id": "r", "status": "waiting", "result": {"wait": {"reason": "user"}}, "extra": true}`))
	// Payloads a node broke the type of, as Python records them.
	f.Add([]byte(`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "effect": {"type": "x", "payload": null, "result_key": null}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "k", "prev_hash": null, "record_hash": null, "signature": null}`))
	f.Add([]byte(`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "failed", "effect": {"type": "x", "payload": ["a", 1], "result_key": ""}, "result": null, "error": "", "started_at": "2026-01-01T00:00:00Z", "ended_at": null, "actor_id": "", "session_id": null, "attempt": 2, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`))
	// Timestamps kept as read: a three-digit fraction, text no parser reads.
	f.Add([]byte(pythonForeignTimeChain[1]))
	f.Add([]byte(pythonForeignTimeChain[3]))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := durable.UnmarshalRecord(data)
		if err != nil {
			return
		}
		b1, err := durable.MarshalRecord(rec, pyjson.Line)
		if err != nil {
			return // e.g. a NaN literal, refused by design
		}
		rec2, err := durable.UnmarshalRecord(b1)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b1, err)
		}
		b2, _ := durable.MarshalRecord(rec2, pyjson.Line)
		if string(b1) != string(b2) {
			t.Fatalf("unstable:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzUnmarshalRun: decoding a run never panics, round-trips stably, and
// decoding the same text from a string gives the same run.
func FuzzUnmarshalRun(f *testing.F) {
	f.Add([]byte(pythonRun))
	// What Python may write that we keep as read: deadlines in other
	// spellings or none we parse, mixed choices, a non-object output, "".
	f.Add([]byte(strings.NewReplacer(`"until": null`, `"until": "20300101t0000z"`,
		`"choices": ["yes", "no"]`, `"choices": [1, {"a": null}, "x"]`, `"output": null`, `"output": "done"`,
		`"error": null`, `"error": ""`).Replace(pythonRun)))
	f.Add([]byte(strings.Replace(pythonRun, `"until": null`, `"until": "next tuesday"`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := durable.UnmarshalRun(data)
		fromString, serr := durable.UnmarshalRunString(string(data))
		if (err == nil) != (serr == nil) || (err == nil && !reflect.DeepEqual(run, fromString)) {
			t.Fatalf("bytes and string decode differently: %v / %v\n%#v\n%#v", err, serr, run, fromString)
		}
		if err != nil {
			return
		}
		b1, err := durable.MarshalRun(run, pyjson.Line)
		if err != nil {
			return
		}
		run2, err := durable.UnmarshalRun(b1)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b1, err)
		}
		if b2, _ := durable.MarshalRun(run2, pyjson.Line); string(b1) != string(b2) {
			t.Fatalf("unstable:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzRunStoredCopy: for any decodable run, with Go-typed values and a
// typed string taken from the input added (a node's own ints, floats and
// slices; possibly invalid UTF-8), StoredCopy and the in-memory stores'
// frozen copy give exactly what encoding and decoding gives.
func FuzzRunStoredCopy(f *testing.F) {
	f.Add([]byte(pythonRun), "note")
	f.Add([]byte(pythonRun), "bad \xff utf-8")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		run, err := durable.UnmarshalRun(data)
		if err != nil {
			return
		}
		if run.Vars == nil {
			run.Vars = map[string]any{}
		}
		run.Vars["n"] = len(data)
		run.Vars["f"] = float64(len(text)) / 3
		run.Vars["texts"] = []string{text}
		run.Vars[text] = map[string]any{"i": int64(-len(text))}
		run.Error = text
		run.UpdatedAt = durable.Time{Time: run.UpdatedAt.Add(123 * time.Nanosecond).In(time.FixedZone("x", 5400))}
		run.Version = 3
		b, err := durable.MarshalRun(run, pyjson.Line)
		if err != nil {
			return
		}
		want, err := durable.UnmarshalRun(b)
		if err != nil {
			return // a run whose encoding does not decode (e.g. an empty status) is not stored
		}
		want.Version = run.Version
		got, err := run.StoredCopy()
		if err != nil {
			t.Fatalf("StoredCopy: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("StoredCopy differs from a round trip:\n got %#v\nwant %#v", got, want)
		}
		fr, err := frozen.NewStoredRun(run)
		if err != nil {
			t.Fatalf("NewStoredRun: %v", err)
		}
		if thawed := fr.Thaw(); !reflect.DeepEqual(thawed, want) {
			t.Fatalf("NewStoredRun differs from a round trip:\n got %#v\nwant %#v", thawed, want)
		}
	})
}

// TestFormatTimeMatchesTheLayout: the hand-written formatting agrees with
// time's own for the whole range of years Python writes and beyond it,
// in any location.
func TestFormatTimeMatchesTheLayout(t *testing.T) {
	t.Parallel()
	// Instants outside years 1–9999 in UTC are written clamped to them,
	// what Python's datetime holds (TestTimePastYear9999IsClamped).
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	reference := func(ts time.Time) string {
		ts = ts.UTC()
		if ts.Before(lo) {
			ts = lo
		} else if ts.After(hi) {
			ts = hi
		}
		s := ts.Format("2006-01-02T15:04:05")
		if us := ts.Nanosecond() / 1000; us != 0 {
			s += fmt.Sprintf(".%06d", us)
		}
		return s + "+00:00"
	}
	east := time.FixedZone("east", 5*3600+30*60)
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 0, 0, 0, 999, time.UTC), // under a microsecond: no fraction
		time.Date(2026, 11, 30, 0, 30, 0, 1000, east),   // the day before, in UTC
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		times = append(times, time.Unix(rng.Int64N(253402300800), rng.Int64N(1e9)).In(east))
	}
	for _, ts := range times {
		if got, want := durable.FormatTime(ts), reference(ts); got != want {
			t.Fatalf("FormatTime(%v) = %s, want %s", ts, got, want)
		}
	}
}

// Python copies ASK_USER's choices as given: a wait it wrote may hold
// numbers, objects or booleans, and a rewrite must keep them.
func TestWaitChoicesOtherThanStringsSurviveARewrite(t *testing.T) {
	t.Parallel()
	in := strings.Replace(pythonRun, `"choices": ["yes", "no"]`, `"choices": ["yes", 2, 1.50, {"id": 3}, true, null]`, 1)
	run, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRun(run, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"choices": ["yes", 2, 1.50, {"id": 3}, true, null]`) {
		t.Fatalf("choices changed on rewrite: %s", b)
	}
	if want := []string{"yes", "2", "1.50", `{"id": 3}`, "true", "null"}; !reflect.DeepEqual(run.Waiting.Choices, want) {
		t.Errorf("display Choices = %q, want %q", run.Waiting.Choices, want)
	}
	// A caller that replaces Choices replaces the list written.
	run.Waiting.Choices = []string{"a"}
	if b, err = durable.MarshalRun(run, pyjson.Line); err != nil || !strings.Contains(string(b), `"choices": ["a"]`) {
		t.Fatalf("assigned Choices not written: %s (%v)", b, err)
	}
}

// Python keeps "" and null apart in a run's optional strings (a run started
// with actor_id=""); a rewrite writes what was read, in every style.
func TestRunEmptyStringsStayEmpty(t *testing.T) {
	t.Parallel()
	in := strings.NewReplacer(`"error": null`, `"error": ""`, `"actor_id": "actor_1"`, `"actor_id": ""`,
		`"session_id": "sess_1"`, `"session_id": ""`, `"parent_run_id": null`, `"parent_run_id": ""`).Replace(pythonRun)
	run, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRun(run, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"error", "actor_id", "session_id", "parent_run_id"} {
			if !strings.Contains(string(b), `"`+k+`":""`) && !strings.Contains(string(b), `"`+k+`": ""`) {
				t.Errorf("style %+v: %s not kept as \"\": %s", st, k, b)
			}
		}
	}
	// A value the runtime sets replaces the "" read.
	run.Error = "boom"
	if b, _ := durable.MarshalRun(run, pyjson.Line); !strings.Contains(string(b), `"error": "boom"`) {
		t.Errorf("error not written: %s", b)
	}
}

// ParseTime reads what Python's datetime.fromisoformat (3.11) reads.
func TestParseTimeReadsPythonSpellings(t *testing.T) {
	t.Parallel()
	at := func(h, m, s, ns int) time.Time { return time.Date(2030, 1, 2, h, m, s, ns, time.UTC) }
	for in, want := range map[string]time.Time{
		"2030-01-02t03:04:05z":            at(3, 4, 5, 0),
		"2030-01-02 03:04:05":             at(3, 4, 5, 0),
		"2030-01-02_03:04:05":             at(3, 4, 5, 0),
		"2030-01-02T04:04:05+01":          at(3, 4, 5, 0),
		"2030-01-02T04:04:05+0100":        at(3, 4, 5, 0),
		"2030-01-02T02:34:05-00:30":       at(3, 4, 5, 0),
		"2030-01-02T04:04:06+01:00:01":    at(3, 4, 5, 0),
		"2030-01-02T03:04:05.5Z":          at(3, 4, 5, 500_000_000),
		"20300102T030405Z":                at(3, 4, 5, 0),
		"20300102T030405.25+0000":         at(3, 4, 5, 250_000_000),
		"20300102T0304":                   at(3, 4, 0, 0),
		"20300102":                        at(0, 0, 0, 0),
		"2030-01-02T03":                   at(3, 0, 0, 0),
		"  2030-01-02T03:04:05.000001Z  ": at(3, 4, 5, 1000),
		// Spellings CPython 3.11's fromisoformat also reads: ISO week
		// dates, an offset's fraction, a point with no digits before the
		// zone. 2030-W01-3 is 2030-01-02.
		"2030-W01-3T03:04:05Z":                       at(3, 4, 5, 0),
		"2030W013T030405Z":                           at(3, 4, 5, 0),
		"2030-W01":                                   time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC),
		"2030-01-02T05:34:20.5+02:30:15.5":           at(3, 4, 5, 0),
		"2030-01-02T03:04:04.999999-00:00:00.000001": at(3, 4, 4, 999_999_000), // a zero offset's fraction is dropped
		"2030-01-02T03:04:05.+00:00":                 at(3, 4, 5, 0),
		"2030-01-02T03:04:05.Z":                      at(3, 4, 5, 0),
	} {
		got, err := durable.ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "tomorrow", "2030-13-02", "2030-01-02T25:00", "2030-01-02T03:04:05+5", "2030/01/02",
		"2025-W53-1", "2030-W00-1", "2030-W01-8", "2030-w01-1", "2030-01-02T03:04:05."} {
		if _, err := durable.ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}

// Python stores WAIT_UNTIL's until as the node gave it. A deadline we
// cannot read keeps the run readable: the text is written back as read
// and the wait is never due (Until is zero).
func TestUnreadableUntilKeepsTheRun(t *testing.T) {
	t.Parallel()
	in := strings.Replace(pythonRun, `"until": null`, `"until": "next tuesday"`, 1)
	run, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatalf("a run with an unreadable until was refused: %v", err)
	}
	if !run.Waiting.Until.IsZero() {
		t.Errorf("Until = %v, want zero", run.Waiting.Until)
	}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRun(run, st)
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), " ", ""), `"until":"nexttuesday"`) {
			t.Errorf("style %+v: until not written as read: %s (%v)", st, b, err)
		}
	}
	c := run.Waiting.Clone()
	if b, _ := durable.MarshalRun(&durable.RunState{RunID: "x", Status: durable.RunWaiting, Waiting: c, Vars: map[string]any{}}, pyjson.Line); !strings.Contains(string(b), `"until": "next tuesday"`) {
		t.Errorf("a clone lost the text: %s", b)
	}
	// A time the runtime sets replaces it.
	run.Waiting.Until = durable.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if b, _ := durable.MarshalRun(run, pyjson.Line); !strings.Contains(string(b), `"until": "2030-01-01T00:00:00+00:00"`) {
		t.Errorf("new until not written: %s", b)
	}
}

// FuzzParseTime: ParseTime never panics, and what it reads it writes back
// in a form it reads as the same instant.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2030-01-02T03:04:05.5+01:00", "20300102T030405Z", "2030-01-02 03:04", "2030-01-02t03z", "next tuesday", "2030-01-02T03:04:05-00:30:15"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := durable.ParseTime(s)
		if err != nil {
			return
		}
		back, err := durable.ParseTime(tm.String())
		if err != nil || !back.Equal(tm.Time) {
			t.Fatalf("%q read as %v, written %q, read back as %v (%v)", s, tm, tm.String(), back, err)
		}
	})
}

// A deadline assigned over an until read as unreadable text replaces the
// text in every encoding, the generic JSONValue (other styles, Map) as
// well as the Line fast path. Would break: untilValue writing the kept
// text whatever Until holds (dropping its "Until.IsZero()" guard), so a
// canonical write or the wait stored in vars kept "next tuesday" while
// the scheduler saw the new deadline.
func TestUntilAssignedOverUnreadableTextReplacesItInEveryEncoding(t *testing.T) {
	t.Parallel()
	run, err := durable.UnmarshalRun([]byte(strings.Replace(pythonRun, `"until": null`, `"until": "next tuesday"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	run.Waiting.Until = durable.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	const want = "2030-01-01T00:00:00+00:00"
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRun(run, st)
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), " ", ""), `"until":"`+want+`"`) {
			t.Errorf("style %+v: new until not written: %s (%v)", st, b, err)
		}
	}
	if got := run.Waiting.Map()["until"]; got != want {
		t.Errorf("Map until = %#v, want %q", got, want)
	}
}
