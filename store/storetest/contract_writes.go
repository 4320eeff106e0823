package storetest

// Checks of what a failed or removed write leaves, of the ledger never
// behind the state, and of the defaults filled on append. The groups of
// the suite list them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// testCommitAfterDelete: a commit of a run deleted since it was
// read returns ErrNotFound and writes nothing (no run, no records).
func testCommitAfterDelete(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{})
	create(t, s, r, newRecord("run-1", "a", durable.StepStarted))
	commit(t, s, r)
	if ok, err := s.RunDelete(t.Context(), "run-1"); err != nil || !ok {
		t.Fatalf("RunDelete = %v, %v", ok, err)
	}
	rec := newRecord("run-1", "b", durable.StepCompleted)
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("commit of a deleted run: err = %v, want ErrNotFound", err)
	}
	if r.Version != 2 {
		t.Errorf("failed commit changed Version to %d", r.Version)
	}
	if _, err := s.RunGet(t.Context(), "run-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet after the refused commit: err = %v, want ErrNotFound", err)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 1 {
		t.Errorf("LedgerCount = %d after a refused commit, want 1", n)
	}
	if list, _ := s.RunList(t.Context(), &store.RunListParams{}); len(list) != 0 {
		t.Errorf("RunList after the refused commit = %v", ids(list))
	}
}

// testCommitRandomID: a create under a random id (RandomID) is a
// create like any other: read back, listed, indexed, due, with its
// records, and committed on from version 1.
func testCommitRandomID(t *testing.T, s store.Store) {
	id := randomID()
	r := newRun(id, runOpts{Parent: "P", Session: "sr", Wait: untilWait(time.Second)})
	rec := newRecord(id, "start", durable.StepStarted)
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true, RandomID: true,
		Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatalf("create with RandomID: %v", err)
	}
	if r.Version != 1 || rec.Seq != 1 {
		t.Errorf("after create: Version %d, Seq %d; want 1, 1", r.Version, rec.Seq)
	}
	if got := get(t, s, id); runJSON(t, got) != runJSON(t, r) || got.Version != 1 {
		t.Errorf("RunGet after a RandomID create = version %d\n%s\nwant\n%s", got.Version, runJSON(t, got), runJSON(t, r))
	}
	if list, _ := s.RunList(t.Context(), &store.RunListParams{SessionID: "sr"}); len(list) != 1 || list[0].RunID != id {
		t.Errorf("RunList(session) = %v", ids(list))
	}
	if rows, _ := s.RunIndex(t.Context(), &store.RunIndexParams{Status: durable.RunWaiting}); len(rows) != 1 || rows[0].RunID != id {
		t.Errorf("RunIndex(waiting) = %v", rows)
	}
	if kids, _ := s.RunListChildren(t.Context(), "P", ""); len(kids) != 1 || kids[0].RunID != id {
		t.Errorf("RunListChildren = %v", ids(kids))
	}
	checkDue(t, listDue(t, s, time.Hour, 0), dueRun(id, time.Second))
	if n, _ := s.LedgerCount(t.Context(), id); n != 1 {
		t.Errorf("LedgerCount = %d, want 1", n)
	}
	r.Status, r.Waiting = durable.RunCompleted, nil
	commit(t, s, r, newRecord(id, "end", durable.StepCompleted))
	if got := get(t, s, id); got.Version != 2 || got.Status != durable.RunCompleted {
		t.Errorf("after a commit: version %d status %s", got.Version, got.Status)
	}
	checkDue(t, listDue(t, s, time.Hour, 0))
}

// testHandoffFailedCommit: Handoff gives Run to the store only
// "after a commit that succeeds": a refused commit leaves the caller's
// object its own, and reads show what the store holds.
func testHandoffFailedCommit(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, newRun("run-1", runOpts{Vars: map[string]any{"tag": "first"}}))
	dup := newRun("run-1", runOpts{Vars: map[string]any{"tag": "dup"}})
	if err := s.RunCommit(ctx, &store.CommitParams{Run: dup, Create: true, Handoff: true}); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("duplicate create with handoff: err = %v, want ErrAlreadyExists", err)
	}
	dup.Vars["tag"] = "MUTATED"
	if got := get(t, s, "run-1"); got.Vars["tag"] != "first" || got.Version != 1 {
		t.Errorf("read after a refused handoff = tag %v version %d, want first 1", got.Vars["tag"], got.Version)
	}

	// A handed-over create, then a stale commit with handoff of another
	// object: the first read is the handed-over create's state.
	h := newRun("run-2", runOpts{Vars: map[string]any{"tag": "created"}})
	want := runJSON(t, h)
	if err := s.RunCommit(ctx, &store.CommitParams{Run: h, Create: true, Handoff: true}); err != nil {
		t.Fatal(err)
	}
	stale := newRun("run-2", runOpts{Vars: map[string]any{"tag": "stale"}})
	stale.Version = 7
	if err := s.RunCommit(ctx, &store.CommitParams{Run: stale, Handoff: true}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale commit with handoff: err = %v, want ErrConflict", err)
	}
	stale.Vars["tag"] = "MUTATED"
	stale.Version = 1
	for range 2 {
		if got := get(t, s, "run-2"); runJSON(t, got) != want || got.Version != 1 {
			t.Fatalf("read after a refused handoff = version %d\n%s\nwant version 1\n%s", got.Version, runJSON(t, got), want)
		}
	}
}

