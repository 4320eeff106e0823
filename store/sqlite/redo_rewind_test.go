package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// The package doc promises the redo log is rewound once the database
// holds it (at 4 MB). Writes that go through the database (recordedTx:
// command appends, claims, cursor saves, commits of runs the cache cannot
// hold) appended to the log but never woke the goroutine that rewinds it,
// so without commits from the cache the log grew without bound, and a
// reopen after a kill read all of it into memory.
func TestLogOfDatabaseWritesIsRewound(t *testing.T) {
	ctx := t.Context()
	waitRewound := func(t *testing.T, g *redoRig) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			_, off := g.logPosition()
			if off <= redoRewindBytes {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the redo log holds %d bytes the database has held for seconds (nothing pending): never rewound past %d",
					off, redoRewindBytes)
			}
		}
	}
	t.Run("commands", func(t *testing.T) {
		g := newRedoRig(t, "NORMAL")
		payload := map[string]any{"blob": strings.Repeat("c", 256<<10)}
		for range 40 { // ~10 MB of command appends, each through the database
			if _, err := g.s.CommandAppend(ctx, &durable.CommandRecord{RunID: "r", Type: "pause", Payload: payload}); err != nil {
				t.Fatal(err)
			}
		}
		waitRewound(t, g)
	})
	t.Run("run larger than the cache takes", func(t *testing.T) {
		g := newRedoRig(t, "NORMAL")
		// The default cache (16 MB) keeps no state over 2 MB: every commit
		// of this run goes through the database.
		r := redoRun(strings.Repeat("b", 32))
		r.Vars = map[string]any{"doc": strings.Repeat("d", 3<<20)}
		if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, RandomID: true}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			r.Vars["i"] = i
			if err := g.s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
				t.Fatal(err)
			}
		}
		waitRewound(t, g)
	})
}
