package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// edgeTests are edges found by mutation testing of the suite: each fails
// on a plausible store bug that no other check caught.
var edgeTests = []subtest{
	{"LedgerPageThenWhole", testEdgeLedgerPageThenWhole},
	{"CommandIDFreedByDeleteByRun", testEdgeCommandIDFreedByDelete},
	{"NoChildrenOfEmptyParent", testEdgeNoChildrenOfEmptyParent},
	{"CommandDefaultLimitIsNotSmall", testCommandDefaultLimitIsNotSmall},
}

// testEdgeLedgerPageThenWhole: a first page of a ledger (After 0 with a
// Limit) is only part of it. A store that remembers what it read must not
// take that page for the whole ledger: the next full listing, and the
// idempotency look-up of a completed record past the page, still see
// every record. The run waits, so that its records are not already held
// from the commit (a waiting run's ledger is read from storage).
func testEdgeLedgerPageThenWhole(t *testing.T, s store.Store) {
	recs := []*durable.StepRecord{
		newRecord("run-1", "a", durable.StepStarted),
		newRecord("run-1", "a", durable.StepCompleted),
		newRecord("run-1", "b", durable.StepStarted),
		newRecord("run-1", "b", durable.StepCompleted),
		newRecord("run-1", "c", durable.StepWaiting),
	}
	recs[3].IdempotencyKey = "key-b"
	create(t, s, newRun("run-1", runOpts{Wait: keyWait(durable.WaitUser, "u")}), recs...)
	page, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := stepIDs(page), stepIDs(recs[:2]); !slices.Equal(g, w) {
		t.Fatalf("first page = %v, want %v", g, w)
	}
	if g, w := stepIDs(ledger(t, s, "run-1")), stepIDs(recs); !slices.Equal(g, w) {
		t.Errorf("whole ledger after reading a first page = %v, want %v", g, w)
	}
	if rest, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", After: 2}); err != nil {
		t.Fatal(err)
	} else if g, w := stepIDs(rest), stepIDs(recs[2:]); !slices.Equal(g, w) {
		t.Errorf("ledger after seq 2 = %v, want %v", g, w)
	}
	if n, err := s.LedgerCount(t.Context(), "run-1"); err != nil || n != 5 {
		t.Errorf("LedgerCount after reading a first page = %d, %v; want 5", n, err)
	}
	if f, ok := s.(store.LedgerFinder); ok {
		// Fresh page first: the look-up must not be answered from it.
		if _, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", Limit: 1}); err != nil {
			t.Fatal(err)
		}
		got, err := f.LedgerFindCompleted(t.Context(), "run-1", "key-b")
		if err != nil || got == nil || got.StepID != recs[3].StepID || got.Seq != 4 {
			t.Errorf("LedgerFindCompleted(key-b) after reading a first page = %+v, %v; want the record of seq 4", got, err)
		}
	}
}

// testEdgeCommandIDFreedByDeleteByRun: CommandDeleteByRun removes the
// run's commands altogether, as every Python command store does (the
// in-memory one rebuilds its id map, the SQL ones delete the rows): a
// command id of the deleted run can be appended again afterwards, and is
// accepted as a new command with a new seq rather than reported as a
// duplicate of a command that no longer exists.
func testEdgeCommandIDFreedByDelete(t *testing.T, s store.Store) {
	appendCommand(t, s, newCommand("c1", "run-1", "pause"))
	appendCommand(t, s, newCommand("c2", "run-2", "pause"))
	if n, err := s.CommandDeleteByRun(t.Context(), "run-1"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun(run-1) = %d, %v; want 1", n, err)
	}
	res := appendCommand(t, s, newCommand("c1", "run-1", "resume"))
	if !res.Accepted || res.Duplicate || res.Seq != 3 {
		t.Errorf("append of c1 after its run's commands were deleted = %+v; want accepted at seq 3", res)
	}
	got, _ := listCommands(t, s, 0, 0)
	if g, w := commandSeqs(got), []int64{2, 3}; !slices.Equal(g, w) {
		t.Fatalf("commands after the re-append = seqs %v, want %v", g, w)
	}
	if got[1].CommandID != "c1" || got[1].Type != "resume" {
		t.Errorf("re-appended command = %+v, want c1 resume", got[1])
	}
	// The id of a command that was not deleted is still a duplicate.
	if res := appendCommand(t, s, newCommand("c2", "run-2", "cancel")); !res.Duplicate || res.Seq != 2 {
		t.Errorf("append of c2 again = %+v, want a duplicate of seq 2", res)
	}
}

// testEdgeNoChildrenOfEmptyParent: "" names no parent (Python's
// list_children(parent_run_id="") compares each run's parent, None for a
// root, with "" and returns []): root runs are not the children of "".
func testEdgeNoChildrenOfEmptyParent(t *testing.T, s store.Store) {
	create(t, s, newRun("root-1", runOpts{}))
	create(t, s, newRun("root-2", runOpts{Status: durable.RunCompleted, Created: time.Second}))
	create(t, s, newRun("kid", runOpts{Parent: "root-1", Created: 2 * time.Second}))
	for _, status := range []durable.RunStatus{"", durable.RunRunning, durable.RunCompleted} {
		kids, err := s.RunListChildren(t.Context(), "", status)
		if err != nil {
			t.Fatalf("RunListChildren(\"\", %q): %v", status, err)
		}
		if len(kids) != 0 {
			t.Errorf("RunListChildren(\"\", %q) = %v, want none", status, ids(kids))
		}
	}
	if kids, err := s.RunListChildren(t.Context(), "root-1", ""); err != nil || !slices.Equal(ids(kids), []string{"kid"}) {
		t.Errorf("RunListChildren(root-1) = %v, %v; want [kid]", kids, err)
	}
}

// testCommandDefaultLimitIsNotSmall: CommandListAfter with limit 0 lists
// up to 1000 commands (Python's list_after default; every backend's doc
// says "limit <= 0 means 1000"), so a consumer reading 101 new commands
// gets them in one page.
func testCommandDefaultLimitIsNotSmall(t *testing.T, s store.Store) {
	const n = 101
	for i := range n {
		appendCommand(t, s, newCommand(fmt.Sprintf("c%03d", i), "run-1", "pause"))
	}
	got, next := listCommands(t, s, 0, 0)
	if len(got) != n || next != n {
		t.Errorf("CommandListAfter(0, 0) = %d commands, next %d; want all %d, next %d", len(got), next, n, n)
	}
}
