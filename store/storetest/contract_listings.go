package storetest

// Checks of the listing promises of the store.Store contract (store.go,
// and docs/compatibility.md "Ties and orders in listings"): tie breaks,
// limits after filters, filters following commits, deletes, claims'
// edges. The groups of the suite list them.

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// rawAt is base+d, not truncated to the microsecond (as node code may
// set a time).
func rawAt(d time.Duration) durable.Time { return durable.Time{Time: base.Add(d)} }

// testCloseTwice: "Close releases the store's resources. It is safe
// to call twice."
func testCloseTwice(t *testing.T, s store.Store) {
	create(t, s, newRun("run-1", runOpts{}), newRecord("run-1", "a", durable.StepStarted))
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// seedTies stores runs whose updated_at are equal once stored (UTC to the
// microsecond), some differing below the microsecond, between a run
// updated a microsecond later and one a microsecond earlier.
func seedTies(t *testing.T, s store.Store) {
	t.Helper()
	T := 10 * time.Second
	upd := map[string]durable.Time{
		"a": rawAt(T + 900*time.Nanosecond),
		"z": rawAt(T - time.Microsecond),
		"c": rawAt(T + 100*time.Nanosecond),
		"d": rawAt(T + time.Microsecond),
		"b": rawAt(T),
	}
	for _, id := range []string{"a", "z", "c", "d", "b"} {
		r := newRun(id, runOpts{Workflow: "W", Session: "s", Wait: keyWait(durable.WaitUser, "k")})
		r.UpdatedAt = upd[id]
		create(t, s, r)
	}
}

// testListTieBreak: most recently updated first, ties (equal
// updated_at as stored) by run id descending, on every backend and every
// filter (docs/compatibility.md, "Ties and orders in listings").
func testListTieBreak(t *testing.T, s store.Store) {
	seedTies(t, s)
	want := []string{"d", "c", "b", "a", "z"}
	for _, p := range []store.RunListParams{
		{}, {Status: durable.RunWaiting}, {WorkflowID: "W"}, {SessionID: "s"},
		{WaitKeys: []string{"k"}}, {WaitReason: durable.WaitUser},
	} {
		got, err := s.RunList(t.Context(), &p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, want) {
			t.Errorf("RunList(%+v) = %v, want %v", p, g, want)
		}
		p.Limit = 3
		got, err = s.RunList(t.Context(), &p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, want[:3]) {
			t.Errorf("RunList(%+v) = %v, want %v", p, g, want[:3])
		}
	}
	for _, p := range []store.RunIndexParams{
		{}, {Status: durable.RunWaiting}, {WorkflowID: "W"}, {SessionID: "s"}, {RootOnly: true},
	} {
		rows, err := s.RunIndex(t.Context(), &p)
		if err != nil {
			t.Fatal(err)
		}
		var g []string
		for _, r := range rows {
			g = append(g, r.RunID)
			if r.RunID == "a" && !r.UpdatedAt.Equal(at(10*time.Second).Time) {
				t.Errorf("RunIndex row a: UpdatedAt %v, want %v (as stored)", r.UpdatedAt, at(10*time.Second))
			}
		}
		if !slices.Equal(g, want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", p, g, want)
		}
	}
}

// testListLimitAfterFilters: the limit caps the runs matching the
// filters (not the runs before filtering), newest first.
func testListLimitAfterFilters(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	cases := []struct {
		p    store.RunListParams
		want []string
	}{
		{store.RunListParams{Status: durable.RunWaiting, Limit: 2}, []string{"r5", "r3"}},
		{store.RunListParams{WorkflowID: "A", Limit: 2}, []string{"r5", "r2"}},
		{store.RunListParams{SessionID: "s1", Limit: 1}, []string{"r4"}},
		{store.RunListParams{WaitReason: durable.WaitUser, Limit: 1}, []string{"r2"}},
		{store.RunListParams{WaitKeys: []string{"k2", "k3"}, Limit: 1}, []string{"r3"}},
		{store.RunListParams{WorkflowID: "B", Limit: -4}, []string{"r4"}},
	}
	for _, c := range cases {
		got, err := s.RunList(t.Context(), &c.p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("RunList(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
	icases := []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{RootOnly: true, Limit: 3}, []string{"r5", "r4", "r2"}},
		{store.RunIndexParams{Status: durable.RunWaiting, Limit: 2}, []string{"r5", "r3"}},
		{store.RunIndexParams{WorkflowID: "A", Limit: 1}, []string{"r5"}},
		{store.RunIndexParams{SessionID: "s1", Limit: 1}, []string{"r4"}},
		{store.RunIndexParams{Status: durable.RunWaiting, RootOnly: true, Limit: -1}, []string{"r5"}},
	}
	for _, c := range icases {
		g := indexIDs(t, s, c.p)
		if !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
}

// testFiltersFollowCommits: after commits that change a run's
// status, updated_at and even its workflow, session or parent, every list
// (whatever filter, hence whatever index a backend reads) follows the
// committed state and orders by the new updated_at.
func testFiltersFollowCommits(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	// r1: A/s1/root/running at 1s -> B/s2/child of r5/waiting on k1 at 1min.
	r1 := get(t, s, "r1")
	r1.WorkflowID, r1.SessionID, r1.ParentRunID = "B", "s2", "r5"
	r1.Status, r1.Waiting = durable.RunWaiting, keyWait(durable.WaitUser, "k1")
	r1.UpdatedAt = at(time.Minute)
	commit(t, s, r1)
	// r4: completed -> failed, updated at 2min.
	r4 := get(t, s, "r4")
	r4.Status = durable.RunFailed
	r4.UpdatedAt = at(2 * time.Minute)
	commit(t, s, r4)
	// r3: a child of r1 -> a root run.
	r3 := get(t, s, "r3")
	r3.ParentRunID = ""
	commit(t, s, r3)

	lists := []struct {
		p    store.RunListParams
		want []string
	}{
		{store.RunListParams{}, []string{"r4", "r1", "r5", "r3", "r2"}},
		{store.RunListParams{Status: durable.RunWaiting}, []string{"r1", "r5", "r3", "r2"}},
		{store.RunListParams{Status: durable.RunCompleted}, []string{}},
		{store.RunListParams{Status: durable.RunFailed}, []string{"r4"}},
		{store.RunListParams{Status: durable.RunRunning}, []string{}},
		{store.RunListParams{WorkflowID: "A"}, []string{"r5", "r2"}},
		{store.RunListParams{WorkflowID: "B"}, []string{"r4", "r1", "r3"}},
		{store.RunListParams{SessionID: "s1"}, []string{"r4"}},
		{store.RunListParams{SessionID: "s2"}, []string{"r1", "r2"}},
		{store.RunListParams{ParentID: "r1"}, []string{}},
		{store.RunListParams{ParentID: "r5"}, []string{"r1"}},
		{store.RunListParams{WaitKeys: []string{"k1"}}, []string{"r1"}},
		{store.RunListParams{WaitReason: durable.WaitUser}, []string{"r1", "r2"}},
	}
	for _, c := range lists {
		got, err := s.RunList(t.Context(), &c.p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("RunList(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
	index := []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{}, []string{"r4", "r1", "r5", "r3", "r2"}},
		{store.RunIndexParams{RootOnly: true}, []string{"r4", "r5", "r3", "r2"}},
		{store.RunIndexParams{Status: durable.RunWaiting}, []string{"r1", "r5", "r3", "r2"}},
		{store.RunIndexParams{Status: durable.RunCompleted}, []string{}},
		{store.RunIndexParams{Status: durable.RunFailed}, []string{"r4"}},
		{store.RunIndexParams{WorkflowID: "B"}, []string{"r4", "r1", "r3"}},
		{store.RunIndexParams{WorkflowID: "B", RootOnly: true}, []string{"r4", "r3"}},
		{store.RunIndexParams{SessionID: "s1"}, []string{"r4"}},
		{store.RunIndexParams{SessionID: "s2"}, []string{"r1", "r2"}},
	}
	for _, c := range index {
		if g := indexIDs(t, s, c.p); !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
	check := func(parent string, want ...string) {
		t.Helper()
		kids, err := s.RunListChildren(t.Context(), parent, "")
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(kids); !slices.Equal(g, want) {
			t.Errorf("RunListChildren(%s) = %v, want %v", parent, g, want)
		}
	}
	check("r1")
	check("r5", "r1")
	rows, _ := s.RunIndex(t.Context(), &store.RunIndexParams{SessionID: "s2", Limit: 1})
	if len(rows) == 1 && (rows[0].WorkflowID != "B" || rows[0].ParentRunID != "r5" || rows[0].WaitReason != durable.WaitUser ||
		!rows[0].UpdatedAt.Equal(at(time.Minute).Time)) {
		t.Errorf("RunIndex row of r1 after its commit = %+v", rows[0])
	}
}

// testWaitKeysEdge: an empty key names no wait (a run waiting
// without a key is not listed by it); a repeated key lists a run once.
func testWaitKeysEdge(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	create(t, s, newRun("nokey", runOpts{Wait: keyWait(durable.WaitUser, ""), Created: 6 * time.Second}))
	for _, c := range []struct {
		keys []string
		want []string
	}{
		{[]string{""}, []string{}},
		{[]string{"", "k2"}, []string{"r2"}},
		{[]string{"k2", "k2", "k3", "k2"}, []string{"r3", "r2"}},
	} {
		got, err := s.RunList(t.Context(), &store.RunListParams{WaitKeys: c.keys})
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("RunList(WaitKeys %q) = %v, want %v", c.keys, g, c.want)
		}
	}
}

// testIndexSessionTrimmed: RunIndexParams.SessionID is "trimmed, as
// Python's stores trim it"; a blank one does not filter.
func testIndexSessionTrimmed(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	for _, c := range []struct {
		session string
		want    []string
	}{
		{" s1 ", []string{"r4", "r1"}},
		{"\ts1\n", []string{"r4", "r1"}},
		{"s2  ", []string{"r2"}},
		{"   ", []string{"r5", "r4", "r3", "r2", "r1"}},
	} {
		g := indexIDs(t, s, store.RunIndexParams{SessionID: c.session})
		if !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(SessionID %q) = %v, want %v", c.session, g, c.want)
		}
	}
}

// testIndexEventUntil: a row's WaitUntil is the until of the wait,
// for a WAIT_EVENT timeout as for a WAIT_UNTIL (store.IndexRow); a wait
// without one has none.
func testIndexEventUntil(t *testing.T, s store.Store) {
	evt := keyWait(durable.WaitEvent, "evt:k")
	evt.Until = at(30 * time.Second)
	create(t, s, newRun("evt", runOpts{Wait: evt, Created: 2 * time.Second}))
	create(t, s, newRun("user", runOpts{Wait: keyWait(durable.WaitUser, "u"), Created: time.Second}))
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if err != nil || len(rows) != 2 {
		t.Fatalf("RunIndex = %v, %v", rows, err)
	}
	if rows[0].RunID != "evt" || rows[0].WaitReason != durable.WaitEvent || !rows[0].WaitUntil.Equal(at(30*time.Second).Time) {
		t.Errorf("row of an event wait with a timeout = %+v, want reason event, until %v", rows[0], at(30*time.Second))
	}
	if rows[1].RunID != "user" || rows[1].WaitReason != durable.WaitUser || !rows[1].WaitUntil.IsZero() {
		t.Errorf("row of a user wait = %+v, want reason user, no until", rows[1])
	}
}

// testDueTieBreak: due runs earliest first, equal deadlines (as
// stored: to the microsecond) by run id; limits cut after that order.
func testDueTieBreak(t *testing.T, s store.Store) {
	T := 10 * time.Second
	evt := keyWait(durable.WaitEvent, "evt:k")
	evt.Until = rawAt(T + 100*time.Nanosecond)
	waits := map[string]*durable.WaitState{
		"u-a": {Reason: durable.WaitUntil, Until: rawAt(T + 900*time.Nanosecond), ResumeToNode: "n"},
		"u-0": {Reason: durable.WaitUntil, Until: rawAt(T + time.Microsecond), ResumeToNode: "n"},
		"u-c": evt,
		"u-z": {Reason: durable.WaitUntil, Until: rawAt(T - time.Microsecond), ResumeToNode: "n"},
		"u-b": {Reason: durable.WaitUntil, Until: rawAt(T), ResumeToNode: "n"},
	}
	for _, id := range []string{"u-a", "u-0", "u-c", "u-z", "u-b"} {
		create(t, s, newRun(id, runOpts{Wait: waits[id]}))
	}
	all := []store.DueRun{dueRun("u-z", T-time.Microsecond), dueRun("u-a", T), dueRun("u-b", T), dueRun("u-c", T), dueRun("u-0", T+time.Microsecond)}
	checkDue(t, listDue(t, s, time.Hour, 0), all...)
	checkDue(t, listDue(t, s, time.Hour, 3), all[:3]...)
	checkDue(t, listDue(t, s, T, 0), all[:4]...)
	if next, err := s.RunNextDue(t.Context()); err != nil || !next.Equal(at(T-time.Microsecond).Time) {
		t.Errorf("RunNextDue = %v, %v; want %v", next, err, at(T-time.Microsecond))
	}
}

// testDueNegativeLimit: the limit rules are shared by every list
// (store.EffectiveLimit): a negative limit means 1.
func testDueNegativeLimit(t *testing.T, s store.Store) {
	seedDueRuns(t, s)
	checkDue(t, listDue(t, s, time.Hour, -1), dueRun("event-5", 5*time.Second))
	checkDue(t, listDue(t, s, time.Hour, -7), dueRun("event-5", 5*time.Second))
}

// testDueDefaultLimit: RunListDueParams.Limit 0 means
// DefaultListLimit.
func testDueDefaultLimit(t *testing.T, s store.Store) {
	if testing.Short() {
		t.Skip("creates more than 100 runs")
	}
	n := store.DefaultListLimit + 3
	for i := range n {
		create(t, s, newRun(fmt.Sprintf("due-%03d", i), runOpts{Wait: untilWait(time.Duration(n-i) * time.Millisecond)}))
	}
	due := listDue(t, s, time.Hour, 0)
	if len(due) != store.DefaultListLimit {
		t.Fatalf("RunListDue(Limit 0) = %d runs, want %d", len(due), store.DefaultListLimit)
	}
	if due[0].RunID != fmt.Sprintf("due-%03d", n-1) || due[len(due)-1].RunID != "due-003" {
		t.Errorf("RunListDue(Limit 0) = %s … %s, want the earliest deadlines (due-%03d … due-003)",
			due[0].RunID, due[len(due)-1].RunID, n-1)
	}
	if all := listDue(t, s, time.Hour, n+5); len(all) != n {
		t.Errorf("RunListDue(Limit %d) = %d runs, want %d", n+5, len(all), n)
	}
}

// testDueOnlyUntilAndEvent: the deadlines RunListDue and RunNextDue
// answer are those of WAIT_UNTIL and of a WAIT_EVENT timeout; an until on
// another wait (user, job, subworkflow) is no deadline, nor is an event
// wait without one.
func testDueOnlyUntilAndEvent(t *testing.T, s store.Store) {
	for i, reason := range []durable.WaitReason{durable.WaitUser, durable.WaitJob, durable.WaitSubworkflow} {
		w := keyWait(reason, fmt.Sprintf("key-%d", i))
		w.Until = at(time.Second)
		create(t, s, newRun("other-"+string(reason), runOpts{Wait: w}))
	}
	create(t, s, newRun("event-no-timeout", runOpts{Wait: keyWait(durable.WaitEvent, "evt:x")}))
	checkDue(t, listDue(t, s, time.Hour, 0))
	if next, err := s.RunNextDue(t.Context()); err != nil || !next.IsZero() {
		t.Errorf("RunNextDue = %v, %v; want zero (no deadline)", next, err)
	}
	create(t, s, newRun("until", runOpts{Wait: untilWait(2 * time.Second)}))
	checkDue(t, listDue(t, s, time.Hour, 0), dueRun("until", 2*time.Second))
	// A user wait turned into an event wait with the same until is due.
	r := get(t, s, "other-"+string(durable.WaitUser))
	r.Waiting.Reason = durable.WaitEvent
	commit(t, s, r)
	checkDue(t, listDue(t, s, time.Hour, 0), dueRun("other-user", time.Second), dueRun("until", 2*time.Second))
}

// testChildrenTieBreak: children oldest first, equal created_at (as
// stored) by run id ascending.
func testChildrenTieBreak(t *testing.T, s store.Store) {
	create(t, s, newRun("P", runOpts{}))
	T := 10 * time.Second
	created := map[string]durable.Time{
		"k-a": rawAt(T + 900*time.Nanosecond),
		"k-0": rawAt(T + time.Microsecond),
		"k-c": rawAt(T + 100*time.Nanosecond),
		"k-z": rawAt(T - time.Microsecond),
		"k-b": rawAt(T),
	}
	for _, id := range []string{"k-a", "k-0", "k-c", "k-z", "k-b"} {
		r := newRun(id, runOpts{Parent: "P"})
		r.CreatedAt = created[id]
		r.UpdatedAt = rawAt(time.Hour - T) // the order is not updated_at's
		create(t, s, r)
	}
	kids, err := s.RunListChildren(t.Context(), "P", "")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ids(kids), []string{"k-z", "k-a", "k-b", "k-c", "k-0"}; !slices.Equal(g, w) {
		t.Errorf("RunListChildren = %v, want %v", g, w)
	}
	kids, err = s.RunListChildren(t.Context(), "P", durable.RunRunning)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := ids(kids), []string{"k-z", "k-a", "k-b", "k-c", "k-0"}; !slices.Equal(g, w) {
		t.Errorf("RunListChildren(running) = %v, want %v", g, w)
	}
}

// testChildrenPrivateCopies: listed children are private copies.
func testChildrenPrivateCopies(t *testing.T, s store.Store) {
	create(t, s, newRun("P", runOpts{}))
	create(t, s, newRun("kid", runOpts{Parent: "P", Vars: map[string]any{"nested": map[string]any{"x": "1"}}}))
	want := runJSON(t, get(t, s, "kid"))
	kids, err := s.RunListChildren(t.Context(), "P", "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("RunListChildren = %v, %v", kids, err)
	}
	kids[0].Vars["nested"].(map[string]any)["x"] = "MUTATED"
	kids[0].Status = durable.RunFailed
	if got := runJSON(t, get(t, s, "kid")); got != want {
		t.Errorf("mutating a listed child changed the stored run:\n got %s\nwant %s", got, want)
	}
}

// testDeleteGoneFromEveryList: a deleted run leaves every list,
// whatever filter (hence index) the list reads.
func testDeleteGoneFromEveryList(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	for _, id := range []string{"r2", "r3"} {
		if ok, err := s.RunDelete(t.Context(), id); err != nil || !ok {
			t.Fatalf("RunDelete(%s) = %v, %v", id, ok, err)
		}
	}
	for _, c := range []struct {
		p    store.RunListParams
		want []string
	}{
		{store.RunListParams{Status: durable.RunWaiting}, []string{"r5"}},
		{store.RunListParams{WorkflowID: "A"}, []string{"r5", "r1"}},
		{store.RunListParams{WorkflowID: "B"}, []string{"r4"}},
		{store.RunListParams{SessionID: "s2"}, []string{}},
		{store.RunListParams{ParentID: "r1"}, []string{}},
		{store.RunListParams{WaitKeys: []string{"k2", "k3"}}, []string{}},
		{store.RunListParams{WaitReason: durable.WaitEvent}, []string{}},
	} {
		got, err := s.RunList(t.Context(), &c.p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("RunList(%+v) after deletes = %v, want %v", c.p, g, c.want)
		}
	}
	for _, c := range []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{Status: durable.RunWaiting}, []string{"r5"}},
		{store.RunIndexParams{WorkflowID: "B"}, []string{"r4"}},
		{store.RunIndexParams{SessionID: "s2"}, []string{}},
		{store.RunIndexParams{RootOnly: true}, []string{"r5", "r4", "r1"}},
	} {
		g := indexIDs(t, s, c.p)
		if !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(%+v) after deletes = %v, want %v", c.p, g, c.want)
		}
	}
}

