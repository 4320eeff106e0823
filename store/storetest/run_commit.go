package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

var runCommitTests = []subtest{
	{"Create", testCommitCreate},
	{"CreateDuplicate", testCommitCreateDuplicate},
	{"VersionIncrements", testCommitVersionIncrements},
	{"StaleVersion", testCommitStaleVersion},
	{"UnknownRun", testCommitUnknownRun},
	{"RefusesNonJSON", testCommitRefusesNonJSON},
	{"CancelledContextOutcome", testCommitCancelledContextOutcome},
	{"CloseTwice", testCloseTwice},
	{"AfterDeleteIsNotFound", testCommitAfterDelete},
	{"RandomID", testCommitRandomID},
	{"NonUTF8RunID", testCommitNonUTF8RunID},
	{"RefusesUnreadable", testCommitRefusesUnreadable},
}

// testCommitRefusesUnreadable: a run with a status or wait reason no
// decoder knows (Python's RunState.from_dict raises on both) is refused at
// create and at commit, naming it, and nothing of that commit is stored:
// written, the run would answer "not found" or "unreadable" from then on.
func testCommitRefusesUnreadable(t *testing.T, s store.Store) {
	ctx := t.Context()
	bad := newRun("run-bogus", runOpts{Status: "bogus"})
	if err := s.RunCommit(ctx, &store.CommitParams{Run: bad, Create: true}); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Fatalf("create with status bogus: error %v, want one naming the status", err)
	}
	if _, err := s.RunGet(ctx, "run-bogus"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused create left a run: %v", err)
	}
	r := newRun("run-ok", runOpts{})
	create(t, s, r, newRecord("run-ok", "start", durable.StepStarted))
	before := runJSON(t, get(t, s, "run-ok"))
	for _, edit := range []func(r *durable.RunState){
		func(r *durable.RunState) { r.Status = "bogus" },
		func(r *durable.RunState) {
			r.Status = durable.RunWaiting
			r.Waiting = &durable.WaitState{Reason: "bogus", WaitKey: "k"}
		},
	} {
		c := r.Clone()
		edit(c)
		err := s.RunCommit(ctx, &store.CommitParams{Run: c, Records: []*durable.StepRecord{newRecord("run-ok", "n", durable.StepCompleted)}})
		if err == nil || !strings.Contains(err.Error(), `"bogus"`) {
			t.Errorf("commit of status %s wait %v: error %v, want one naming the bad value", c.Status, c.Waiting, err)
		}
		if c.Version != 1 {
			t.Errorf("refused commit changed Version to %d", c.Version)
		}
	}
	if got := runJSON(t, get(t, s, "run-ok")); got != before {
		t.Errorf("refused commits changed the run:\n got %s\nwant %s", got, before)
	}
	if n := len(ledger(t, s, "run-ok")); n != 1 {
		t.Errorf("refused commits left %d ledger records, want 1", n)
	}
}

// testCommitNonUTF8RunID: a run id or parent id that is not UTF-8 is
// refused at create with store.ErrInvalidID, leaving nothing stored. A run's JSON spells
// such a byte as U+FFFD, so a store that kept the run under the raw bytes
// would return it under another id: the runtime's commit of the state it
// read would be ErrNotFound and a waiting run would stay due forever.
func testCommitNonUTF8RunID(t *testing.T, s store.Store) {
	for _, random := range []bool{false, true} {
		r := newRun("r\xff", runOpts{Wait: untilWait(0)})
		err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true, RandomID: random,
			Records: []*durable.StepRecord{newRecord("r\xff", "start", durable.StepStarted)}})
		if !errors.Is(err, store.ErrInvalidID) {
			t.Errorf("create of run %q (RandomID %v): %v, want store.ErrInvalidID", r.RunID, random, err)
		}
	}
	for _, id := range []string{"r\xff", "r\uFFFD"} {
		if _, err := s.RunGet(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RunGet(%q) after the refused create: %v, want store.ErrNotFound", id, err)
		}
	}
	if due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: base.Add(time.Hour)}); err != nil || len(due) != 0 {
		t.Errorf("RunListDue after the refused create = %v, %v; want none", due, err)
	}
	if n := len(ledger(t, s, "r\xff")); n != 0 {
		t.Errorf("ledger of the refused run has %d records, want none", n)
	}
	// No run has such an id, so no child names one as its parent: stores
	// read the parent back with U+FFFD and would list the child under
	// either spelling.
	kid := newRun("kid-nu", runOpts{Parent: "p\xff"})
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: kid, Create: true}); !errors.Is(err, store.ErrInvalidID) {
		t.Errorf("create of a child of %q: %v, want store.ErrInvalidID", kid.ParentRunID, err)
	}
	if _, err := s.RunGet(t.Context(), "kid-nu"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet of the refused child: %v, want store.ErrNotFound", err)
	}
}

