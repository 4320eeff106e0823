package sqlite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// listFixture commits runs of every status, several per status with the
// same updated_at (ties broken by run_id), some in a session and some
// children, and returns them.
func listFixture(t *testing.T, s *Store) []*durable.RunState {
	t.Helper()
	base := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	statuses := []durable.RunStatus{durable.RunRunning, durable.RunWaiting, durable.RunCompleted,
		durable.RunFailed, durable.RunCancelled}
	var runs []*durable.RunState
	for i := range 60 {
		r := &durable.RunState{
			RunID: fmt.Sprintf("run-%03d", i), WorkflowID: "wf", Status: statuses[i*7%len(statuses)],
			CurrentNode: "n", Vars: map[string]any{},
			CreatedAt: durable.NewTime(base), UpdatedAt: durable.NewTime(base.Add(time.Duration(i/3) * time.Second)),
		}
		if r.Status == durable.RunWaiting {
			r.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k-" + r.RunID}
		}
		if i%4 == 0 {
			r.SessionID = "s1"
		}
		if i%5 == 0 {
			r.ParentRunID = "run-000"
		}
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

// newestFirst is the order every list promises, computed in Go.
func newestFirst(runs []*durable.RunState, keep func(*durable.RunState) bool, limit int) []string {
	var ids []*durable.RunState
	for _, r := range runs {
		if keep(r) {
			ids = append(ids, r)
		}
	}
	slices.SortFunc(ids, func(a, b *durable.RunState) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.RunID, a.RunID)
	})
	out := make([]string, 0, limit)
	for _, r := range ids[:min(limit, len(ids))] {
		out = append(out, r.RunID)
	}
	return out
}

// Lists without a filter an index leads are merged from the status index;
// they return exactly the newest runs in order, ties included, whatever
// the limit.
func TestRecentFirst_MergeMatchesFullSort(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	runs := listFixture(t, s)
	all := func(*durable.RunState) bool { return true }
	for _, limit := range []int{1, 5, 13, 40, 100} {
		rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.RunID)
		}
		if want := newestFirst(runs, all, limit); !slices.Equal(got, want) {
			t.Fatalf("RunIndex limit %d:\n got %v\nwant %v", limit, got, want)
		}
		rows, err = s.RunIndex(t.Context(), &store.RunIndexParams{Limit: limit, RootOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, r := range rows {
			got = append(got, r.RunID)
		}
		root := func(r *durable.RunState) bool { return r.ParentRunID == "" }
		if want := newestFirst(runs, root, limit); !slices.Equal(got, want) {
			t.Fatalf("RunIndex root only, limit %d:\n got %v\nwant %v", limit, got, want)
		}
		list, err := s.RunList(t.Context(), &store.RunListParams{Limit: limit, WaitReason: durable.WaitUser})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, r := range list {
			got = append(got, r.RunID)
		}
		user := func(r *durable.RunState) bool { return r.Waiting != nil && r.Waiting.Reason == durable.WaitUser }
		if want := newestFirst(runs, user, limit); !slices.Equal(got, want) {
			t.Fatalf("RunList wait reason user, limit %d:\n got %v\nwant %v", limit, got, want)
		}
	}
	if rows, err := openTemp(t).RunIndex(t.Context(), &store.RunIndexParams{}); err != nil || len(rows) != 0 {
		t.Fatalf("RunIndex of an empty store = %v, %v", rows, err)
	}
}