// testDeleteLedgerSeqContinues: RunDelete leaves the ledger, and the
// ledger stays append-only: records committed with a run created again
// under the id, or with a run created over a ledger appended before it,
// follow the records already there (a seq given twice would break every
// cursor, LedgerList's After).
func testDeleteLedgerSeqContinues(t *testing.T, s store.Store) {
	first := newRecord("run-1", "a", durable.StepStarted)
	create(t, s, newRun("run-1", runOpts{}), first)
	if ok, err := s.RunDelete(t.Context(), "run-1"); err != nil || !ok {
		t.Fatalf("RunDelete = %v, %v", ok, err)
	}
	again := newRecord("run-1", "b", durable.StepStarted)
	r := newRun("run-1", runOpts{})
	create(t, s, r, again)
	more := newRecord("run-1", "b", durable.StepCompleted)
	commit(t, s, r, more)
	if again.Seq != 2 || more.Seq != 3 {
		t.Errorf("seqs after re-creating the run = %d, %d; want 2, 3", again.Seq, more.Seq)
	}
	got := ledger(t, s, "run-1")
	if g, w := stepIDs(got), stepIDs([]*durable.StepRecord{first, again, more}); !slices.Equal(g, w) {
		t.Fatalf("ledger after re-creating the run = %v, want %v", g, w)
	}
	for i, rec := range got {
		if rec.Seq != int64(i+1) {
			t.Errorf("record %d: Seq %d, want %d", i, rec.Seq, i+1)
		}
	}
	if page, _ := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: "run-1", After: 1}); len(page) != 2 || page[0].StepID != again.StepID {
		t.Errorf("LedgerList(After 1) = %v, want [%s %s]", stepIDs(page), again.StepID, more.StepID)
	}
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 3 {
		t.Errorf("LedgerCount = %d, want 3", n)
	}

	// A ledger appended before its run is created.
	pre := newRecord("run-2", "x", durable.StepStarted)
	if err := s.LedgerAppend(t.Context(), "run-2", []*durable.StepRecord{pre}); err != nil {
		t.Fatal(err)
	}
	withRun := newRecord("run-2", "y", durable.StepStarted)
	create(t, s, newRun("run-2", runOpts{}), withRun)
	if pre.Seq != 1 || withRun.Seq != 2 {
		t.Errorf("seqs = %d, %d; want 1, 2", pre.Seq, withRun.Seq)
	}
	if g, w := stepIDs(ledger(t, s, "run-2")), stepIDs([]*durable.StepRecord{pre, withRun}); !slices.Equal(g, w) {
		t.Errorf("ledger of run-2 = %v, want %v", g, w)
	}
}