// testCommitCancelledContextOutcome: a commit made with a cancelled
// context reports its true outcome: an error and nothing stored, or
// success and everything stored. A store may not report a failure and
// apply the commit anyway (or later): callers act on the failure.
func testCommitCancelledContextOutcome(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := newRun("run-cc", runOpts{})
	err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true,
		Records: []*durable.StepRecord{newRecord("run-cc", "start", durable.StepStarted)}})
	_, gerr := s.RunGet(t.Context(), "run-cc")
	n := len(ledger(t, s, "run-cc"))
	switch {
	case err != nil && (!errors.Is(gerr, store.ErrNotFound) || n != 0):
		t.Fatalf("create failed (%v) yet stored the run (get: %v) and %d records", err, gerr, n)
	case err == nil && (gerr != nil || n != 1 || r.Version != 1):
		t.Fatalf("create succeeded yet get = %v, %d records, version %d", gerr, n, r.Version)
	}
	if err != nil {
		create(t, s, r, newRecord("run-cc", "start", durable.StepStarted))
	}
	err = s.RunCommit(ctx, &store.CommitParams{Run: r,
		Records: []*durable.StepRecord{newRecord("run-cc", "n", durable.StepCompleted)}})
	got := get(t, s, "run-cc")
	n = len(ledger(t, s, "run-cc"))
	switch {
	case err != nil && (got.Version != 1 || n != 1 || r.Version != 1):
		t.Fatalf("commit failed (%v) yet the run is at version %d (caller's %d) with %d records", err, got.Version, r.Version, n)
	case err == nil && (got.Version != 2 || n != 2 || r.Version != 2):
		t.Fatalf("commit succeeded yet the run is at version %d (caller's %d) with %d records", got.Version, r.Version, n)
	}
}

// testCommitRefusesNonJSON: a run or record holding a value JSON cannot
// hold (NaN, a func) is refused with an error naming the value's path,
// and nothing of that commit is stored.
func testCommitRefusesNonJSON(t *testing.T, s store.Store) {
	ctx := t.Context()
	bad := newRun("run-nan", runOpts{Vars: map[string]any{"scores": map[string]any{"best": math.NaN()}}})
	err := s.RunCommit(ctx, &store.CommitParams{Run: bad, Create: true})
	if err == nil || !strings.Contains(err.Error(), "scores") {
		t.Fatalf("create with a NaN var: error %v, want one naming vars.scores.best", err)
	}
	if _, err := s.RunGet(ctx, "run-nan"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused create left a run: %v", err)
	}
	if bad.Version != 0 {
		t.Errorf("refused create changed Version to %d", bad.Version)
	}

	r := newRun("run-ok", runOpts{})
	create(t, s, r, newRecord("run-ok", "start", durable.StepStarted))
	before := runJSON(t, get(t, s, "run-ok"))
	r.Vars["callback"] = func() {}
	err = s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{newRecord("run-ok", "n", durable.StepCompleted)}})
	if err == nil || !strings.Contains(err.Error(), "callback") {
		t.Fatalf("commit with a func var: error %v, want one naming vars.callback", err)
	}
	delete(r.Vars, "callback")
	rec := newRecord("run-ok", "n", durable.StepCompleted)
	rec.Result = map[string]any{"inf": math.Inf(1)}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}}); err == nil {
		t.Fatal("commit of a record with an Inf result: no error")
	}
	if got := runJSON(t, get(t, s, "run-ok")); got != before || r.Version != 1 {
		t.Errorf("refused commits changed the run (version %d):\n got %s\nwant %s", r.Version, got, before)
	}
	if n := len(ledger(t, s, "run-ok")); n != 1 {
		t.Errorf("refused commits left %d ledger records, want 1", n)
	}
}

func testCommitCreate(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{Session: "s1", Actor: "a1"})
	rec := newRecord("run-1", "start", durable.StepStarted)
	create(t, s, r, rec)
	if r.Version != 1 {
		t.Errorf("Version after create = %d, want 1", r.Version)
	}
	if rec.Seq != 1 {
		t.Errorf("record Seq after create = %d, want 1", rec.Seq)
	}
	got := get(t, s, "run-1")
	if got.Version != 1 {
		t.Errorf("RunGet Version = %d, want 1", got.Version)
	}
	if g, w := runJSON(t, got), runJSON(t, r); g != w {
		t.Errorf("RunGet after create:\n got %s\nwant %s", g, w)
	}
	if n, err := s.LedgerCount(t.Context(), "run-1"); err != nil || n != 1 {
		t.Errorf("LedgerCount = %d, %v; want 1", n, err)
	}
}

