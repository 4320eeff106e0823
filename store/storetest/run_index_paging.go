package storetest

// Checks of the listing filters the gateway's GET /runs needs
// (store.RunIndexParams.ExcludeWorkflowPrefix, ActorID and Before;
// store.RunListParams.ActorID): each filters before the limit, on every
// path a backend may answer a listing by, and keyset paging returns every
// run once, in the listing's order. The groups of the suite list them.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// seedPrefixRuns stores runs of internal ("__…") and other workflows,
// the internal ones the most recently updated, in two statuses and one
// session.
func seedPrefixRuns(t *testing.T, s store.Store) {
	t.Helper()
	for i, r := range []struct{ id, wf string }{
		{"u1", "wf"},
		{"u2", "_single"},
		{"u3", "a__b"},
		{"u4", "wf"},
		{"i1", "__session_memory__"},
		{"i2", "__x"},
		{"i3", "__"},
		{"i4", "__x"},
	} {
		o := runOpts{Workflow: r.wf, Session: "s", Created: time.Duration(i+1) * time.Second}
		if i%2 == 1 {
			o.Wait = keyWait(durable.WaitUser, "k-"+r.id)
		}
		create(t, s, newRun(r.id, o))
	}
}

// testIndexExcludePrefix: ExcludeWorkflowPrefix leaves out the runs whose
// workflow id starts with it, alone or with the other filters (a
// workflow filter naming an excluded workflow then lists nothing).
func testIndexExcludePrefix(t *testing.T, s store.Store) {
	seedPrefixRuns(t, s)
	for _, c := range []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{}, []string{"i4", "i3", "i2", "i1", "u4", "u3", "u2", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__"}, []string{"u4", "u3", "u2", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "_"}, []string{"u4", "u3", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__x"}, []string{"i3", "i1", "u4", "u3", "u2", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__x_"}, []string{"i4", "i3", "i2", "i1", "u4", "u3", "u2", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "wf"}, []string{"i4", "i3", "i2", "i1", "u3", "u2"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", WorkflowID: "wf"}, []string{"u4", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", WorkflowID: "__x"}, []string{}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__x", WorkflowID: "__x"}, []string{}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__s", WorkflowID: "__x"}, []string{"i4", "i2"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", Status: durable.RunWaiting}, []string{"u4", "u2"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", Status: durable.RunRunning}, []string{"u3", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", SessionID: "s"}, []string{"u4", "u3", "u2", "u1"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", RootOnly: true}, []string{"u4", "u3", "u2", "u1"}},
	} {
		if g := indexIDs(t, s, c.p); !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
}