// testIndexLifecycleFollows: a row's RunLifecycle is that of
// the run's last committed vars: changed, then removed.
func testIndexLifecycleFollows(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{Vars: map[string]any{"_run_lifecycle": map[string]any{"source": "a"}}})
	create(t, s, r)
	row := func() map[string]any {
		t.Helper()
		rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
		if err != nil || len(rows) != 1 {
			t.Fatalf("RunIndex = %v, %v", rows, err)
		}
		return rows[0].RunLifecycle
	}
	if got := row(); !reflect.DeepEqual(got, map[string]any{"source": "a"}) {
		t.Errorf("lifecycle = %#v, want source a", got)
	}
	r.Vars["_run_lifecycle"] = map[string]any{"source": "b", "purpose": "p",
		"retention": map[string]any{"ttl_s": json.Number("60")}}
	commit(t, s, r)
	want := map[string]any{"source": "b", "purpose": "p", "retention": map[string]any{"ttl_s": int64(60)}}
	if got := row(); !reflect.DeepEqual(got, want) {
		t.Errorf("lifecycle after a commit = %#v, want %#v", got, want)
	}
	delete(r.Vars, "_run_lifecycle")
	commit(t, s, r)
	if got := row(); got != nil {
		t.Errorf("lifecycle after its removal = %#v, want nil", got)
	}
}

// testDueNowZone: Now is an instant: its zone, and a fraction below
// the microsecond, do not change which runs are due.
func testDueNowZone(t *testing.T, s store.Store) {
	seedDueRuns(t, s)
	zone := time.FixedZone("UTC-7", -7*3600)
	list := func(now time.Time) []store.DueRun {
		t.Helper()
		due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return due
	}
	checkDue(t, list(base.Add(10*time.Second).In(zone)), dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second))
	checkDue(t, list(base.Add(10*time.Second-time.Microsecond).In(zone)), dueRun("event-5", 5*time.Second))
	checkDue(t, list(base.Add(10*time.Second-500*time.Nanosecond)), dueRun("event-5", 5*time.Second))
	checkDue(t, list(base.Add(10*time.Second+500*time.Nanosecond).In(zone)), dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second))
	z := time.FixedZone("UTC+9", 9*3600)
	checkDue(t, list(base.Add(20*time.Second).In(z)),
		dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second), dueRun("until-20", 20*time.Second))
}

