package sqlite

import (
	"database/sql"
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

// staleLists counts the runs whose list columns are not up to date: new
// runs (unlisted) and recorded ones.
func staleLists(t *testing.T, s *Store) (unlisted, recorded int) {
	t.Helper()
	s.wsem <- struct{}{}
	defer func() { <-s.wsem }()
	if s.redo != nil { // the database as the store reads it: its redo queue applied
		s.redo.mu.Lock()
		err := s.drain(t.Context())
		s.redo.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.wconn.QueryRowContext(t.Context(), `SELECT
		(SELECT COUNT(*) FROM runs WHERE list_status IS NULL),
		(SELECT COUNT(*) FROM runs_list_dirty)`).Scan(&unlisted, &recorded); err != nil {
		t.Fatal(err)
	}
	return unlisted, recorded
}

// moveRuns commits a new status and a later updated_at for every third
// run, and returns the runs.
func moveRuns(t *testing.T, s *Store, runs []*durable.RunState) []*durable.RunState {
	t.Helper()
	for i, r := range runs {
		if i%3 != 0 {
			continue
		}
		r.Status, r.Waiting = durable.RunCompleted, nil
		r.UpdatedAt = durable.NewTime(r.UpdatedAt.Add(time.Duration(i) * time.Minute))
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r}); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// checkLists compares every list path (status, workflow, the merge, and a
// session list, which reads no list column) with the order computed in Go.
func checkLists(t *testing.T, s *Store, runs []*durable.RunState) {
	t.Helper()
	ids := func(list []*durable.RunState) []string {
		var out []string
		for _, r := range list {
			out = append(out, r.RunID)
		}
		return out
	}
	for _, st := range []durable.RunStatus{durable.RunRunning, durable.RunWaiting, durable.RunCompleted} {
		got, err := s.RunList(t.Context(), &store.RunListParams{Status: st, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		want := newestFirst(runs, func(r *durable.RunState) bool { return r.Status == st }, 100)
		if !slices.Equal(ids(got), want) {
			t.Fatalf("RunList status %s:\n got %v\nwant %v", st, ids(got), want)
		}
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{WorkflowID: "wf", Limit: 25})
	if err != nil {
		t.Fatal(err)
	}
	if want := newestFirst(runs, func(*durable.RunState) bool { return true }, 25); !slices.Equal(ids(got), want) {
		t.Fatalf("RunList workflow:\n got %v\nwant %v", ids(got), want)
	}
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{Limit: 30})
	if err != nil {
		t.Fatal(err)
	}
	var index []string
	for _, row := range rows {
		index = append(index, row.RunID)
	}
	if want := newestFirst(runs, func(*durable.RunState) bool { return true }, 30); !slices.Equal(index, want) {
		t.Fatalf("RunIndex:\n got %v\nwant %v", index, want)
	}
	got, err = s.RunList(t.Context(), &store.RunListParams{SessionID: "s1", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if want := newestFirst(runs, func(r *durable.RunState) bool { return r.SessionID == "s1" }, 100); !slices.Equal(ids(got), want) {
		t.Fatalf("RunList session:\n got %v\nwant %v", ids(got), want)
	}
}

// Commits leave the list columns stale (new runs unlisted, changed runs
// recorded), yet every list returns exactly what the runs' own status
// and updated_at give, and leaves nothing stale behind: owned and shared.
func TestLists_ExactWhileDeferred(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db.sqlite"), Shared: shared, IdleCheckpoint: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runs := listFixture(t, s)
			if u, _ := staleLists(t, s); u != len(runs) {
				t.Fatalf("%d unlisted runs after creating %d; want all (the list columns are deferred)", u, len(runs))
			}
			checkLists(t, s, runs)
			if u, r := staleLists(t, s); u != 0 || r != 0 {
				t.Fatalf("after a list: %d unlisted, %d recorded; want none", u, r)
			}
			moveRuns(t, s, runs)
			if _, r := staleLists(t, s); r != 20 {
				t.Fatalf("%d runs recorded after changing 20 listed ones; want 20", r)
			}
			checkLists(t, s, runs)
			if u, r := staleLists(t, s); u != 0 || r != 0 {
				t.Fatalf("after a list: %d unlisted, %d recorded; want none", u, r)
			}
		})
	}
}

// A store that owns its file brings the list columns up to date in the
// writer turn of the commit that makes listFlushAt runs stale, and a run
// committed again before that is counted once.
func TestLists_FlushEveryNRuns(t *testing.T) {
	t.Parallel()
	s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "db.sqlite"), IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.listFlushAt = 10
	now := durable.NewTime(time.Now())
	for i := range 25 {
		r := &durable.RunState{RunID: fmt.Sprintf("run-%02d", i), WorkflowID: "wf", Status: durable.RunRunning,
			Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
		u, rec := staleLists(t, s)
		if want := (i + 1) % 10; u != want || rec != 0 {
			t.Fatalf("after run %d: %d unlisted, %d recorded; want %d, 0", i, u, rec, want)
		}
		if i != 20 {
			continue
		}
		for range 3 { // run-20 again: still one stale run of the next flush's ten
			r.UpdatedAt = durable.NewTime(r.UpdatedAt.Add(time.Second))
			if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r}); err != nil {
				t.Fatal(err)
			}
		}
		staleLists(t, s) // applies the redo queue, which counts stale runs
		s.wsem <- struct{}{}
		dirty := s.listDirty
		<-s.wsem
		if dirty != 1 {
			t.Fatalf("after committing run-20 four times: %d stale runs counted; want 1", dirty)
		}
	}
}