// testLedgerCallerSeq: the store sets each record's Seq, whatever
// the caller left in it (a record cloned from a listed one).
func testLedgerCallerSeq(t *testing.T, s store.Store) {
	a := newRecord("run-1", "a", durable.StepStarted)
	a.Seq = 42
	r := newRun("run-1", runOpts{})
	create(t, s, r, a)
	b := newRecord("run-1", "b", durable.StepStarted)
	b.Seq = 7
	if err := s.LedgerAppend(t.Context(), "run-1", []*durable.StepRecord{b}); err != nil {
		t.Fatal(err)
	}
	c := ledger(t, s, "run-1")[0].Clone()
	c.StepID = "c"
	commit(t, s, r, c)
	if a.Seq != 1 || b.Seq != 2 || c.Seq != 3 {
		t.Errorf("Seqs set = %d, %d, %d; want 1, 2, 3", a.Seq, b.Seq, c.Seq)
	}
	got := ledger(t, s, "run-1")
	if len(got) != 3 {
		t.Fatalf("ledger has %d records, want 3", len(got))
	}
	for i, rec := range got {
		if rec.Seq != int64(i+1) {
			t.Errorf("listed record %d: Seq %d, want %d", i, rec.Seq, i+1)
		}
	}
	if got[2].StepID != "c" {
		t.Errorf("third record = %s, want c", got[2].StepID)
	}
}

