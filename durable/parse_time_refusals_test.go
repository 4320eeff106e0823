package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// ParseTime promises to read timestamps "as Python's
// datetime.fromisoformat (3.11) reads one" (time.go), and spec §0 / §1.4
// make until and the other timestamps isoformat() text; docs/compatibility.md
// ("time comparisons") says a stored deadline "no parser reads is kept as
// text and never falls due", and WAIT_UNTIL fails the effect with
// "invalid ISO timestamp" for text that does not parse. Each text below
// is refused by Python 3.11.7's datetime.fromisoformat (checked with
// python3), and ParseTime read it as an instant; it refuses it now.

// An offset of 24 hours or more: Python raises "offset must be a timedelta
// strictly between -timedelta(hours=24) and timedelta(hours=24)".
func TestParseTimeRefusesOffsetOf24Hours(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"2030-01-01T00:00:00+24:00",
		"2030-01-01T00:00:00-24:00",
		"2030-01-01T00:00:00+2400",
		"2030-01-01T00:00:00+23:60",
		"2030-01-01T00:00:00+24:30",
	} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s; Python's fromisoformat refuses it (offset must be < 24h)", s, got)
		}
	}
	// A run Python stored with such a WAIT_UNTIL text (Python keeps the node's
	// text as given) must keep it, not rewrite it as another instant.
	in := `{"run_id": "r1", "workflow_id": "wf", "status": "waiting", "current_node": "w", "vars": {}, "waiting": {"reason": "until", "wait_key": null, "until": "2030-01-01T00:00:00+24:00", "resume_to_node": "done", "result_key": null, "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
	r, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"until": "2030-01-01T00:00:00+24:00"`) || r.Waiting.ReleasedWhenDue() {
		t.Errorf("until read as %q (released when due: %v), rewritten as\n%s\nwant the text kept and never due (docs/compatibility.md)",
			r.Waiting.Until.String(), r.Waiting.ReleasedWhenDue(), out)
	}
}

// Two zone designators or signs: Python answers "Invalid isoformat string".
func TestParseTimeRefusesDoubledZone(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"2030-01-01T00:00:00ZZ",
		"2030-01-01T00:00:00+Z",
		"2030-01-01T00:00:00-Z",
		"2030-01-01T00:00:00Z+05:00",
		"2030-01-01T00:00:00+-05:30",
		"2030-01-01T00:00:00--05:00",
		"2030-01-01T00:00:00++00:00",
	} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s; Python's fromisoformat refuses it", s, got)
		}
	}
}