func testCommitCreateDuplicate(t *testing.T, s store.Store) {
	create(t, s, newRun("run-1", runOpts{}))
	dup := newRun("run-1", runOpts{Workflow: "other"})
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: dup, Create: true,
		Records: []*durable.StepRecord{newRecord("run-1", "start", durable.StepStarted)}})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("duplicate create: err = %v, want ErrAlreadyExists", err)
	}
	if dup.Version != 0 {
		t.Errorf("failed create changed Version to %d", dup.Version)
	}
	if got := get(t, s, "run-1"); got.WorkflowID != "wf" || got.Version != 1 {
		t.Errorf("stored run changed by a failed create: workflow %q version %d", got.WorkflowID, got.Version)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 0 {
		t.Errorf("failed create wrote %d records", n)
	}
}

func testCommitVersionIncrements(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{})
	create(t, s, r)
	for want := int64(2); want <= 4; want++ {
		r.CurrentNode = "n" + string(rune('0'+want))
		commit(t, s, r)
		if r.Version != want {
			t.Fatalf("Version after commit = %d, want %d", r.Version, want)
		}
		got := get(t, s, "run-1")
		if got.Version != want || got.CurrentNode != r.CurrentNode {
			t.Fatalf("RunGet = version %d node %q, want %d %q", got.Version, got.CurrentNode, want, r.CurrentNode)
		}
	}
	// A copy read from the store commits too.
	got := get(t, s, "run-1")
	got.Status = durable.RunCompleted
	commit(t, s, got)
	if got.Version != 5 {
		t.Errorf("Version = %d, want 5", got.Version)
	}
}

func testCommitStaleVersion(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{})
	create(t, s, r)
	stale := get(t, s, "run-1")
	r.CurrentNode = "moved"
	commit(t, s, r, newRecord("run-1", "start", durable.StepCompleted))

	stale.CurrentNode = "lost"
	rec := newRecord("run-1", "start", durable.StepStarted)
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: stale, Records: []*durable.StepRecord{rec}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale commit: err = %v, want ErrConflict", err)
	}
	if stale.Version != 1 {
		t.Errorf("failed commit changed Version to %d", stale.Version)
	}
	got := get(t, s, "run-1")
	if got.CurrentNode != "moved" || got.Version != 2 {
		t.Errorf("stored run = node %q version %d, want moved 2", got.CurrentNode, got.Version)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 1 {
		t.Errorf("LedgerCount = %d after a conflict, want 1 (conflicting records must not be written)", n)
	}
	// A version from the future conflicts too.
	got.Version = 10
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: got}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("commit at a future version: err = %v, want ErrConflict", err)
	}
}

func testCommitUnknownRun(t *testing.T, s store.Store) {
	r := newRun("nope", runOpts{})
	r.Version = 1
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: r,
		Records: []*durable.StepRecord{newRecord("nope", "start", durable.StepStarted)}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("commit of an unknown run: err = %v, want ErrNotFound", err)
	}
	if _, err := s.RunGet(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run created by a failed commit: RunGet err = %v", err)
	}
	if n, _ := s.LedgerCount(t.Context(), "nope"); n != 0 {
		t.Errorf("failed commit wrote %d records", n)
	}
}

var runGetTests = []subtest{
	{"NotFound", testGetNotFound},
	{"PrivateCopies", testGetPrivateCopies},
	{"Handoff", testGetHandoff},
	{"HandoffOfFailedCommit", testHandoffFailedCommit},
}