// openTemp opens a store in a temporary directory, closed at the test's end.
func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// No list query of the gateway reads the whole runs table: unfiltered and
// session lists are answered from indexes (the plan has no SCAN of runs).
func TestRecentFirst_NoFullScan(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	listFixture(t, s)
	// The queries as RunIndex and RunList build them; the last is event
	// delivery's listener query (runtime/builtin_events.go).
	index := func(p store.RunIndexParams) func() (where, listPath) {
		return func() (where, listPath) { return runIndexWhere(&p) }
	}
	list := func(p store.RunListParams) func() (where, listPath) {
		return func() (where, listPath) { return runListWhere(&p) }
	}
	for _, tc := range []struct {
		name  string
		build func() (where, listPath)
		index string // the index the plan must use, if any
	}{
		{"unfiltered", index(store.RunIndexParams{}), "idx_runs_status_updated"},
		{"root only", index(store.RunIndexParams{RootOnly: true}), "idx_runs_status_updated"},
		{"status", index(store.RunIndexParams{Status: durable.RunWaiting}), "idx_runs_status_updated"},
		{"workflow", index(store.RunIndexParams{WorkflowID: "wf"}), "idx_runs_workflow_updated"},
		{"workflow (list)", list(store.RunListParams{WorkflowID: "wf", WaitReason: durable.WaitUser}), "idx_runs_workflow_updated"},
		{"session", index(store.RunIndexParams{SessionID: "s1"}), "idx_runs_session"},
		// GET /runs as the gateway and its runner list: internal runs
		// excluded, by actor, a page after a cursor.
		{"gateway page", index(store.RunIndexParams{ExcludeWorkflowPrefix: "__", ActorID: "gateway",
			Before: &store.RunIndexCursor{UpdatedAt: durable.NewTime(time.Now()), RunID: "r"}}), "idx_runs_status_updated"},
		{"gateway page by status", index(store.RunIndexParams{Status: durable.RunRunning, ExcludeWorkflowPrefix: "__",
			Before: &store.RunIndexCursor{RunID: "r"}}), "idx_runs_status_updated"},
		{"gateway page by session", index(store.RunIndexParams{SessionID: "s1", ExcludeWorkflowPrefix: "__",
			Before: &store.RunIndexCursor{UpdatedAt: durable.NewTime(time.Now()), RunID: "r"}}), "idx_runs_session"},
		{"runner list", list(store.RunListParams{ActorID: "gateway", Status: durable.RunWaiting}), "idx_runs_status_updated"},
		{"event listeners", list(store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent,
			WaitKeys: []string{"evt:session:s1:x", "evt:global:global:x"}}), "idx_runs_event_wait_key"},
	} {
		w, path := tc.build()
		rd, err := s.readFor(t.Context(), path.readsLists())
		if err != nil {
			t.Fatal(err)
		}
		q, args, err := recentFirst(t.Context(), rd.db, "run_id", w, path, 50)
		if err != nil {
			rd.release()
			t.Fatal(err)
		}
		rows, err := rd.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			rd.release()
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		rd.release()
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN runs") {
				t.Errorf("%s list scans the runs table:\n%s", tc.name, strings.Join(plan, "\n"))
			}
		}
		if !strings.Contains(strings.Join(plan, "\n"), tc.index) {
			t.Errorf("%s list does not use %s:\n%s", tc.name, tc.index, strings.Join(plan, "\n"))
		}
	}
}

// BenchmarkRunIndex lists the newest 50 of 100,000 runs (a tenth of them
// in sessions of 100 runs) the ways the gateway's GET /runs does.
func BenchmarkRunIndex(b *testing.B) {
	s := openTemp(b)
	base := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	statuses := []durable.RunStatus{durable.RunCompleted, durable.RunCompleted, durable.RunCompleted,
		durable.RunFailed, durable.RunWaiting, durable.RunRunning}
	const runs = 100_000
	err := s.writeThen(b.Context(), func(ctx context.Context) error {
		for i := range runs {
			r := &durable.RunState{RunID: fmt.Sprintf("run-%06d", i), WorkflowID: fmt.Sprintf("wf-%d", i%20),
				Status: statuses[i%len(statuses)], CurrentNode: "n", Vars: map[string]any{"i": i},
				CreatedAt: durable.NewTime(base), UpdatedAt: durable.NewTime(base.Add(time.Duration(i) * time.Millisecond))}
			if i%10 == 0 {
				r.SessionID = fmt.Sprintf("session-%d", i/1000)
			}
			text, err := durable.MarshalRun(r, pyjson.Line)
			if err != nil {
				return err
			}
			args := append(runArgs(r, string(text)), nullString(r.CreatedAt.String()), 1, r.RunID)
			if _, err := s.w.runInsert.exec(ctx, args...); err != nil {
				return err
			}
		}
		s.listDirty = runs // as RunCommit counts them: the list columns are copied after the commit
		return nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		p    store.RunIndexParams
	}{
		{"unfiltered", store.RunIndexParams{Limit: 50}},
		{"root_only", store.RunIndexParams{Limit: 50, RootOnly: true}},
		{"session", store.RunIndexParams{Limit: 50, SessionID: "session-42"}},
		{"status", store.RunIndexParams{Limit: 50, Status: durable.RunWaiting}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				rows, err := s.RunIndex(b.Context(), &bc.p)
				if err != nil || len(rows) == 0 {
					b.Fatalf("RunIndex = %d rows, %v", len(rows), err)
				}
			}
		})
	}
}

// A commit leaves the identity columns out of its UPDATE; one that
// changes them still lands, through the full UPDATE, and lists follow.
func TestRunCommit_IdentityChangeFallsBackToFullUpdate(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	now := durable.NewTime(time.Now())
	r := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunRunning, SessionID: "a",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	r.SessionID, r.WorkflowID = "b", "wf2"
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r}); err != nil {
		t.Fatalf("commit with a changed identity: %v", err)
	}
	for session, want := range map[string]int{"a": 0, "b": 1} {
		rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{SessionID: session})
		if err != nil || len(rows) != want {
			t.Fatalf("RunIndex(session %s) = %v, %v; want %d rows", session, rows, err, want)
		}
		if want == 1 && rows[0].WorkflowID != "wf2" {
			t.Fatalf("workflow column = %q after the change", rows[0].WorkflowID)
		}
	}
	r.Version-- // stale: both updates find nothing
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale commit = %v; want ErrConflict", err)
	}
}
