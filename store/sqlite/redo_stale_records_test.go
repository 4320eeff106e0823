package sqlite

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// commitNumberedStep commits r with vars {"i": i} and one completed record s<i>.
func commitNumberedStep(t *testing.T, s *Store, r *durable.RunState, i, pad int, create bool) {
	t.Helper()
	r.Status = durable.RunRunning
	r.Vars = map[string]any{"i": i, "pad": strings.Repeat("p", pad)}
	rec := &durable.StepRecord{RunID: r.RunID, StepID: fmt.Sprint("s", i), Status: durable.StepCompleted, Result: i}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: create, RandomID: create,
		Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatalf("commit %d: %v", i, err)
	}
}

// TestRedoRecordsPastATornOneAreNotReplayedLater: a power cut
// with synchronous=NORMAL can lose the page of one redo record while a
// later record's page reached the disk. The replay rightly stops at the
// torn record; but the log is then restarted at the torn record's LSN, so
// the stale records behind it keep LSNs the new round uses next. Once the
// new round's first record is as long as the torn one, the next replay
// walks on into the previous life's records and applies a commit that
// was lost, on top of a state it was never made from (the package doc:
// "their LSNs are below next, so no reader takes them for new ones").
func TestRedoRecordsPastATornOneAreNotReplayedLater(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("e", 32))
	commitNumberedStep(t, g.s, r, 1, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	var img string
	var offN int64
	g.held(func() {
		g.s.redo.mu.Lock()
		offN = g.s.redo.file.off
		g.s.redo.mu.Unlock()
		commitNumberedStep(t, g.s, r, 2, 0, false) // record N
		commitNumberedStep(t, g.s, r, 3, 0, false) // record N+1
		img = g.image()
	})
	// The power cut: record N's page is lost (garbled), record N+1's kept.
	b, err := os.ReadFile(img + redoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	b[offN+redoRecordHead+3] ^= 0x40
	if err := os.WriteFile(img+redoSuffix, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// The next life: commits 2 and 3 are lost, as NORMAL allows.
	c := openImage(t, Config{Path: img})
	got, err := c.RunGet(ctx, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Vars["i"]) != "1" {
		t.Fatalf("after the power cut the run holds vars %v; want commit 1's", got.Vars)
	}
	if _, err := c.LedgerList(ctx, &store.LedgerListParams{RunID: r.RunID}); err != nil {
		t.Fatal(err)
	}
	// It makes a commit of its own, and is killed before the database
	// applies it. The new round starts at the file's head, where the first
	// life's record N-1 was: a commit as long as records N-1 and N together
	// ends where the first life's record N+1 begins.
	g2 := &redoRig{t: t, s: c, path: img}
	var img2 string
	g2.held(func() {
		commitNumberedStep(t, c, got, 4, int(offN-redoHeaderSize), false)
		img2 = g2.image()
	})
	_ = c.Close()

	c2 := openImage(t, Config{Path: img2})
	final, err := c2.RunGet(ctx, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	steps := ledgerSteps(t, c2, r.RunID)
	if fmt.Sprint(final.Vars["i"]) != "4" || final.Version != 2 || steps != "1:s1 2:s4 " {
		t.Fatalf("after the second crash: vars %v, version %d, ledger %q; want commit 4's state "+
			"(vars i=4, version 2, ledger \"1:s1 2:s4 \"): the first life's lost commit 3 was replayed",
			final.Vars, final.Version, steps)
	}
}
