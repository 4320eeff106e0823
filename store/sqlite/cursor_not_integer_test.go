package sqlite_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestCursorThatIsNoIntegerLoadsAsZero: Python's
// SqliteCommandCursorStore.load reads command_cursors.cursor as
// `int(row["cursor"] or 0)` inside `try: … except Exception: return 0`,
// so a cursor that is no integer (a hand edit, another tool: an empty text
// or 'abc' kept as TEXT by the INTEGER column's affinity, a blob) loads as
// 0, as the JSON-file store's CursorLoad does for a cursor file without a
// number; a failed CursorLoad would keep the consumer's command loop from
// starting. A text or blob int() reads is its integer, and an infinity
// saturates as a number past the int64 range does.
func TestCursorThatIsNoIntegerLoadsAsZero(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := editedByHand(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")},
		`INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES
		('empty', '', '2026-12-02T10:00:00+00:00'),
		('word', 'abc', '2026-12-02T10:00:00+00:00'),
		('decimal text', '12.5x', '2026-12-02T10:00:00+00:00'),
		('empty blob', X'', '2026-12-02T10:00:00+00:00'),
		('binary blob', X'00ff', '2026-12-02T10:00:00+00:00'),
		('blob', X'3132', '2026-12-02T10:00:00+00:00'),
		('underscored', ' 1_2 ', '2026-12-02T10:00:00+00:00'),
		('huge text', '+99_999_999_999_999_999_999', '2026-12-02T10:00:00+00:00'),
		('inf', 9e999, '2026-12-02T10:00:00+00:00'),
		('-inf', -9e999, '2026-12-02T10:00:00+00:00')`)
	for _, c := range []struct {
		consumer string
		want     int64
	}{
		{"empty", 0}, {"word", 0}, {"decimal text", 0}, {"empty blob", 0}, {"binary blob", 0},
		{"blob", 12}, {"underscored", 12}, {"huge text", math.MaxInt64},
		{"inf", math.MaxInt64}, {"-inf", math.MinInt64},
	} {
		if got, err := s.CursorLoad(ctx, c.consumer); err != nil || got != c.want {
			t.Errorf("CursorLoad(%s) = %d, %v; want %d, nil", c.consumer, got, err, c.want)
		}
	}
}