// testIndexExcludeLiteral: the prefix is literal text, not a LIKE
// pattern: '%', '_' and '\' match only themselves, and case matters.
func testIndexExcludeLiteral(t *testing.T, s store.Store) {
	wfs := map[string]string{
		"r1": `p_%1`,   // starts with p_%
		"r2": `pa%1`,   // LIKE 'p_%' would match
		"r3": `p_x`,    // LIKE 'p_%%' would match
		"r4": `P_%up`,  // SQLite's LIKE ignores ASCII case
		"r5": `b\_1`,   // starts with b\_
		"r6": `b_1`,    // LIKE 'b\_%' ESCAPE '\' would match
		"r7": `b\x1`,   // LIKE 'b\_%' would match
		"r8": `%all`,   // starts with %
		"r9": `b\\_z`,  // a doubled backslash
		"rA": `p_%`,    // the prefix itself
		"rB": `x%_\yz`, // starts with x%_\
		"rC": `xa_\yz`, // LIKE 'x%_\%' would match
	}
	all := []string{"rC", "rB", "rA", "r9", "r8", "r7", "r6", "r5", "r4", "r3", "r2", "r1"}
	for i, id := range all {
		create(t, s, newRun(id, runOpts{Workflow: wfs[id], Created: time.Duration(len(all)-i) * time.Second}))
	}
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(drop, id) })
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{`p_%`, without("r1", "rA")},
		{`p_`, without("r1", "r3", "rA")},
		{`%`, without("r8")},
		{`_`, all},
		{`b\_`, without("r5")},
		{`b\`, without("r5", "r7", "r9")},
		{`b\\`, without("r9")},
		{`b_`, without("r6")},
		{`x%_\`, without("rB")},
		{`P`, without("r4")},
		{`p_%1x`, all},
	} {
		p := store.RunIndexParams{ExcludeWorkflowPrefix: c.prefix}
		if g := indexIDs(t, s, p); !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(ExcludeWorkflowPrefix %q) = %v, want %v", c.prefix, g, c.want)
		}
		p.Limit = 2
		if g := indexIDs(t, s, p); !slices.Equal(g, c.want[:2]) {
			t.Errorf("RunIndex(ExcludeWorkflowPrefix %q, Limit 2) = %v, want %v", c.prefix, g, c.want[:2])
		}
	}
}

// testIndexExcludeBeforeLimit: the excluded runs, the newest, do not
// take places in the page: Limit runs that are not excluded are listed,
// whatever other filter picks the path the listing takes.
func testIndexExcludeBeforeLimit(t *testing.T, s store.Store) {
	for i := range 4 {
		o := runOpts{Workflow: "wf", Session: "s", Created: time.Duration(i+1) * time.Second}
		if i%2 == 0 {
			o.Wait = keyWait(durable.WaitUser, "k")
		}
		create(t, s, newRun(fmt.Sprintf("user-%d", i), o))
	}
	for i := range 10 { // newer than every user run, in both statuses
		o := runOpts{Workflow: "__internal", Session: "s", Created: time.Duration(100+i) * time.Second}
		if i%2 == 0 {
			o.Wait = keyWait(durable.WaitUser, "k")
		}
		create(t, s, newRun(fmt.Sprintf("int-%d", i), o))
	}
	for _, c := range []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{Limit: 3}, []string{"user-3", "user-2", "user-1"}},
		{store.RunIndexParams{Limit: 1}, []string{"user-3"}},
		{store.RunIndexParams{Limit: -1}, []string{"user-3"}},
		{store.RunIndexParams{Limit: 10}, []string{"user-3", "user-2", "user-1", "user-0"}},
		{store.RunIndexParams{Status: durable.RunWaiting, Limit: 2}, []string{"user-2", "user-0"}},
		{store.RunIndexParams{WorkflowID: "wf", Limit: 3}, []string{"user-3", "user-2", "user-1"}},
		{store.RunIndexParams{SessionID: "s", Limit: 3}, []string{"user-3", "user-2", "user-1"}},
		{store.RunIndexParams{RootOnly: true, Limit: 3}, []string{"user-3", "user-2", "user-1"}},
	} {
		c.p.ExcludeWorkflowPrefix = "__"
		if g := indexIDs(t, s, c.p); !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
}

// seedActorRuns stores runs of actors differing in case and padding, the
// other actors' the most recently updated.
func seedActorRuns(t *testing.T, s store.Store) {
	t.Helper()
	for i, r := range []struct{ id, actor string }{
		{"g1", "gateway"},
		{"g2", "gateway"},
		{"g3", "gateway"},
		{"n1", ""},
		{"o1", "other"},
		{"o2", "Gateway"},
		{"o3", "gateway "},
		{"o4", "gate"},
	} {
		o := runOpts{Workflow: "wf", Session: "s", Actor: r.actor, Created: time.Duration(i+1) * time.Second}
		if i%2 == 1 {
			o.Wait = keyWait(durable.WaitEvent, "evt:k")
		}
		create(t, s, newRun(r.id, o))
	}
}

// testIndexActor: ActorID keeps the runs of exactly that actor, before
// the limit, with the other filters.
func testIndexActor(t *testing.T, s store.Store) {
	seedActorRuns(t, s)
	create(t, s, newRun("gi", runOpts{Workflow: "__int", Actor: "gateway", Created: time.Minute}))
	for _, c := range []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{ActorID: "gateway"}, []string{"gi", "g3", "g2", "g1"}},
		{store.RunIndexParams{ActorID: "gateway", Limit: 2}, []string{"gi", "g3"}},
		{store.RunIndexParams{ActorID: "gateway", ExcludeWorkflowPrefix: "__", Limit: 2}, []string{"g3", "g2"}},
		{store.RunIndexParams{ActorID: "Gateway"}, []string{"o2"}},
		{store.RunIndexParams{ActorID: "gate"}, []string{"o4"}},
		{store.RunIndexParams{ActorID: "nobody"}, []string{}},
		{store.RunIndexParams{ActorID: "gateway", Status: durable.RunWaiting}, []string{"g2"}},
		{store.RunIndexParams{ActorID: "gateway", Status: durable.RunRunning, Limit: 1}, []string{"gi"}},
		{store.RunIndexParams{ActorID: "gateway", WorkflowID: "wf", Limit: 2}, []string{"g3", "g2"}},
		{store.RunIndexParams{ActorID: "gateway", SessionID: "s", Limit: 2}, []string{"g3", "g2"}},
		{store.RunIndexParams{ActorID: "gateway", RootOnly: true, Limit: 3}, []string{"gi", "g3", "g2"}},
	} {
		if g := indexIDs(t, s, c.p); !slices.Equal(g, c.want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
	// The filter follows commits: a run that changes actor moves.
	g1 := get(t, s, "g1")
	g1.ActorID = "other"
	commit(t, s, g1)
	o1 := get(t, s, "o1")
	o1.ActorID = "gateway"
	commit(t, s, o1)
	if g, w := indexIDs(t, s, store.RunIndexParams{ActorID: "gateway", WorkflowID: "wf"}), []string{"o1", "g3", "g2"}; !slices.Equal(g, w) {
		t.Errorf("RunIndex(ActorID gateway) after commits = %v, want %v", g, w)
	}
}

// testListActor: RunListParams.ActorID keeps the runs of exactly that
// actor, before the limit, with the other filters.
func testListActor(t *testing.T, s store.Store) {
	seedActorRuns(t, s)
	for _, c := range []struct {
		p    store.RunListParams
		want []string
	}{
		{store.RunListParams{ActorID: "gateway"}, []string{"g3", "g2", "g1"}},
		{store.RunListParams{ActorID: "gateway", Limit: 2}, []string{"g3", "g2"}},
		{store.RunListParams{ActorID: "Gateway"}, []string{"o2"}},
		{store.RunListParams{ActorID: "gateway "}, []string{"o3"}},
		{store.RunListParams{ActorID: "nobody"}, []string{}},
		{store.RunListParams{ActorID: "gateway", Status: durable.RunRunning, Limit: 1}, []string{"g3"}},
		{store.RunListParams{ActorID: "gateway", Status: durable.RunWaiting}, []string{"g2"}},
		{store.RunListParams{ActorID: "gateway", WaitReason: durable.WaitEvent}, []string{"g2"}},
		{store.RunListParams{ActorID: "gateway", WaitKeys: []string{"evt:k"}, Limit: 1}, []string{"g2"}},
		{store.RunListParams{ActorID: "gateway", WorkflowID: "wf", Limit: 2}, []string{"g3", "g2"}},
		{store.RunListParams{ActorID: "gateway", SessionID: "s", Limit: 2}, []string{"g3", "g2"}},
	} {
		got, err := s.RunList(t.Context(), &c.p)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, c.want) {
			t.Errorf("RunList(%+v) = %v, want %v", c.p, g, c.want)
		}
	}
	g1 := get(t, s, "g1")
	g1.ActorID = "other"
	commit(t, s, g1)
	if got, _ := s.RunList(t.Context(), &store.RunListParams{ActorID: "gateway"}); !slices.Equal(ids(got), []string{"g3", "g2"}) {
		t.Errorf("RunList(ActorID gateway) after a commit = %v, want [g3 g2]", ids(got))
	}
}

// seedPagingRuns stores runs of which several share an updated_at (some
// differing below the microsecond, which the stores do not keep), one has
// none, one is internal and one of another actor.
func seedPagingRuns(t *testing.T, s store.Store) {
	t.Helper()
	for _, r := range []struct {
		id, wf, actor, parent string
		upd                   durable.Time
		wait                  bool
	}{
		{"c", "W", "gateway", "", rawAt(4*time.Second + 700*time.Nanosecond), true},
		{"a", "W", "gateway", "", durable.Time{}, false},
		{"g", "W", "gateway", "", at(5 * time.Second), true},
		{"__m", "__mem", "gateway", "", at(5 * time.Second), false},
		{"e", "W", "gateway", "g", rawAt(5*time.Second + 999*time.Nanosecond), true},
		{"b", "W", "gateway", "", at(3 * time.Second), false},
		{"h", "W", "other", "", at(5 * time.Second), false},
		{"f", "W", "gateway", "", rawAt(5*time.Second + 300*time.Nanosecond), false},
		{"d", "W", "gateway", "", at(4 * time.Second), false},
	} {
		o := runOpts{Workflow: r.wf, Actor: r.actor, Parent: r.parent, Session: "s"}
		if r.wait {
			o.Wait = keyWait(durable.WaitUser, "k")
		}
		run := newRun(r.id, o)
		run.UpdatedAt = r.upd
		if r.upd.IsZero() {
			run.CreatedAt = durable.Time{}
		}
		create(t, s, run)
	}
}

// testIndexPaging: listing page after page, each page's last row the
// next page's Before, gives every run once, in the order of the listing
// without a cursor (updated_at descending, then run id descending, runs
// without updated_at last), for every filter; the last page is short or
// empty.
func testIndexPaging(t *testing.T, s store.Store) {
	seedPagingRuns(t, s)
	for _, c := range []struct {
		p    store.RunIndexParams
		want []string
	}{
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__", ActorID: "gateway"}, []string{"g", "f", "e", "d", "c", "b", "a"}},
		{store.RunIndexParams{}, []string{"h", "g", "f", "e", "__m", "d", "c", "b", "a"}},
		{store.RunIndexParams{ExcludeWorkflowPrefix: "__"}, []string{"h", "g", "f", "e", "d", "c", "b", "a"}},
		{store.RunIndexParams{Status: durable.RunRunning}, []string{"h", "f", "__m", "d", "b", "a"}},
		{store.RunIndexParams{Status: durable.RunWaiting}, []string{"g", "e", "c"}},
		{store.RunIndexParams{WorkflowID: "W", ActorID: "gateway"}, []string{"g", "f", "e", "d", "c", "b", "a"}},
		{store.RunIndexParams{SessionID: "s", ExcludeWorkflowPrefix: "__"}, []string{"h", "g", "f", "e", "d", "c", "b", "a"}},
		{store.RunIndexParams{RootOnly: true, ActorID: "gateway"}, []string{"g", "f", "__m", "d", "c", "b", "a"}},
	} {
		full := indexIDs(t, s, c.p)
		if !slices.Equal(full, c.want) {
			t.Errorf("RunIndex(%+v) = %v, want %v", c.p, full, c.want)
		}
		var paged []string
		p := c.p
		p.Limit = 3
		for page := 0; ; page++ {
			if page > len(c.want) {
				t.Fatalf("RunIndex(%+v) paging did not end: %v", c.p, paged)
			}
			rows, err := s.RunIndex(t.Context(), &p)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) > 3 {
				t.Fatalf("page %d of RunIndex(%+v) has %d rows, more than the limit", page, c.p, len(rows))
			}
			for _, r := range rows {
				paged = append(paged, r.RunID)
			}
			if len(rows) < 3 {
				break
			}
			p.Before = store.CursorOf(&rows[len(rows)-1])
		}
		if !slices.Equal(paged, c.want) {
			t.Errorf("RunIndex(%+v) paged by 3 = %v, want %v", c.p, paged, c.want)
		}
	}
}

// testIndexCursorByHand: a cursor names a position, not a row: its run
// need not exist, its time is read to the microsecond as stored, and a
// zero time is the position of the runs without updated_at.
func testIndexCursorByHand(t *testing.T, s store.Store) {
	seedPagingRuns(t, s)
	for _, c := range []struct {
		name   string
		cursor store.RunIndexCursor
		want   []string
	}{
		{"after f", store.RunIndexCursor{UpdatedAt: at(5 * time.Second), RunID: "f"}, []string{"e", "__m", "d", "c", "b", "a"}},
		{"after f, time below the µs", store.RunIndexCursor{UpdatedAt: rawAt(5*time.Second + 800*time.Nanosecond), RunID: "f"}, []string{"e", "__m", "d", "c", "b", "a"}},
		{"no such run", store.RunIndexCursor{UpdatedAt: at(5 * time.Second), RunID: "ff"}, []string{"f", "e", "__m", "d", "c", "b", "a"}},
		{"before every id", store.RunIndexCursor{UpdatedAt: at(5 * time.Second), RunID: ""}, []string{"d", "c", "b", "a"}},
		{"after every id", store.RunIndexCursor{UpdatedAt: at(4 * time.Second), RunID: "\U0010FFFF"}, []string{"d", "c", "b", "a"}},
		{"between times", store.RunIndexCursor{UpdatedAt: at(4*time.Second + time.Millisecond), RunID: "a"}, []string{"d", "c", "b", "a"}},
		{"newer than all", store.RunIndexCursor{UpdatedAt: at(time.Hour), RunID: ""}, []string{"h", "g", "f", "e", "__m", "d", "c", "b", "a"}},
		{"older than all times", store.RunIndexCursor{UpdatedAt: at(-time.Hour), RunID: ""}, []string{"a"}},
		{"no time", store.RunIndexCursor{RunID: "b"}, []string{"a"}},
		{"no time, after a", store.RunIndexCursor{RunID: "a"}, []string{}},
	} {
		cur := c.cursor
		if g := indexIDs(t, s, store.RunIndexParams{Before: &cur}); !slices.Equal(g, c.want) {
			t.Errorf("%s: RunIndex(Before %+v) = %v, want %v", c.name, c.cursor, g, c.want)
		}
		if g := indexIDs(t, s, store.RunIndexParams{Before: &cur, Status: durable.RunRunning, Limit: 2}); !slices.Equal(g, running(c.want)[:min(2, len(running(c.want)))]) {
			t.Errorf("%s: RunIndex(Before %+v, running, Limit 2) = %v, want %v", c.name, c.cursor, g, running(c.want)[:min(2, len(running(c.want)))])
		}
	}
}

// running keeps the ids of the runs seedPagingRuns stores running.
func running(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "g" || id == "e" || id == "c" })
}
