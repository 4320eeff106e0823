package jsonfile_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// writeCursorFile writes the default consumer's cursor file as Python's
// JsonFileCommandCursorStore (or a hand edit) leaves it, the cursor
// spelled as given.
func writeCursorFile(t *testing.T, dir, cursor string) {
	t.Helper()
	data := "{\n  \"cursor\": " + cursor + ",\n  \"updated_at\": \"2026-12-02T10:00:00+00:00\"\n}"
	if err := os.WriteFile(filepath.Join(dir, "commands_cursor.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadCursorFile opens a store on a fresh data dir whose cursor file holds
// cursor and returns what its CursorLoad of the default consumer gives.
func loadCursorFile(t *testing.T, cursor string) (int64, error) {
	t.Helper()
	dir := t.TempDir()
	writeCursorFile(t, dir, cursor)
	return open(t, dir, true).CursorLoad(context.Background(), store.DefaultConsumer)
}

// A cursor file whose number is past the int64 range (hand-edited to skip
// the backlog: {"cursor": 99999999999999999999}) is read by Python's
// JsonFileCommandCursorStore.load as that (big) int, so list_after returns
// nothing. The store reads it saturated at the int64 bound: converted
// with int64(f), as it was, the float gives math.MinInt64 on amd64, and a
// consumer listing after that cursor replays every command in the inbox
// (pause, cancel, resume... again). An infinity (1e400, Infinity), which
// Python's int() refuses (its load then returns 0), is past the range and
// saturates alike; NaN is no integer. Floats inside the range truncate,
// as int() does.
func TestCursorPastInt64RangeIsNotReadAsNegative(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cursor string
		want   int64
	}{
		{"99999999999999999999", math.MaxInt64},
		{"1e20", math.MaxInt64},
		{"1.5e19", math.MaxInt64},
		{"-99999999999999999999", math.MinInt64},
		{"-1e20", math.MinInt64},
		{"7.9", 7},
		{"1e-400", 0},
		{"1e400", math.MaxInt64},
		{"Infinity", math.MaxInt64},
		{"-Infinity", math.MinInt64},
		{"NaN", 0},
	} {
		t.Run(c.cursor, func(t *testing.T) {
			t.Parallel()
			cur, err := loadCursorFile(t, c.cursor)
			if err != nil || cur != c.want {
				t.Fatalf("CursorLoad of a cursor file holding %s = %d, %v; want %d", c.cursor, cur, err, c.want)
			}
		})
	}
}

// The seq counter takes the saved cursors as a floor when the store
// opens, and the seqs in commands.jsonl. A cursor or a seq at (or, read
// saturated, past) math.MaxInt64 leaves no seq to hand out: lastSeq+1
// wrapped to math.MinInt64, and the command was accepted with that
// negative seq, which no consumer lists and a reopen reads as "a command
// without a seq" (so its command_id is not even known as a duplicate any
// more). The append must fail instead, saying why, and the store go on
// answering duplicates.
func TestCommandAppendRefusedWhenNoSeqIsLeft(t *testing.T) {
	t.Parallel()
	existing := `{"command_id": "c0", "run_id": "r1", "type": "pause", "payload": {}, ` +
		`"ts": "2026-01-01T09:00:00+00:00", "client_id": null, "seq": 5}` + "\n"
	for name, setup := range map[string]func(t *testing.T, dir string){
		"cursor at MaxInt64":      func(t *testing.T, dir string) { writeCursorFile(t, dir, "9223372036854775807") },
		"cursor past the range":   func(t *testing.T, dir string) { writeCursorFile(t, dir, "99999999999999999999") },
		"float cursor past range": func(t *testing.T, dir string) { writeCursorFile(t, dir, "1e20") },
		"seq past the range": func(t *testing.T, dir string) {
			line := strings.Replace(existing, `"c0"`, `"big"`, 1)
			line = strings.Replace(line, `"seq": 5`, `"seq": 99999999999999999999`, 1)
			if err := os.WriteFile(filepath.Join(dir, "commands.jsonl"), []byte(existing+line), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "commands.jsonl"), []byte(existing), 0o644); err != nil {
				t.Fatal(err)
			}
			setup(t, dir)
			s := open(t, dir, true)
			res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
			if err == nil || !strings.Contains(err.Error(), "no seq left") {
				t.Fatalf("CommandAppend = %+v, %v; want an error saying no seq is left", res, err)
			}
			if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c0", RunID: "r1", Type: "pause"}); err != nil || !res.Duplicate || res.Seq != 5 {
				t.Errorf("CommandAppend(c0) again = %+v, %v; want a duplicate at seq 5", res, err)
			}
			got, _, err := s.CommandListAfter(ctx, math.MinInt64, 10)
			if err != nil || len(got) != 1 || got[0].CommandID != "c0" {
				t.Errorf("CommandListAfter(MinInt64) = %d commands, %v; want c0 alone", len(got), err)
			}
		})
	}
}
