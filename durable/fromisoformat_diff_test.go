package durable_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// ParseTime promises to read timestamps "as Python's
// datetime.fromisoformat (3.11) reads one", and docs/compatibility.md
// says deadlines in "any spelling datetime.fromisoformat reads" are
// parsed and compared as instants. Python 3.11 reads a comma as the
// decimal sign (ISO 8601's preferred one) after any time form, and an
// offset in the basic form with seconds (±HHMMSS[.ffffff]); ParseTime
// reads the comma only after an extended HH:MM:SS (time.Parse does) and
// refuses it after a basic HHMMSS or an HH:MM, and refuses ±HHMMSS. So our WAIT_UNTIL / WAIT_EVENT fail an effect with
// such an until ("invalid ISO timestamp") that Python accepts, and a
// run Python stored waiting until such a text is kept as text and
// never falls due. Expected values: Python 3.11.7
// datetime.fromisoformat(s).astimezone(timezone.utc).isoformat().
func TestParseTimeReadsFromisoformatSpellings(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"2030-01-01T120000,5Z":         "2030-01-01T12:00:00.500000+00:00",
		"20300101T120000,25":           "2030-01-01T12:00:00.250000+00:00",
		"2030-01-01T12:30,5Z":          "2030-01-01T12:30:00.500000+00:00",
		"2030-01-01T12:00:00+053000":   "2030-01-01T06:30:00+00:00",
		"2030-01-01T12:00:00+053000.5": "2030-01-01T06:29:59.500000+00:00",
		"2030-01-01T12:00:00-000015":   "2030-01-01T12:00:15+00:00",
	} {
		got, err := durable.ParseTime(s)
		if err != nil || got.String() != want {
			t.Errorf("ParseTime(%q) = %q, %v; Python's fromisoformat reads %s", s, got.String(), err, want)
		}
	}
}

