package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// seedListRuns stores five runs, committed out of updated_at order.
func seedListRuns(t *testing.T, s store.Store) {
	t.Helper()
	runs := []*durable.RunState{
		newRun("r3", runOpts{Workflow: "B", Wait: keyWait(durable.WaitEvent, "k3"), Parent: "r1", Created: 3 * time.Second}),
		newRun("r1", runOpts{Workflow: "A", Session: "s1", Created: 1 * time.Second}),
		newRun("r5", runOpts{Workflow: "A", Wait: untilWait(time.Hour), Created: 5 * time.Second}),
		newRun("r2", runOpts{Workflow: "A", Session: "s2", Wait: keyWait(durable.WaitUser, "k2"), Created: 2 * time.Second}),
		newRun("r4", runOpts{Workflow: "B", Session: "s1", Status: durable.RunCompleted, Created: 4 * time.Second}),
	}
	for _, r := range runs {
		create(t, s, r)
	}
}

var runListTests = []subtest{
	{"Filters", testRunListFilters},
	{"UpdatedAtOrder", testRunListOrder},
	{"Limit", testRunListLimit},
	{"DefaultLimit", testRunListDefaultLimit},
	{"TieBreak", testListTieBreak},
	{"LimitAfterFilters", testListLimitAfterFilters},
	{"FiltersFollowCommits", testFiltersFollowCommits},
	{"EmptyAndRepeatedWaitKeys", testWaitKeysEdge},
	{"NoTimesLast", testListNoTimes},
	{"Actor", testListActor},
}

func testRunListFilters(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	cases := []struct {
		name string
		p    store.RunListParams
		want []string
	}{
		{"All", store.RunListParams{}, []string{"r5", "r4", "r3", "r2", "r1"}},
		{"Status", store.RunListParams{Status: durable.RunWaiting}, []string{"r5", "r3", "r2"}},
		{"StatusNone", store.RunListParams{Status: durable.RunFailed}, []string{}},
		{"WaitReason", store.RunListParams{WaitReason: durable.WaitEvent}, []string{"r3"}},
		{"WaitReasonUntil", store.RunListParams{WaitReason: durable.WaitUntil}, []string{"r5"}},
		{"Workflow", store.RunListParams{WorkflowID: "A"}, []string{"r5", "r2", "r1"}},
		{"Session", store.RunListParams{SessionID: "s1"}, []string{"r4", "r1"}},
		{"Parent", store.RunListParams{ParentID: "r1"}, []string{"r3"}},
		{"WaitKeys", store.RunListParams{WaitKeys: []string{"k2", "k3", "nope"}}, []string{"r3", "r2"}},
		{"WaitKeysNone", store.RunListParams{WaitKeys: []string{"nope"}}, []string{}},
		{"Combined", store.RunListParams{Status: durable.RunWaiting, WorkflowID: "A"}, []string{"r5", "r2"}},
		{"CombinedKeys", store.RunListParams{WaitKeys: []string{"k2", "k3"}, WorkflowID: "B"}, []string{"r3"}},
	}
	for _, c := range cases {
		got, err := s.RunList(t.Context(), &c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("%s: RunList = %v, want %v", c.name, g, c.want)
		}
	}
	// Listed runs are complete states with their version.
	got, _ := s.RunList(t.Context(), &store.RunListParams{WaitKeys: []string{"k2"}})
	if len(got) == 1 {
		if got[0].Version != 1 || got[0].Waiting == nil || got[0].Vars["context"] == nil {
			t.Errorf("listed run is incomplete: %#v", got[0])
		}
	}
}