// What a process killed between flushes leaves (the database and its WAL,
// with unlisted and recorded runs) opens with exact lists.
func TestLists_CrashImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "db.sqlite")
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs := listFixture(t, s)
	checkLists(t, s, runs) // lists them all
	moveRuns(t, s, runs)   // 20 recorded
	extra := &durable.RunState{RunID: "run-new", WorkflowID: "wf", Status: durable.RunWaiting,
		Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k"}, Vars: map[string]any{},
		CreatedAt: durable.NewTime(time.Now()), UpdatedAt: durable.NewTime(time.Now())}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: extra, Create: true}); err != nil {
		t.Fatal(err)
	}
	runs = append(runs, extra)
	if u, r := staleLists(t, s); u != 1 || r != 20 {
		t.Fatalf("before the copy: %d unlisted, %d recorded; want 1, 20", u, r)
	}
	copyCrashImage(t, s, path, filepath.Join(dir, "crash.sqlite"))
	crashed, err := New(t.Context(), Config{Path: filepath.Join(dir, "crash.sqlite"), IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer crashed.Close()
	checkLists(t, crashed, runs)
}

// Rows written by the Python runtime (its upsert, which knows no list
// column) while a shared store has the file open are listed at once: a
// new run is unlisted, an updated one recorded by the trigger.
func TestLists_PythonWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := New(t.Context(), Config{Path: path, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs := listFixture(t, s)
	checkLists(t, s, runs)

	py, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()
	upsert := func(r *durable.RunState) {
		t.Helper()
		text, err := durable.MarshalRun(r, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		// The statement of abstractruntime/storage/sqlite.py (0.4.28).
		if _, err := py.ExecContext(t.Context(), `INSERT INTO runs (
			  run_id, workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id, session_id,
			  created_at, updated_at, run_json)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(run_id) DO UPDATE SET
			  workflow_id=excluded.workflow_id, status=excluded.status, wait_reason=excluded.wait_reason,
			  wait_until=excluded.wait_until, parent_run_id=excluded.parent_run_id, actor_id=excluded.actor_id,
			  session_id=excluded.session_id, updated_at=excluded.updated_at, run_json=excluded.run_json`,
			r.RunID, r.WorkflowID, string(r.Status), nil, nil, nullString(r.ParentRunID), nil,
			nullString(r.SessionID), r.CreatedAt.String(), r.UpdatedAt.String(), string(text)); err != nil {
			t.Fatal(err)
		}
	}
	later := durable.NewTime(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	runs[4].Status, runs[4].Waiting, runs[4].UpdatedAt = durable.RunCompleted, nil, later
	upsert(runs[4])
	fresh := &durable.RunState{RunID: "run-python", WorkflowID: "wf", Status: durable.RunRunning,
		Vars: map[string]any{}, CreatedAt: later, UpdatedAt: durable.NewTime(later.Add(time.Second))}
	upsert(fresh)
	runs = append(runs, fresh)
	if u, r := staleLists(t, s); u != 1 || r != 1 {
		t.Fatalf("after Python's writes: %d unlisted, %d recorded; want 1, 1", u, r)
	}
	checkLists(t, s, runs)
}

// A commit that fails after it recorded its run as stale for the lists
// (here: a ledger insert a trigger refuses) is rolled back with that
// record; the store must not remember the run as recorded, or the next
// commit skips recording it and the lists by status stay stale.
func TestListsExactAfterARolledBackCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	if _, err := db.Exec(`CREATE TRIGGER refuse_boom BEFORE INSERT ON ledger
		WHEN NEW.record_json LIKE '%boom%' BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s = openStore(t, Config{Path: path, NoRedoLog: true})
	r := redoRun("ffff")
	commitSteps(t, s, r, durable.RunRunning, true, "a")
	if runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunRunning}); err != nil || len(runs) != 1 {
		t.Fatalf("RunList(running) = %d runs, %v; want 1", len(runs), err)
	}
	failing := *r
	failing.Status = durable.RunCompleted
	err := s.RunCommit(ctx, &store.CommitParams{Run: &failing,
		Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "boom", Status: durable.StepCompleted}}})
	if err == nil || !strings.Contains(err.Error(), "boom refused") {
		t.Fatalf("commit with a refused record: %v, want the trigger's error", err)
	}
	commitSteps(t, s, r, durable.RunCompleted, false, "b")
	runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].RunID != r.RunID {
		t.Fatalf("RunList(completed) = %d runs, want run %s", len(runs), r.RunID)
	}
	if runs, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunRunning}); err != nil || len(runs) != 0 {
		t.Fatalf("RunList(running) = %d runs, %v; want none", len(runs), err)
	}
}

// Close brings the list columns up to date, owned and shared, so that
// the file it leaves has exact list indexes for any reader that trusts
// them (the next open would flush too, but a tool reading the file
// would not). Were Close to skip its flush, the unlisted and recorded
// runs of the last commits would stay stale in the file.
func TestCloseLeavesTheListColumnsUpToDate(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "db.sqlite")
			s := openStore(t, Config{Path: path, Shared: shared})
			runs := listFixture(t, s)
			checkLists(t, s, runs) // lists them all: nothing stale
			moveRuns(t, s, runs)   // 20 recorded, fewer than a flush's
			if u, r := staleLists(t, s); u != 0 || r != 20 {
				t.Fatalf("before Close: %d unlisted, %d recorded; want 0, 20", u, r)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db := openRawDB(t, path)
			defer db.Close()
			var unlisted, recorded, stale int
			if err := db.QueryRow(`SELECT
				(SELECT COUNT(*) FROM runs WHERE list_status IS NULL),
				(SELECT COUNT(*) FROM runs_list_dirty),
				(SELECT COUNT(*) FROM runs WHERE list_status IS NOT status
					OR list_updated_at IS NOT COALESCE(updated_at, ''))`).Scan(&unlisted, &recorded, &stale); err != nil {
				t.Fatal(err)
			}
			if unlisted != 0 || recorded != 0 || stale != 0 {
				t.Fatalf("after Close: %d unlisted, %d recorded, %d stale list entries; want none", unlisted, recorded, stale)
			}
		})
	}
}

// Runs without updated_at (NULL in the column) list last, by run_id, and
// a page after one of them continues with the next, whatever put their
// list columns in place: the flush of new runs and that of runs recorded
// by an update both store the empty text, never NULL, which the keyset
// condition of a cursor (list_updated_at < ? OR list_updated_at = ? …)
// would never match, so the pages after it would come back empty.
func TestListPagesPastRunsWithoutUpdatedAtAfterAnUpdate(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "db.sqlite"), Shared: shared})
			ctx := t.Context()
			var runs []*durable.RunState
			for _, id := range []string{"a", "b", "c"} {
				r := redoRun(id) // no updated_at
				if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
					t.Fatal(err)
				}
				runs = append(runs, r)
			}
			page := func(before *store.RunIndexCursor) []store.RunIndexRow {
				t.Helper()
				rows, err := s.RunIndex(ctx, &store.RunIndexParams{WorkflowID: "wf", Limit: 1, Before: before})
				if err != nil {
					t.Fatal(err)
				}
				return rows
			}
			page(nil) // flushes: the new runs get their list columns
			for _, r := range runs {
				if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil { // recorded, still no updated_at
					t.Fatal(err)
				}
			}
			var got []string
			var before *store.RunIndexCursor
			for range len(runs) + 1 {
				rows := page(before)
				if len(rows) == 0 {
					break
				}
				got = append(got, rows[0].RunID)
				before = &store.RunIndexCursor{UpdatedAt: rows[0].UpdatedAt, RunID: rows[0].RunID}
			}
			if want := []string{"c", "b", "a"}; !slices.Equal(got, want) {
				t.Fatalf("paged one by one: %v, want %v", got, want)
			}
		})
	}
}
