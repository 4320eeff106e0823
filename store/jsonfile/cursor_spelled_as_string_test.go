package jsonfile_test

import (
	"context"
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestCursorSpelledAsStringLoadsAsPythonReadsIt: Python's
// JsonFileCommandCursorStore.load (abstractruntime/storage/commands.py)
// returns int(data.get("cursor") or 0), so a cursor file whose cursor is
// the string "12" (a hand edit, another tool) loads as 12, in int()'s
// spelling (surrounding spaces, a sign, '_' between digits), saturated
// past the int64 range as a number is. Read as 0, the consumer replayed
// commands 1..12 (pause, cancel, resume again), and the cursor was no
// floor for the seq counter at open either. A string int() refuses, like
// any other cursor that is no integer, loads as 0.
func TestCursorSpelledAsStringLoadsAsPythonReadsIt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cursor string
		want   int64
	}{
		{`"12"`, 12},
		{`" 12\n"`, 12},
		{`"+1_2"`, 12},
		{`"-3"`, -3},
		{`"99999999999999999999"`, math.MaxInt64},
		{`"-99_999_999_999_999_999_999"`, math.MinInt64},
		{`true`, 1},
		{`false`, 0},
		{`null`, 0},
		{`""`, 0},
		{`"abc"`, 0},
		{`"12.5"`, 0},
		{`"1__2"`, 0},
		{`[12]`, 0},
	} {
		t.Run(c.cursor, func(t *testing.T) {
			t.Parallel()
			if cur, err := loadCursorFile(t, c.cursor); err != nil || cur != c.want {
				t.Errorf("CursorLoad of a cursor file holding \"cursor\": %s = %d, %v; want %d (as Python's int(cursor or 0))", c.cursor, cur, err, c.want)
			}
		})
	}
}

// TestCursorSpelledAsStringIsSeqFloor: the saved cursors are a floor for
// the seq counter at open (for seqs Python's delete_by_run removed); a
// cursor spelled as a string is one too, so a consumer at it does not
// skip the next command appended.
func TestCursorSpelledAsStringIsSeqFloor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	writeCursorFile(t, dir, `"12"`)
	s := open(t, dir, true)
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
	if err != nil || res.Seq != 13 {
		t.Fatalf("CommandAppend after a cursor file holding \"12\" = %+v, %v; want seq 13", res, err)
	}
}