func testRunListOrder(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	// Moving r1's updated_at forward moves it first; the filters follow
	// the new state (r1 now waits on k9).
	r1 := get(t, s, "r1")
	r1.UpdatedAt = at(time.Minute)
	r1.Status = durable.RunWaiting
	r1.Waiting = keyWait(durable.WaitEvent, "k9")
	commit(t, s, r1)
	r2 := get(t, s, "r2")
	r2.Waiting.WaitKey = "k2b"
	commit(t, s, r2)
	check := func(p store.RunListParams, want ...string) {
		t.Helper()
		got, err := s.RunList(t.Context(), &p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, want) {
			t.Errorf("RunList(%+v) = %v, want %v", p, g, want)
		}
	}
	check(store.RunListParams{}, "r1", "r5", "r4", "r3", "r2")
	check(store.RunListParams{Status: durable.RunWaiting}, "r1", "r5", "r3", "r2")
	check(store.RunListParams{Status: durable.RunRunning})
	check(store.RunListParams{WaitKeys: []string{"k9"}}, "r1")
	check(store.RunListParams{WaitKeys: []string{"k2"}})
	check(store.RunListParams{WaitKeys: []string{"k2b"}}, "r2")
}

func testRunListLimit(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	for _, c := range []struct {
		limit int
		want  []string
	}{{2, []string{"r5", "r4"}}, {-1, []string{"r5"}}, {-50, []string{"r5"}}, {0, []string{"r5", "r4", "r3", "r2", "r1"}}, {99, []string{"r5", "r4", "r3", "r2", "r1"}}} {
		got, err := s.RunList(t.Context(), &store.RunListParams{Limit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("RunList(Limit %d) = %v, want %v", c.limit, g, c.want)
		}
	}
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{Limit: -3})
	if err != nil || len(rows) != 1 || rows[0].RunID != "r5" {
		t.Errorf("RunIndex(Limit -3) = %v, %v; want [r5]", rows, err)
	}
}

func testRunListDefaultLimit(t *testing.T, s store.Store) {
	if testing.Short() {
		t.Skip("creates more than 100 runs")
	}
	n := store.DefaultListLimit + 5
	for i := range n {
		create(t, s, newRun(fmt.Sprintf("run-%03d", i), runOpts{Created: time.Duration(i) * time.Second}))
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != store.DefaultListLimit {
		t.Fatalf("RunList(Limit 0) returned %d runs, want %d", len(got), store.DefaultListLimit)
	}
	if got[0].RunID != fmt.Sprintf("run-%03d", n-1) {
		t.Errorf("first run = %s, want the most recently updated", got[0].RunID)
	}
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if err != nil || len(rows) != store.DefaultListLimit {
		t.Errorf("RunIndex(Limit 0) = %d rows, %v; want %d", len(rows), err, store.DefaultListLimit)
	}
	all, err := s.RunList(t.Context(), &store.RunListParams{Limit: n + 10})
	if err != nil || len(all) != n {
		t.Errorf("RunList(Limit %d) = %d runs, %v; want %d", n+10, len(all), err, n)
	}
}

var runIndexTests = []subtest{
	{"Rows", testRunIndexRows},
	{"Filters", testRunIndexFilters},
	{"RunLifecycle", testRunIndexLifecycle},
	{"SessionTrimmed", testIndexSessionTrimmed},
	{"WaitUntilOfEventTimeout", testIndexEventUntil},
	{"LifecycleFollowsCommits", testIndexLifecycleFollows},
	{"ExcludeWorkflowPrefix", testIndexExcludePrefix},
	{"ExcludeWorkflowPrefixLiteral", testIndexExcludeLiteral},
	{"ExcludeBeforeLimit", testIndexExcludeBeforeLimit},
	{"Actor", testIndexActor},
	{"Paging", testIndexPaging},
	{"CursorByHand", testIndexCursorByHand},
}

func testRunIndexRows(t *testing.T, s store.Store) {
	r := newRun("r1", runOpts{Workflow: "wf1", Wait: untilWait(time.Hour), Parent: "p", Actor: "a", Session: "s",
		Created: time.Second, Updated: 2 * time.Second})
	create(t, s, r)
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("RunIndex = %v, %v", rows, err)
	}
	want := store.RunIndexRow{RunID: "r1", WorkflowID: "wf1", Status: durable.RunWaiting,
		WaitReason: durable.WaitUntil, WaitUntil: at(time.Hour), ParentRunID: "p", ActorID: "a", SessionID: "s",
		CreatedAt: at(time.Second), UpdatedAt: at(2 * time.Second)}
	if !reflect.DeepEqual(rows[0], want) {
		t.Errorf("row:\n got %+v\nwant %+v", rows[0], want)
	}
	// After the run completes the wait columns are empty.
	r.Status, r.Waiting = durable.RunCompleted, nil
	commit(t, s, r)
	rows, _ = s.RunIndex(t.Context(), &store.RunIndexParams{})
	want.Status, want.WaitReason, want.WaitUntil = durable.RunCompleted, "", durable.Time{}
	if len(rows) != 1 || !reflect.DeepEqual(rows[0], want) {
		t.Errorf("row after completion:\n got %+v\nwant %+v", rows, want)
	}
}