// A run a Python process stored waiting until "20300101T120000,5Z" (WAIT_UNTIL
// keeps the node's text as it is): we keep the until as unreadable text,
// so the wait never falls due, though Python's parser reads it.
func TestPythonStoredCommaDeadlineFallsDue(t *testing.T) {
	t.Parallel()
	run := `{"run_id": "r1", "workflow_id": "wf", "status": "waiting", "current_node": "w", "vars": {}, "waiting": {"reason": "until", "wait_key": null, "until": "20300101T120000,5Z", "resume_to_node": "done", "result_key": null, "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
	r, err := durable.UnmarshalRun([]byte(run))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Waiting.ReleasedWhenDue() || r.Waiting.Until.String() != "2030-01-01T12:00:00.500000+00:00" {
		t.Errorf("until read as %q (released when due: %v); want 2030-01-01T12:00:00.500000+00:00",
			r.Waiting.Until.String(), r.Waiting.ReleasedWhenDue())
	}
}

// pyFromISOFormatScript reads a JSON list of texts on stdin and prints each
// as Python's fromisoformat reads it (UTC isoformat; naive as UTC), or
// "ERR".
const pyFromISOFormatScript = `
import json, sys
from datetime import datetime, timezone
out = []
for s in json.loads(sys.stdin.read()):
    try:
        d = datetime.fromisoformat(s)
        if d.tzinfo is None: d = d.replace(tzinfo=timezone.utc)
        out.append(d.astimezone(timezone.utc).isoformat())
    except Exception:
        out.append("ERR")
print(json.dumps(out))
`

// Differential: well-formed timestamps in the spellings above (comma
// decimal sign, ±HHMMSS offsets), generated from a fixed grammar, parsed by
// Python's fromisoformat and by ParseTime; every text Python reads must
// read as the same instant here.
func TestParseTimeDifferential(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot compare with datetime.fromisoformat")
	}
	var ins []string
	for _, date := range []string{"2030-01-01", "20240229", "1999-12-31"} {
		for _, sep := range []string{"T", " "} {
			for _, clock := range []string{"12:00:00", "120000", "23:59:59", "12:30"} {
				for _, frac := range []string{"", ",5", ",123456", ",1234567", ".25"} {
					for _, zone := range []string{"", "Z", "+00:00", "+053000", "-013015", "+053000.5", "-0000"} {
						ins = append(ins, date+sep+clock+frac+zone)
					}
				}
			}
		}
	}
	want := pythonFromISOFormat(t, py, ins)
	var bad []string
	for i, s := range ins {
		if want[i] == "ERR" {
			continue
		}
		got, err := durable.ParseTime(s)
		if err != nil || got.String() != want[i] {
			bad = append(bad, s+" -> "+got.String()+" (Python "+want[i]+")")
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d timestamps Python reads are refused or read differently, e.g.:\n%s",
			len(bad), len(ins), strings.Join(bad[:min(10, len(bad))], "\n"))
	}
}

// TestParseTimeReadsEverySpellingPythonReads: spellings Python 3.11's
// datetime.fromisoformat reads (its C parser) read as the same instant
// (compatibility.md: a deadline in any such spelling is compared as an
// instant). Expected values are Python's, converted to UTC.
func TestParseTimeReadsEverySpellingPythonReads(t *testing.T) {
	t.Parallel()
	at := func(h, m, s, us int) time.Time { return time.Date(2030, 1, 1, h, m, s, us*1000, time.UTC) }
	for in, want := range map[string]time.Time{
		// A basic date then any single character, a digit included
		// (time.go:113 leaves a basic date followed by a digit as it is).
		"2030010101200":  at(12, 0, 0, 0),
		"20300101012:00": at(12, 0, 0, 0),
		// A fraction of a minute: Python reads HH:MM.fff.
		"2030-01-01T12:30.5":       at(12, 30, 0, 500000),
		"2030-01-01T12:30.5+00:00": at(12, 30, 0, 500000),
		// An offset with seconds after a time without seconds (no
		// HH or HH:MM layout carries a Z07:00:00 zone).
		"2030-01-01T12+05:30:15":    at(6, 29, 45, 0),
		"2030-01-01T12:30+05:30:15": at(6, 59, 45, 0),
		// A fraction of an hour, as Python reads HH.fff.
		"2030-01-01T12.5": at(12, 0, 0, 500000),
		// Week dates split where Python splits them: a digit after
		// YYYY-Www-D makes the hyphen the separator (Monday of week 1 of
		// 2030 is 2029-12-31); YYYYWwwD then a digit separator.
		"2030-W01-2012": time.Date(2029, 12, 31, 20, 12, 0, 0, time.UTC),
		"2030-W01-2T12": at(12, 0, 0, 0),
		"2030W012012":   at(12, 0, 0, 0),
		"2030W01T1230":  time.Date(2029, 12, 31, 12, 30, 0, 0, time.UTC),
	} {
		got, err := durable.ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; Python reads %s", in, got, err, durable.FormatTime(want))
		}
	}
}

// TestParseTimeOffsetDifferential: offsets in every shape Python 3.11's
// parser of an offset (its time grammar: HH[[:]MM[[:]SS]], a fraction
// after '.' or ',' following any part, a colon after HH:MM:SS taken for
// the decimal sign) reads or refuses, compared both ways with
// datetime.fromisoformat: a text Python reads is the same instant here,
// and a text it refuses is refused.
func TestParseTimeOffsetDifferential(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot compare with datetime.fromisoformat")
	}
	var ins []string
	for _, sign := range []string{"+", "-"} {
		for _, whole := range []string{"", "5", "05", "053", "0530", "05301", "053015", "0530150",
			"05:30", "05:3", "05:30:15", "05:30:1", "05:3015", "0530:15", "05:30:15:", "05:30:15:5",
			"05:30:15:1234567", "053015:5", "00", "0000", "00:00", "00:00:00", "23:59:59", "24:00", "05:60", "00:99"} {
			for _, frac := range []string{"", ".", ",", ".5", ",15", ".1234567", ".5x", ".5:0"} {
				ins = append(ins, "2030-01-01T12:00:00"+sign+whole+frac)
			}
		}
	}
	want := pythonFromISOFormat(t, py, ins)
	var bad []string
	for i, s := range ins {
		got, err := durable.ParseTime(s)
		switch {
		case want[i] == "ERR" && err == nil:
			bad = append(bad, s+" -> "+got.String()+" (Python refuses it)")
		case want[i] != "ERR" && (err != nil || got.String() != want[i]):
			bad = append(bad, s+" -> "+got.String()+" (Python "+want[i]+")")
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d offsets are read differently from Python, e.g.:\n%s",
			len(bad), len(ins), strings.Join(bad[:min(10, len(bad))], "\n"))
	}
}

// pythonFromISOFormat returns, for each text, Python's
// datetime.fromisoformat(s) in UTC as isoformat(), or "ERR".
func pythonFromISOFormat(t *testing.T, py string, ins []string) []string {
	t.Helper()
	req, _ := json.Marshal(ins)
	script := filepath.Join(t.TempDir(), "t.py")
	if err := os.WriteFile(script, []byte(pyFromISOFormatScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(ins) {
		t.Fatalf("python3 output: %v (%d values)", err, len(want))
	}
	return want
}
