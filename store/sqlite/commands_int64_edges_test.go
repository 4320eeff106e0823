package sqlite_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// editedByHand opens a store on cfg, appends command c1 to it, closes it,
// runs stmt (with args) on its file directly, as a hand edit or another
// tool would, and returns the store opened again.
func editedByHand(t *testing.T, cfg sqlite.Config, stmt string, args ...any) *sqlite.Store {
	t.Helper()
	s := openWith(t, cfg)
	if _, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, cfg.Path)
	if _, err := db.Exec(stmt, args...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return openWith(t, cfg)
}

// TestCommandAppendRefusedWhenNoSeqIsLeft: with the commands'
// AUTOINCREMENT counter at the largest int64 (a row or sqlite_sequence set
// by hand), SQLite refuses the insert with SQLITE_FULL, "database or disk
// is full". The append must fail (no seq past every issued one exists),
// and its error must name the cause rather than send the operator looking
// for disk space. The store goes on: duplicates are still answered and
// other writes commit.
func TestCommandAppendRefusedWhenNoSeqIsLeft(t *testing.T) {
	t.Parallel()
	modes := map[string]sqlite.Config{
		"exclusive":   {},
		"no redo log": {NoRedoLog: true},
		"shared":      {Shared: true},
	}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := editedByHand(t, cfg, `UPDATE sqlite_sequence SET seq = ? WHERE name = 'commands'`, int64(math.MaxInt64))
			res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "cancel"})
			if err == nil || !strings.Contains(err.Error(), "no seq left") {
				t.Fatalf("CommandAppend with the seq counter at MaxInt64 = %+v, %v; want an error saying no seq is left", res, err)
			}
			if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil || !res.Duplicate || res.Seq != 1 {
				t.Errorf("CommandAppend(c1) again = %+v, %v; want a duplicate at seq 1", res, err)
			}
			got, _, err := s.CommandListAfter(ctx, 0, 10)
			if err != nil || len(got) != 1 || got[0].CommandID != "c1" {
				t.Errorf("CommandListAfter(0) = %d commands, %v; want c1 alone", len(got), err)
			}
			if err := s.CursorSave(ctx, "worker", 1); err != nil {
				t.Errorf("CursorSave after the refused append: %v", err)
			}
		})
	}
}

// TestCursorPastInt64RangeSaturates: a cursor written by hand past the
// int64 range (to skip the backlog) is kept by SQLite as a REAL (1e20).
// Python's load reads it as int(1e20), past every seq; the store reads it
// saturated at the int64 bound rather than failing (or, converted as Go
// converts an out-of-range float, as a negative cursor that replays every
// command). A REAL inside the range is truncated, as int() does.
func TestCursorPastInt64RangeSaturates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := editedByHand(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")},
		`INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES
		('ahead', 99999999999999999999, '2026-12-02T10:00:00+00:00'),
		('behind', -99999999999999999999, '2026-12-02T10:00:00+00:00'),
		('real', 7.9, '2026-12-02T10:00:00+00:00')`)
	for _, c := range []struct {
		consumer string
		want     int64
	}{{"ahead", math.MaxInt64}, {"behind", math.MinInt64}, {"real", 7}} {
		if got, err := s.CursorLoad(ctx, c.consumer); err != nil || got != c.want {
			t.Errorf("CursorLoad(%s) = %d, %v; want %d", c.consumer, got, err, c.want)
		}
	}
	if got, _, err := s.CommandListAfter(ctx, math.MaxInt64, 10); err != nil || len(got) != 0 {
		t.Errorf("a consumer at the loaded cursor lists %d commands, %v; want none", len(got), err)
	}
}