func testRunIndexFilters(t *testing.T, s store.Store) {
	seedListRuns(t, s)
	cases := []struct {
		name string
		p    store.RunIndexParams
		want []string
	}{
		{"All", store.RunIndexParams{}, []string{"r5", "r4", "r3", "r2", "r1"}},
		{"RootOnly", store.RunIndexParams{RootOnly: true}, []string{"r5", "r4", "r2", "r1"}},
		{"Session", store.RunIndexParams{SessionID: "s1"}, []string{"r4", "r1"}},
		{"Status", store.RunIndexParams{Status: durable.RunWaiting}, []string{"r5", "r3", "r2"}},
		{"Workflow", store.RunIndexParams{WorkflowID: "B"}, []string{"r4", "r3"}},
		{"WorkflowRootOnly", store.RunIndexParams{WorkflowID: "B", RootOnly: true}, []string{"r4"}},
		{"Limit", store.RunIndexParams{Limit: 2}, []string{"r5", "r4"}},
	}
	for _, c := range cases {
		if g := indexIDs(t, s, c.p); !slices.Equal(g, c.want) {
			t.Errorf("%s: RunIndex = %v, want %v", c.name, g, c.want)
		}
	}
}

func testRunIndexLifecycle(t *testing.T, s store.Store) {
	long := strings.Repeat("é", 300)
	create(t, s, newRun("with", runOpts{Created: 2 * time.Second, Vars: map[string]any{"_run_lifecycle": map[string]any{
		"source":     "  gateway  ",
		"purpose":    long,
		"visibility": json.Number("5"),
		"run_mode":   "",
		"unknown":    "dropped",
		"flow_id":    "flow-1",
		"retention": map[string]any{"mode": "ttl", "ttl_s": json.Number("3600"), "expires_at": nil,
			"other": "dropped"},
	}}}))
	create(t, s, newRun("bad-ttl", runOpts{Created: time.Second, Vars: map[string]any{"_run_lifecycle": map[string]any{
		"retention": map[string]any{"ttl_s": json.Number("-5")},
	}}}))
	create(t, s, newRun("without", runOpts{}))
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if err != nil || len(rows) != 3 {
		t.Fatalf("RunIndex = %v, %v", rows, err)
	}
	want := map[string]any{
		"source":    "gateway",
		"purpose":   strings.Repeat("é", 240),
		"flow_id":   "flow-1",
		"retention": map[string]any{"mode": "ttl", "ttl_s": int64(3600)},
	}
	if rows[0].RunID != "with" || !reflect.DeepEqual(rows[0].RunLifecycle, want) {
		t.Errorf("run_lifecycle of %s:\n got %#v\nwant %#v", rows[0].RunID, rows[0].RunLifecycle, want)
	}
	if rows[1].RunLifecycle != nil || rows[2].RunLifecycle != nil {
		t.Errorf("run_lifecycle = %#v, %#v; want nil (nothing valid / absent)", rows[1].RunLifecycle, rows[2].RunLifecycle)
	}
	// Rows are private copies.
	rows[0].RunLifecycle["source"] = "MUTATED"
	rows, _ = s.RunIndex(t.Context(), &store.RunIndexParams{Limit: 1})
	if rows[0].RunLifecycle["source"] != "gateway" {
		t.Errorf("mutating a row changed the store: %#v", rows[0].RunLifecycle)
	}
}

var runChildrenTests = []subtest{
	{"OrderAndStatus", testChildren},
	{"TieBreak", testChildrenTieBreak},
	{"PrivateCopies", testChildrenPrivateCopies},
}

