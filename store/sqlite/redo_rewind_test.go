package sqlite

import (
	"strings"
	"sync"
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

// TestRedo_ForegroundDrainWakesTheRewinder: only the background goroutine
// rewinds the redo log (rewindWhenDue, after its own drains). A drain done
// in the foreground (Settle here; reads and writes through the database
// do the same) that empties the queue of a log past redoRewindBytes must
// wake it: no commit may come to do so, and the log would then keep its
// megabytes, to be read whole by the next open. The goroutine is parked
// where it would wait for a wake-up, so the wake-up the drain leaves is
// still in the channel when the test looks.
func TestRedo_ForegroundDrainWakesTheRewinder(t *testing.T) {
	g := newRedoRig(t, "NORMAL")
	g.hold()
	r := redoRun(strings.Repeat("k", 32))
	g.fillPastRewind(r, false)
	if n := g.pending(); n == 0 {
		t.Fatal("nothing queued after the commits; the drain below would have nothing to do")
	}
	parked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	park := func() {
		once.Do(func() {
			close(parked)
			<-release
		})
	}
	g.s.redo.waitingForTest.Store(&park)
	t.Cleanup(func() {
		g.s.redo.waitingForTest.Store(nil)
		select {
		case <-release:
		default:
			close(release)
		}
	})
	// Held, the goroutine takes this wake-up (or one the commits left),
	// applies nothing and parks before it waits again.
	g.s.redo.kickApply()
	<-parked
	select { // the commits' wake-up, if the goroutine had not taken it
	case <-g.s.redo.kick:
	default:
	}
	if err := g.s.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := g.pending(); n != 0 {
		t.Fatalf("%d commits still queued after Settle", n)
	}
	woken := len(g.s.redo.kick) == 1
	g.s.redo.heldForTest.Store(false)
	g.s.redo.waitingForTest.Store(nil)
	close(release)
	if !woken {
		t.Fatal("a foreground drain that emptied the queue of a redo log past redoRewindBytes did not wake the goroutine that rewinds it")
	}
	// Woken, the goroutine rewinds the log.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		base, off := g.logPosition()
		if base > 1 && off <= redoRewindBytes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the goroutine, woken, did not rewind the log: first LSN %d, %d bytes", base, off)
		}
	}
}