// testCommandNegativeLimit: a negative CommandListAfter limit means
// the default, as 0 does (docs/compatibility.md, "Command inbox").
func testCommandNegativeLimit(t *testing.T, s store.Store) {
	for i := range 5 {
		appendCommand(t, s, newCommand(fmt.Sprintf("c%d", i), "run-1", "pause"))
	}
	for _, limit := range []int{-1, -100} {
		got, next := listCommands(t, s, 1, limit)
		if g := commandSeqs(got); !slices.Equal(g, []int64{2, 3, 4, 5}) || next != 5 {
			t.Errorf("CommandListAfter(1, %d) = %v next %d, want [2 3 4 5] next 5", limit, g, next)
		}
	}
}

// testFinderEmptyKey: LedgerFindCompleted returns nil for an empty
// key ("always for an empty key"), even when completed records without a
// key exist.
func testFinderEmptyKey(t *testing.T, s store.Store) {
	f, ok := s.(store.LedgerFinder)
	if !ok {
		t.Skip("store does not implement store.LedgerFinder")
	}
	done := newRecord("run-1", "a", durable.StepCompleted)
	create(t, s, newRun("run-1", runOpts{}), done)
	if got, err := f.LedgerFindCompleted(t.Context(), "run-1", ""); err != nil || got != nil {
		t.Errorf("LedgerFindCompleted(run-1, \"\") = %v, %v; want nil, nil", got, err)
	}
	if got, err := store.FindCompleted(t.Context(), s, "run-1", ""); err != nil || got != nil {
		t.Errorf("FindCompleted(run-1, \"\") = %v, %v; want nil, nil", got, err)
	}
}