func testChildren(t *testing.T, s store.Store) {
	create(t, s, newRun("parent", runOpts{}))
	create(t, s, newRun("other-parent", runOpts{}))
	create(t, s, newRun("child-1", runOpts{Parent: "parent", Created: 1 * time.Second, Updated: 9 * time.Second}))
	create(t, s, newRun("child-x", runOpts{Parent: "other-parent", Created: 1 * time.Second}))
	create(t, s, newRun("child-2", runOpts{Parent: "parent", Status: durable.RunCompleted, Created: 2 * time.Second}))
	create(t, s, newRun("child-3", runOpts{Parent: "parent", Created: 3 * time.Second}))
	check := func(parent string, status durable.RunStatus, want ...string) {
		t.Helper()
		got, err := s.RunListChildren(t.Context(), parent, status)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, want) {
			t.Errorf("RunListChildren(%s, %q) = %v, want %v", parent, status, g, want)
		}
	}
	check("parent", "", "child-1", "child-2", "child-3")
	check("parent", durable.RunCompleted, "child-2")
	check("parent", durable.RunRunning, "child-1", "child-3")
	check("parent", durable.RunFailed)
	check("other-parent", "", "child-x")
	check("nobody", "")
	// Status changes are seen; deleted children disappear.
	c3 := get(t, s, "child-3")
	c3.Status = durable.RunCompleted
	commit(t, s, c3)
	check("parent", durable.RunCompleted, "child-2", "child-3")
	if _, err := s.RunDelete(t.Context(), "child-1"); err != nil {
		t.Fatal(err)
	}
	check("parent", "", "child-2", "child-3")
	got, _ := s.RunListChildren(t.Context(), "parent", "")
	if len(got) > 0 && (got[0].Version != 1 || got[0].Vars == nil) {
		t.Errorf("child is not a complete state: %#v", got[0])
	}
}

var runDeleteTests = []subtest{
	{"Delete", testRunDelete},
	{"GoneFromEveryList", testDeleteGoneFromEveryList},
	{"LedgerKeptSeqContinues", testDeleteLedgerSeqContinues},
}

func testRunDelete(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{Wait: untilWait(time.Second), Parent: "p"})
	create(t, s, r, newRecord("run-1", "n", durable.StepStarted))
	create(t, s, newRun("run-2", runOpts{}))
	ok, err := s.RunDelete(t.Context(), "run-1")
	if err != nil || !ok {
		t.Fatalf("RunDelete = %v, %v; want true", ok, err)
	}
	if _, err := s.RunGet(t.Context(), "run-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet after delete: err = %v, want ErrNotFound", err)
	}
	if ok, err := s.RunDelete(t.Context(), "run-1"); err != nil || ok {
		t.Errorf("second RunDelete = %v, %v; want false", ok, err)
	}
	if ok, err := s.RunDelete(t.Context(), "never"); err != nil || ok {
		t.Errorf("RunDelete(never) = %v, %v; want false", ok, err)
	}
	list, _ := s.RunList(t.Context(), &store.RunListParams{})
	if g := ids(list); !slices.Equal(g, []string{"run-2"}) {
		t.Errorf("RunList after delete = %v", g)
	}
	rows, _ := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if len(rows) != 1 {
		t.Errorf("RunIndex after delete = %v", rows)
	}
	due, _ := s.RunListDue(t.Context(), &store.RunListDueParams{Now: base.Add(time.Hour)})
	if len(due) != 0 {
		t.Errorf("RunListDue after delete = %v", due)
	}
	if next, _ := s.RunNextDue(t.Context()); !next.IsZero() {
		t.Errorf("RunNextDue after delete = %v", next)
	}
	if kids, _ := s.RunListChildren(t.Context(), "p", ""); len(kids) != 0 {
		t.Errorf("RunListChildren after delete = %v", ids(kids))
	}
	// The ledger is not deleted with the run.
	if n, _ := s.LedgerCount(t.Context(), "run-1"); n != 1 {
		t.Errorf("LedgerCount after RunDelete = %d, want 1", n)
	}
	// The id can be created again, from version 0.
	again := newRun("run-1", runOpts{})
	create(t, s, again)
	if again.Version != 1 {
		t.Errorf("Version of a re-created run = %d, want 1", again.Version)
	}
}