// testCommitAfterLedgerDelete: after LedgerDelete a new ledger
// starts again at seq 1, whether its first records come by LedgerAppend
// or with a state commit.
func testCommitAfterLedgerDelete(t *testing.T, s store.Store) {
	seedLedger(t, s)
	r := get(t, s, "run-1")
	if n, err := s.LedgerDelete(t.Context(), "run-1"); err != nil || n != 5 {
		t.Fatalf("LedgerDelete = %d, %v; want 5", n, err)
	}
	rec := newRecord("run-1", "z", durable.StepStarted)
	commit(t, s, r, rec)
	got := ledger(t, s, "run-1")
	if rec.Seq != 1 || len(got) != 1 || got[0].Seq != 1 || got[0].StepID != rec.StepID {
		t.Errorf("commit after LedgerDelete: Seq %d, ledger %v", rec.Seq, stepIDs(got))
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 1 {
		t.Errorf("LedgerCount = %d, want 1", n)
	}
	next := newRecord("run-1", "z", durable.StepCompleted)
	if err := s.LedgerAppend(t.Context(), "run-1", []*durable.StepRecord{next}); err != nil {
		t.Fatal(err)
	}
	if next.Seq != 2 {
		t.Errorf("append after it: Seq %d, want 2", next.Seq)
	}
}

// testCommandDefaults: CommandAppend fills the defaults of
// store.PrepareCommand: a blank id becomes a random one (each its own
// command), a nil payload {}, a zero ts the time of the append; ids, type
// and client id are stored trimmed.
func testCommandDefaults(t *testing.T, s store.Store) {
	before := time.Now().Add(-time.Second)
	a := &durable.CommandRecord{CommandID: "   ", RunID: "run-1", Type: "pause", ClientID: " cl "}
	b := &durable.CommandRecord{CommandID: "", RunID: "run-1", Type: "resume"}
	ra, rb := appendCommand(t, s, a), appendCommand(t, s, b)
	if !ra.Accepted || !rb.Accepted || ra.Seq == rb.Seq {
		t.Fatalf("appends of blank ids = %+v, %+v; want two accepted commands", ra, rb)
	}
	got, _ := listCommands(t, s, 0, 0)
	if len(got) != 2 {
		t.Fatalf("%d commands stored, want 2", len(got))
	}
	for i, c := range got {
		if c.CommandID == "" || c.CommandID == "   " {
			t.Errorf("command %d: id %q, want a random one", i, c.CommandID)
		}
		if c.Payload == nil || len(c.Payload) != 0 {
			t.Errorf("command %d: payload %#v, want {}", i, c.Payload)
		}
		if c.TS.IsZero() || c.TS.Before(before) || c.TS.After(time.Now().Add(time.Second)) {
			t.Errorf("command %d: ts %v, want the time of the append", i, c.TS)
		}
	}
	if got[0].CommandID == got[1].CommandID {
		t.Errorf("two blank ids got the same id %q", got[0].CommandID)
	}
	if got[0].ClientID != "cl" || got[0].CommandID != a.CommandID {
		t.Errorf("stored command = id %q client %q; want the id given back to the caller (%q), client cl", got[0].CommandID, got[0].ClientID, a.CommandID)
	}
}

// testLedgerNeverBehind: "the ledger is never behind the
// state": whoever reads a run at version v (by RunGet or a list) and then
// its ledger finds the records of every commit up to v, atomic store or
// not.
func testLedgerNeverBehind(t *testing.T, s store.Store) {
	const commits = 40
	r := newRun("run-1", runOpts{Session: "sess"})
	create(t, s, r, newRecord("run-1", "start", durable.StepStarted)) // version 1, 1 record
	var stop sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 4)
	check := func(v int64) error {
		n, err := s.LedgerCount(t.Context(), "run-1")
		if err != nil {
			return err
		}
		if n < v {
			return fmt.Errorf("read the run at version %d, then its ledger: %d records, want at least %d", v, n, v)
		}
		recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", After: v - 1})
		if err != nil {
			return err
		}
		if len(recs) == 0 || recs[0].Seq != v {
			return fmt.Errorf("read the run at version %d, then LedgerList(After %d): %d records", v, v-1, len(recs))
		}
		return nil
	}
	for i := range 2 {
		stop.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				var v int64
				if i == 0 {
					got, err := s.RunGet(t.Context(), "run-1")
					if err != nil {
						errs <- err
						return
					}
					v = got.Version
				} else {
					list, err := s.RunList(t.Context(), &store.RunListParams{SessionID: "sess"})
					if err != nil || len(list) != 1 {
						errs <- fmt.Errorf("RunList = %d runs, %v", len(list), err)
						return
					}
					v = list[0].Version
				}
				if err := check(v); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range commits {
		r.CurrentNode = "n"
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r,
			Records: []*durable.StepRecord{newRecord("run-1", "n", durable.StepCompleted)}}); err != nil {
			errs <- err
			break
		}
	}
	close(done)
	stop.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != commits+1 {
		t.Errorf("LedgerCount = %d, want %d", n, commits+1)
	}
}

// testListNoTimes: a run without updated_at (a state Python wrote
// with null) lists after every run that has one; a child without
// created_at before its siblings that have one.
func testListNoTimes(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	r := newRun("r0", runOpts{Parent: "r1"})
	r.UpdatedAt, r.CreatedAt = durable.Time{}, durable.Time{}
	create(t, s, r)
	got, err := s.RunList(t.Context(), &store.RunListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ids(got), []string{"r5", "r4", "r3", "r2", "r1", "r0"}; !slices.Equal(g, w) {
		t.Errorf("RunList = %v, want %v", g, w)
	}
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{Status: durable.RunRunning})
	if err != nil {
		t.Fatal(err)
	}
	var g []string
	for _, row := range rows {
		g = append(g, row.RunID)
	}
	if w := []string{"r1", "r0"}; !slices.Equal(g, w) {
		t.Errorf("RunIndex(running) = %v, want %v", g, w)
	}
	kids, err := s.RunListChildren(t.Context(), "r1", "")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ids(kids), []string{"r0", "r3"}; !slices.Equal(g, w) {
		t.Errorf("RunListChildren(r1) = %v, want %v", g, w)
	}
}

// testLedgerListener: ListenLedger calls ready once it listens,
// reports no append or delete the store value made itself ("each append
// another store value made"), and returns ctx's error when ctx ends.
func testLedgerListener(t *testing.T, s store.Store) {
	l, ok := s.(store.LedgerListener)
	if !ok {
		t.Skip("store does not implement store.LedgerListener")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan struct{})
	var mu sync.Mutex
	var woken []string
	res := make(chan error, 1)
	go func() {
		res <- l.ListenLedger(ctx, func() { close(ready) }, func(runID string, _ bool) {
			mu.Lock()
			woken = append(woken, runID)
			mu.Unlock()
		})
	}()
	select {
	case <-ready:
	case err := <-res:
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip("the store reports no other writer's appends (errors.ErrUnsupported: a wrapper over a store without a listener, or a store that owns its database)")
		}
		t.Fatalf("ListenLedger returned before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("ListenLedger never called ready")
	}
	create(t, s, newRun("run-1", runOpts{}), newRecord("run-1", "a", durable.StepStarted))
	if err := s.LedgerAppend(t.Context(), "run-1", []*durable.StepRecord{newRecord("run-1", "a", durable.StepCompleted)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LedgerDelete(t.Context(), "run-1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	cancel()
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ListenLedger after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ListenLedger did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(woken) != 0 {
		t.Errorf("ListenLedger reported the store's own appends or deletes: %v", woken)
	}
}
