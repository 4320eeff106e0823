package store_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestPythonStrip: the ids of a command, the session
// filter of RunIndex and the lifecycle strings are trimmed "as every
// Python store trims them", with str.strip(). Python's str.strip()
// removes U+001C..U+001F (str.isspace is true for them); strings.TrimSpace
// does not (internal/pyval.Strip exists for this). A command id
// "c1\x1f" is the command "c1" to a Python process sharing the database
// but a different command here, so the duplicate check misses it.
func TestPythonStrip(t *testing.T) {
	t.Parallel()
	c := &durable.CommandRecord{CommandID: "\x1fc1\x1c", RunID: "r1\x1e", Type: "\x1dpause"}
	if _, err := store.PrepareCommand(c, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c.CommandID != "c1" || c.RunID != "r1" || c.Type != "pause" {
		t.Errorf("PrepareCommand kept %q %q %q; Python's strip() gives \"c1\" \"r1\" \"pause\"", c.CommandID, c.RunID, c.Type)
	}
	lc := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{"source": "\x1e api "}})
	if lc["source"] != "api" {
		t.Errorf("RunLifecycle source = %q; Python's sanitize_run_lifecycle gives \"api\"", lc["source"])
	}
	p := &store.RunIndexParams{SessionID: "s1\x1f"}
	if !p.Matches(&store.RunIndexRow{RunID: "r", SessionID: "s1"}) {
		t.Error("RunIndex session filter \"s1\\x1f\" does not match session \"s1\"; Python strips it to \"s1\"")
	}
}
