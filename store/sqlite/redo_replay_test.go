package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// TestRedoReplayRefusesAnUpdateOfAnotherVersion guards applyOp's check
// that a replayed update found the run at the version it replaced: when
// the database moved on without the log (a Python tool wrote to it before
// our binary replayed the log), the open fails with ErrConflict instead of
// dropping the commit and leaving the database no prefix of the writes.
func TestRedoReplayRefusesAnUpdateOfAnotherVersion(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("v", 32))
	g.commit(r, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	var img string
	g.held(func() {
		g.commit(r, 1, false) // version 1 -> 2, in the redo log only
		img = g.image()
	})
	if err := os.Rename(img+redoSuffix, img+".aside"); err != nil {
		t.Fatal(err)
	}
	other, err := New(ctx, Config{Path: img, NoRedoLog: true, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	o, err := other.RunGet(ctx, r.RunID)
	if err != nil || o.Version != 1 {
		t.Fatalf("the image's database: %+v, %v; want version 1", o, err)
	}
	o.Vars = map[string]any{"i": "elsewhere"}
	if err := other.RunCommit(ctx, &store.CommitParams{Run: o}); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(img+".aside", img+redoSuffix); err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, Config{Path: img, IdleCheckpoint: -1})
	if err == nil {
		got, _ := c.RunGet(ctx, r.RunID)
		_ = c.Close()
		t.Fatalf("replaying an update of version 1 onto version 2 succeeded (run now %+v)", got)
	}
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("open: %v, want ErrConflict", err)
	}
}

// TestRedoStoreWithoutALogReplaysAndRemovesIt guards openRedo with no
// redo log of its own (NoRedoLog, or no cache): it replays a killed
// process's log and removes the file, which it will not keep up to date.
func TestRedoStoreWithoutALogReplaysAndRemovesIt(t *testing.T) {
	for name, cfg := range map[string]Config{"NoRedoLog": {NoRedoLog: true}, "no cache": {CacheBytes: -1}} {
		t.Run(name, func(t *testing.T) {
			g := newRedoRig(t, "NORMAL")
			r := redoRun(strings.Repeat("n", 32))
			var img string
			g.held(func() {
				g.commit(r, 0, true)
				g.commit(r, 1, false)
				img = g.image()
			})
			cfg.Path = img
			c := openImage(t, cfg)
			if c.redo != nil {
				t.Fatal("the store opened without a redo log has one")
			}
			if _, err := os.Stat(img + redoSuffix); !os.IsNotExist(err) {
				t.Fatalf("the replayed redo log is still there: %v", err)
			}
			got, err := c.RunGet(t.Context(), r.RunID)
			if err != nil || got.Version != 2 || fmt.Sprint(got.Vars["i"]) != "1" {
				t.Fatalf("run after the replay: %+v, %v; want version 2, i=1", got, err)
			}
		})
	}
}