// testGetHandoff: a run committed with Handoff reads back as committed,
// once as the store pleases and then as a private copy; a later commit, a
// delete or another run's handoff never lets a handed-over state stand for
// what the store holds.
func testGetHandoff(t *testing.T, s store.Store) {
	ctx := t.Context()
	handOver := func(r *durable.RunState) string {
		t.Helper()
		want := runJSON(t, r)
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Handoff: true}); err != nil {
			t.Fatalf("create %s with handoff: %v", r.RunID, err)
		}
		return want
	}
	vars := func(tag string) map[string]any {
		return map[string]any{"tag": tag, "n": json.Number("3"), "list": []any{map[string]any{}, "x"}}
	}

	// Read back, then a private copy after the first reader's changes.
	want := handOver(newRun("run-a", runOpts{Vars: vars("a")}))
	first := get(t, s, "run-a")
	if got := runJSON(t, first); got != want || first.Version != 1 {
		t.Fatalf("first read of a handed-over run = version %d\n%s\nwant version 1\n%s", first.Version, got, want)
	}
	first.Vars["tag"] = "MUTATED"
	first.Status = durable.RunFailed
	if got := runJSON(t, get(t, s, "run-a")); got != want {
		t.Fatalf("changing the first read changed the next one:\n got %s\nwant %s", got, want)
	}

	// A commit after the handoff, before any read.
	handOver(newRun("run-b", runOpts{Vars: vars("b")}))
	b := newRun("run-b", runOpts{Vars: vars("b2")}) // the next state, in a new object
	b.Version, b.CurrentNode = 1, "next"
	commit(t, s, b)
	if got := get(t, s, "run-b"); got.Version != 2 || got.CurrentNode != "next" || got.Vars["tag"] != "b2" {
		t.Fatalf("read after a later commit = version %d at %q, tag %v; want version 2 at \"next\", tag b2", got.Version, got.CurrentNode, got.Vars["tag"])
	}

	// A delete, then a create of the same id without handoff.
	handOver(newRun("run-c", runOpts{Vars: vars("c")}))
	if ok, err := s.RunDelete(ctx, "run-c"); err != nil || !ok {
		t.Fatalf("delete run-c = %v, %v", ok, err)
	}
	create(t, s, newRun("run-c", runOpts{Vars: vars("c2")}))
	if got := get(t, s, "run-c"); got.Vars["tag"] != "c2" {
		t.Fatalf("read after delete and create = tag %v, want c2", got.Vars["tag"])
	}

	// Two handoffs, read in the other order.
	wantD := handOver(newRun("run-d", runOpts{Vars: vars("d")}))
	wantE := handOver(newRun("run-e", runOpts{Vars: vars("e")}))
	for id, want := range map[string]string{"run-d": wantD, "run-e": wantE} {
		for range 2 {
			if got := runJSON(t, get(t, s, id)); got != want {
				t.Fatalf("read of %s:\n got %s\nwant %s", id, got, want)
			}
		}
	}
}

func testGetNotFound(t *testing.T, s store.Store) {
	_, err := s.RunGet(t.Context(), "missing")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RunGet(missing): err = %v, want ErrNotFound", err)
	}
}

func testGetPrivateCopies(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{
		Wait: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Choices: []string{"a", "b"},
			AllowFreeText: true, Details: map[string]any{"d": map[string]any{"x": "1"}}},
		Vars: map[string]any{"nested": map[string]any{"list": []any{"a", map[string]any{"b": "c"}}}},
	})
	r.Output = map[string]any{"o": "v"}
	create(t, s, r)
	want := runJSON(t, get(t, s, "run-1"))

	// Mutating the committed struct after the commit.
	r.Vars["nested"].(map[string]any)["list"].([]any)[1].(map[string]any)["b"] = "MUTATED"
	r.Vars["new"] = "x"
	r.Waiting.Choices[0] = "MUTATED"
	r.Waiting.Details["d"].(map[string]any)["x"] = "MUTATED"
	r.Output["o"] = "MUTATED"
	r.Status = durable.RunFailed
	if got := runJSON(t, get(t, s, "run-1")); got != want {
		t.Fatalf("mutating the committed struct changed the stored run:\n got %s\nwant %s", got, want)
	}

	// Mutating a loaded copy.
	g := get(t, s, "run-1")
	g.Vars["nested"].(map[string]any)["list"].([]any)[0] = "MUTATED"
	g.Waiting.Choices[1] = "MUTATED"
	g.Waiting.Details["d"] = nil
	g.Output["o"] = "MUTATED"
	g.CurrentNode = "MUTATED"
	if got := runJSON(t, get(t, s, "run-1")); got != want {
		t.Fatalf("mutating a loaded run changed the stored run:\n got %s\nwant %s", got, want)
	}

	// Same for list results.
	list, err := s.RunList(t.Context(), &store.RunListParams{})
	if err != nil || len(list) != 1 {
		t.Fatalf("RunList = %d runs, %v", len(list), err)
	}
	list[0].Vars["nested"] = "MUTATED"
	if got := runJSON(t, get(t, s, "run-1")); got != want {
		t.Fatalf("mutating a listed run changed the stored run:\n got %s\nwant %s", got, want)
	}
}
