package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// testCommandTSText: a client's ts is stored as given (gateway-api §4.1),
// a time or not, and reads back as the same text; a time among them is
// also parsed into TS.
func testCommandTSText(t *testing.T, s store.Store) {
	cases := []struct {
		id, text string
		isTime   bool
	}{
		{"ts-z", "2026-01-02T03:04:05.5Z", true},
		{"ts-offset", "2026-01-02T05:04:05+02:00", true},
		{"ts-words", "yesterday at noon ✓", false},
	}
	for _, c := range cases {
		cmd := &durable.CommandRecord{CommandID: c.id, RunID: "run-ts", Type: "pause"}
		cmd.SetTSText(c.text)
		appendCommand(t, s, cmd)
	}
	got, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases) {
		t.Fatalf("listed %d commands, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		g := got[i]
		if g.CommandID != c.id || g.TSText() != c.text || g.TSValue() != c.text {
			t.Errorf("command %s: ts text %q (wire %v), want %q as given", g.CommandID, g.TSText(), g.TSValue(), c.text)
		}
		if g.TS.IsZero() == c.isTime {
			t.Errorf("command %s: TS %v; a time text must parse, another must leave TS zero", g.CommandID, g.TS)
		}
		line, err := pyjson.Marshal(g.JSONValue(), pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := pyjson.Marshal(c.text, pyjson.Line)
		if !strings.Contains(string(line), `"ts": `+string(want)) {
			t.Errorf("command %s wire %s; want ts %s", g.CommandID, line, want)
		}
	}
}

// testCommandTSInvalidUTF8: a ts text that is not UTF-8 is refused, as an
// id that is not, rather than stored as bytes some stores read back as
// U+FFFD.
func testCommandTSInvalidUTF8(t *testing.T, s store.Store) {
	cmd := &durable.CommandRecord{CommandID: "ts-bad", RunID: "run-ts", Type: "pause"}
	cmd.SetTSText("\xffx")
	if _, err := s.CommandAppend(t.Context(), cmd); !errors.Is(err, store.ErrInvalidCommand) || !strings.Contains(err.Error(), "ts") {
		t.Fatalf("CommandAppend with a ts that is not UTF-8: %v; want ErrInvalidCommand naming ts", err)
	}
	if got, _, err := s.CommandListAfter(t.Context(), 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("after a refused append: %d commands, %v; want none", len(got), err)
	}
}