// testClaimStoreClock: a zero Now judges expiry by the store's own
// clock: a live claim is refused to others, and taken once its TTL ran.
func testClaimStoreClock(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	ctx := t.Context()
	create(t, s, newRun("run-1", runOpts{}))
	const ttl = 300 * time.Millisecond
	claim := func(owner string, ttl time.Duration) error {
		return c.RunClaim(ctx, &store.RunClaimParams{RunID: "run-1", Owner: owner, TTL: ttl})
	}
	start := time.Now()
	if err := claim("a", ttl); err != nil {
		t.Fatalf("claim: %v", err)
	}
	var held *store.ClaimHeldError
	if err := claim("b", ttl); !errors.As(err, &held) || held.Owner != "a" {
		if time.Since(start) < ttl/2 {
			t.Errorf("claim of a live claim (store clock): err = %v, want a ClaimHeldError naming a", err)
		}
	}
	if err := claim("a", ttl); err != nil {
		t.Errorf("renewal (store clock): %v", err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if err := claim("b", time.Minute); err != nil {
		t.Errorf("claim once the TTL ran (store clock): %v", err)
	}
	if err := claim("a", time.Minute); !errors.As(err, &held) || held.Owner != "b" {
		t.Errorf("claim of b's live claim (store clock): err = %v, want a ClaimHeldError naming b", err)
	}
}

// testClaimEdges: claims are per run; a renewal with no claim at all
// is refused; a forced claim From an owner takes an expired claim of
// another owner and an absent one; a release by the holder lets anyone in.
func testClaimEdges(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	ctx := t.Context()
	create(t, s, newRun("run-1", runOpts{}))
	create(t, s, newRun("run-2", runOpts{}))
	cl := func(p store.RunClaimParams, now time.Duration) error {
		p.TTL = 10 * time.Second
		p.Now = base.Add(now)
		return c.RunClaim(ctx, &p)
	}
	if err := cl(store.RunClaimParams{RunID: "run-1", Owner: "a", Renew: true}, 0); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal of a claim never taken: err = %v, want ErrConflict", err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-1", Owner: "a"}, 0); err != nil {
		t.Fatalf("claim of run-1: %v", err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-2", Owner: "b"}, time.Second); err != nil {
		t.Errorf("claim of another run while run-1 is held: %v", err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-2", Owner: "a"}, 2*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim of run-2 held by b: err = %v, want ErrConflict", err)
	}
	// a's claim on run-1 expired (+10s): a forced claim from x (not the
	// holder) takes it, since no live claim is in the way.
	if err := cl(store.RunClaimParams{RunID: "run-1", Owner: "c", Force: true, From: "x"}, 11*time.Second); err != nil {
		t.Errorf("forced claim from x of a's expired claim: %v", err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-1", Owner: "a", Renew: true}, 12*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("renewal by a once c took its expired claim: err = %v, want ErrConflict", err)
	}
	// A forced claim from an owner of a run nobody claims.
	if err := c.RunRelease(ctx, "run-1", "c"); err != nil {
		t.Fatal(err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-1", Owner: "d", Force: true, From: "x"}, 13*time.Second); err != nil {
		t.Errorf("forced claim from x of an unclaimed run: %v", err)
	}
	// The release of run-2 by b does not touch run-1.
	if err := c.RunRelease(ctx, "run-2", "b"); err != nil {
		t.Fatal(err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-1", Owner: "e"}, 14*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim of run-1 held by d: err = %v, want ErrConflict", err)
	}
	if err := cl(store.RunClaimParams{RunID: "run-2", Owner: "e"}, 14*time.Second); err != nil {
		t.Errorf("claim of run-2 released by b: %v", err)
	}
}

// testClaimNonUTF8Owners: claim owners are compared byte for byte, also
// where they are not UTF-8 (Claims.Owner as a host built it). PostgreSQL
// once stored "runner-\xff" and "runner-\xfe" as one owner (U+FFFD for
// the bad byte): the second runner's claim was taken as its holder's
// renewal, so two runners drove the run at once, and either could release
// the other's claim. A refused claim names the holder as it claimed, and
// a forced claim From that holder takes the run.
func testClaimNonUTF8Owners(t *testing.T, s store.Store) {
	if !store.HasClaims(s) {
		t.Skip("store does not implement store.RunClaimer")
	}
	c := s.(store.RunClaimer)
	ctx := t.Context()
	create(t, s, newRun("run-1", runOpts{}))
	const a, b = "runner-\xff", "runner-\xfe"
	cl := func(p store.RunClaimParams, now time.Duration) error {
		p.RunID, p.TTL, p.Now = "run-1", 10*time.Second, base.Add(now)
		return c.RunClaim(ctx, &p)
	}
	if err := cl(store.RunClaimParams{Owner: a}, 0); err != nil {
		t.Fatalf("claim by %q: %v", a, err)
	}
	var held *store.ClaimHeldError
	if err := cl(store.RunClaimParams{Owner: b}, time.Second); !errors.As(err, &held) || held.Owner != a {
		t.Errorf("claim by %q while %q holds the run = %v; want a ClaimHeldError naming %q", b, a, err, a)
	}
	if err := c.RunRelease(ctx, "run-1", b); err != nil {
		t.Fatal(err)
	}
	if err := cl(store.RunClaimParams{Owner: a, Renew: true}, 2*time.Second); err != nil {
		t.Errorf("renewal by %q after %q released = %v; want its claim kept", a, b, err)
	}
	if err := cl(store.RunClaimParams{Owner: b, Force: true, From: b}, 3*time.Second); !errors.As(err, &held) {
		t.Errorf("forced claim from %q while %q holds the run = %v; want a ClaimHeldError", b, a, err)
	}
	if err := cl(store.RunClaimParams{Owner: b, Force: true, From: a}, 4*time.Second); err != nil {
		t.Errorf("forced claim from the holder %q = %v; want it taken", a, err)
	}
}
