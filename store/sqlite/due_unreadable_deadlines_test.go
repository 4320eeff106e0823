package sqlite_test

import (
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// RunListDue returns "waiting runs whose deadline ... is at or before
// p.Now, earliest first", at most Limit of them (store.RunStore;
// storetest: "the earliest deadlines"), and a deadline no parser reads is
// passed over "and the runs behind it are still released" (runs.go
// dueTime; docs/compatibility.md: such a deadline "never falls due").
// Python stores a WAIT_UNTIL's until as the node gave it: a text in the
// canonical form that is no date (2026-02-30) was read by the SQL query
// with its LIMIT and then dropped in Go, so it took a slot of the limit,
// and with Limit 1 the due run behind it was not listed at all, while a
// short listing tells the scheduler nothing else is due (PollOnce: "the
// listing is complete").

// dueModes are the store modes whose due queries differ: over the redo
// log's queue (owned), straight on the database (owned without the redo
// log), and on the reader pool (shared).
var dueModes = map[string]sqlite.Config{
	"owned":         {},
	"owned no redo": {NoRedoLog: true},
	"shared":        {Shared: true},
}

// pythonSaveUntil saves WAIT_UNTIL runs as Python 0.4.28's save does
// (pythonUpsertRun, then its wait_index upsert), with the until texts as
// given.
func pythonSaveUntil(t *testing.T, path string, runs ...struct{ id, until string }) {
	t.Helper()
	const at = "2026-01-01T00:00:00+00:00"
	db := rawDB(t, path)
	defer db.Close()
	for _, r := range runs {
		j := `{"run_id": "` + r.id + `", "workflow_id": "wf", "status": "waiting", "current_node": "n", "vars": {}, "waiting": {"reason": "until", "wait_key": null, "until": "` + r.until +
			`", "resume_to_node": "n", "result_key": null, "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "` +
			at + `", "updated_at": "` + at + `", "actor_id": null, "session_id": null, "parent_run_id": null}`
		if _, err := db.Exec(pythonUpsertRun, r.id, "wf", "waiting", "until", r.until, nil, nil, nil, at, at, j); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, ?, ?)
			ON CONFLICT(run_id) DO UPDATE SET next_due_iso=excluded.next_due_iso, updated_at_iso=excluded.updated_at_iso, status=excluded.status`,
			r.id, r.until, at, "waiting_until"); err != nil {
			t.Fatal(err)
		}
	}
}

func dueRunIDs(due []store.DueRun) []string {
	var ids []string
	for _, d := range due {
		ids = append(ids, d.RunID)
	}
	return ids
}

// TestDueListLimitNotTakenByUnreadableDeadlines: with Limit 1, the due
// run behind an unreadable deadline is listed.
func TestDueListLimitNotTakenByUnreadableDeadlines(t *testing.T) {
	t.Parallel()
	for name, cfg := range dueModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := migratedDB(t)
			pythonSaveUntil(t, path, []struct{ id, until string }{
				{"a-no-date", "2026-02-30T00:00:00+00:00"}, {"b-due", "2026-03-01T00:00:00+00:00"}}...)
			cfg.Path = path
			s := openWith(t, cfg)
			due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if ids := dueRunIDs(due); !slices.Equal(ids, []string{"b-due"}) {
				t.Errorf("RunListDue(Limit 1) = %v; want [b-due]: the unreadable deadline of a-no-date took the only slot", ids)
			}
		})
	}
}

// TestDueListLimitPastManyUnreadableDeadlines: more unreadable deadlines
// than the limit, and runs the redo log's queue changes in between, still
// give the earliest readable due runs, as many as the limit.
func TestDueListLimitPastManyUnreadableDeadlines(t *testing.T) {
	t.Parallel()
	for name, cfg := range dueModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := migratedDB(t)
			pythonSaveUntil(t, path, []struct{ id, until string }{
				{"bad-1", "2026-02-29T00:00:00+00:00"}, {"bad-2", "2026-02-30T00:00:00+00:00"},
				{"bad-3", "2026-02-31T00:00:00+00:00"}, {"c-queued", "2026-03-01T00:00:00+00:00"},
				{"d-due", "2026-03-02T00:00:00+00:00"}, {"e-due", "2026-03-03T00:00:00+00:00"},
				{"f-due", "2026-03-04T00:00:00+00:00"}}...)
			cfg.Path = path
			s := openWith(t, cfg)
			// A commit of c-queued moves its deadline past now: in the owned
			// store it waits in the redo log's queue, and the listing takes
			// the run from there, not from its wait_index row.
			sqlite.HoldRedoQueue(s, true)
			r, err := s.RunGet(ctx, "c-queued")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "c-queued"}); err != nil {
				t.Fatal(err) // the cache then knows its last seq, which a commit from the cache needs
			}
			r.Waiting.Until = durable.NewTime(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
				t.Fatal(err)
			}
			if name == "owned" && sqlite.RedoQueueLen(s) != 1 {
				t.Fatalf("setup: %d commits queued in the redo log; want c-queued's", sqlite.RedoQueueLen(s))
			}
			now := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
			for limit, want := range map[int][]string{1: {"d-due"}, 2: {"d-due", "e-due"}, 3: {"d-due", "e-due", "f-due"}, 10: {"d-due", "e-due", "f-due"}} {
				due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				if ids := dueRunIDs(due); !slices.Equal(ids, want) {
					t.Errorf("RunListDue(Limit %d) = %v; want %v", limit, ids, want)
				}
			}
		})
	}
}
