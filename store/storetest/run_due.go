package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

var runDueTests = []subtest{
	{"Deadlines", testDueDeadlines},
	{"Limit", testDueLimit},
	{"LeavesOnResume", testDueLeavesOnResume},
	{"NextDue", testNextDue},
	{"PausedRunsAreNotDue", testPausedNotDue},
	{"TieBreak", testDueTieBreak},
	{"NegativeLimit", testDueNegativeLimit},
	{"DefaultLimit", testDueDefaultLimit},
	{"OnlyUntilAndEventDeadlines", testDueOnlyUntilAndEvent},
	{"NowInAnyZone", testDueNowZone},
}

// SetPaused sets or lifts a host pause the way the runtime records it
// (vars._runtime.control.paused).
func SetPaused(r *durable.RunState, paused bool) {
	rt, _ := r.Vars["_runtime"].(map[string]any)
	if rt == nil {
		rt = map[string]any{}
		r.Vars["_runtime"] = rt
	}
	ctl, _ := rt["control"].(map[string]any)
	if ctl == nil {
		ctl = map[string]any{}
		rt["control"] = ctl
	}
	if paused {
		ctl["paused"] = true
	} else {
		delete(ctl, "paused")
	}
}

// testPausedNotDue: a paused run's deadline leaves the due index (the
// scheduler would skip it, and a batch of paused runs would hold back the
// others) and comes back with the commit that lifts the pause.
func testPausedNotDue(t *testing.T, s store.Store) {
	seedDueRuns(t, s)
	r := get(t, s, "event-5")
	SetPaused(r, true)
	commit(t, s, r)
	paused := newRun("paused-1", runOpts{Wait: untilWait(time.Second)})
	SetPaused(paused, true)
	create(t, s, paused)
	checkDue(t, listDue(t, s, time.Hour, 0), dueRun("until-10", 10*time.Second), dueRun("until-20", 20*time.Second))
	if next, _ := s.RunNextDue(t.Context()); !next.Equal(at(10 * time.Second).Time) {
		t.Errorf("RunNextDue with the earlier runs paused = %v, want %v", next, at(10*time.Second))
	}
	r = get(t, s, "event-5")
	SetPaused(r, false)
	commit(t, s, r)
	checkDue(t, listDue(t, s, time.Hour, 2), dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second))
}

// seedDueRuns stores waits with deadlines at +5s (event), +10s and +20s
// (until) plus runs that never become due.
func seedDueRuns(t *testing.T, s store.Store) {
	t.Helper()
	evt := keyWait(durable.WaitEvent, "evt:session:s:go")
	evt.Until = at(5 * time.Second)
	create(t, s, newRun("until-10", runOpts{Wait: untilWait(10 * time.Second)}))
	create(t, s, newRun("until-20", runOpts{Wait: untilWait(20 * time.Second)}))
	create(t, s, newRun("event-5", runOpts{Wait: evt}))
	create(t, s, newRun("user", runOpts{Wait: keyWait(durable.WaitUser, "u")}))
	create(t, s, newRun("running", runOpts{}))
	create(t, s, newRun("done", runOpts{Status: durable.RunCompleted}))
}

func listDue(t *testing.T, s store.Store, now time.Duration, limit int) []store.DueRun {
	t.Helper()
	due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: base.Add(now), Limit: limit})
	if err != nil {
		t.Fatalf("RunListDue: %v", err)
	}
	return due
}

func dueRun(id string, d time.Duration) store.DueRun { return store.DueRun{RunID: id, Until: at(d)} }

func checkDue(t *testing.T, got []store.DueRun, want ...store.DueRun) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RunListDue =\n %v\nwant\n %v", got, want)
	}
}

func testDueDeadlines(t *testing.T, s store.Store) {
	seedDueRuns(t, s)
	checkDue(t, listDue(t, s, 0, 0))
	checkDue(t, listDue(t, s, 5*time.Second-time.Microsecond, 0))
	checkDue(t, listDue(t, s, 5*time.Second, 0), dueRun("event-5", 5*time.Second))
	checkDue(t, listDue(t, s, 10*time.Second, 0), dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second))
	checkDue(t, listDue(t, s, time.Hour, 0),
		dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second), dueRun("until-20", 20*time.Second))
}

func testDueLimit(t *testing.T, s store.Store) {
	seedDueRuns(t, s)
	checkDue(t, listDue(t, s, time.Hour, 2), dueRun("event-5", 5*time.Second), dueRun("until-10", 10*time.Second))
	checkDue(t, listDue(t, s, time.Hour, 1), dueRun("event-5", 5*time.Second))
}

func testDueLeavesOnResume(t *testing.T, s store.Store) {
	seedDueRuns(t, s)
	// until-10 resumes (running), until-20 completes, event-5 moves its
	// deadline later.
	r := get(t, s, "until-10")
	r.Status, r.Waiting = durable.RunRunning, nil
	commit(t, s, r)
	r = get(t, s, "until-20")
	r.Status, r.Waiting = durable.RunCompleted, nil
	commit(t, s, r)
	r = get(t, s, "event-5")
	r.Waiting.Until = at(30 * time.Second)
	commit(t, s, r)
	checkDue(t, listDue(t, s, 25*time.Second, 0))
	checkDue(t, listDue(t, s, time.Hour, 0), dueRun("event-5", 30*time.Second))
	// A run that starts waiting again with a deadline is due again.
	r = get(t, s, "until-10")
	r.Status, r.Waiting = durable.RunWaiting, untilWait(2*time.Second)
	commit(t, s, r)
	// A waiting run whose status says it is no longer waiting is not due.
	r = get(t, s, "event-5")
	r.Status = durable.RunCancelled
	commit(t, s, r)
	checkDue(t, listDue(t, s, time.Hour, 0), dueRun("until-10", 2*time.Second))
}

func testNextDue(t *testing.T, s store.Store) {
	next, err := s.RunNextDue(t.Context())
	if err != nil || !next.IsZero() {
		t.Fatalf("RunNextDue on an empty store = %v, %v; want zero", next, err)
	}
	seedDueRuns(t, s)
	if next, _ := s.RunNextDue(t.Context()); !next.Equal(at(5 * time.Second).Time) {
		t.Errorf("RunNextDue = %v, want %v", next, at(5*time.Second))
	}
	r := get(t, s, "event-5")
	r.Status, r.Waiting = durable.RunRunning, nil
	commit(t, s, r)
	if next, _ := s.RunNextDue(t.Context()); !next.Equal(at(10 * time.Second).Time) {
		t.Errorf("RunNextDue after resume = %v, want %v", next, at(10*time.Second))
	}
	for _, id := range []string{"until-10", "until-20"} {
		r := get(t, s, id)
		r.Status, r.Waiting = durable.RunCompleted, nil
		commit(t, s, r)
	}
	if next, _ := s.RunNextDue(t.Context()); !next.IsZero() {
		t.Errorf("RunNextDue with no deadlines = %v, want zero", next)
	}
}
