package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A list by status first brings the list columns up to date
// (flushListStmts): it sets those of the runs created since the last
// flush (listUnlisted), updates those of the runs recorded stale and
// clears the records (listClear). When one of these fails (here a trigger
// refuses it), the list fails with its error. Were the first error passed
// over, the flush would commit with the new run still unlisted and count
// it flushed, and the list would leave the run out without a word, then
// and at every list after; were the last, the flush would report done a
// transaction that left its records behind.
func TestListFailsWhenItsFlushFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, trigger string
		listed        bool // the run exists, listed, before the trigger
	}{
		{"new run", `CREATE TRIGGER refuse_flush BEFORE UPDATE OF list_status ON runs
			WHEN OLD.list_status IS NULL BEGIN SELECT RAISE(ABORT, 'flush refused'); END`, false},
		{"stale run", `CREATE TRIGGER refuse_flush BEFORE DELETE ON runs_list_dirty
			BEGIN SELECT RAISE(ABORT, 'flush refused'); END`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openStore(t, Config{Path: path})
			r := redoRun("ffff")
			if c.listed {
				commitSteps(t, s, r, durable.RunRunning, true, "a")
			}
			if err := s.Close(); err != nil { // lists flushed
				t.Fatal(err)
			}
			db := openRawDB(t, path)
			if _, err := db.Exec(c.trigger); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			s = openStore(t, Config{Path: path, NoRedoLog: true})
			commitSteps(t, s, r, durable.RunCompleted, !c.listed, "b")
			runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunCompleted})
			if err == nil || !strings.Contains(err.Error(), "flush refused") {
				t.Fatalf("RunList(completed) = %d runs, %v; want the refused flush's error", len(runs), err)
			}
		})
	}
}
