package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// The data migrations 002 and 004 read runs, decide, then update them
// one by one. In a rolling upgrade a runner on the previous binary keeps
// committing meanwhile; under READ COMMITTED an UPDATE that waited on its
// row lock applies to the row the runner committed, so it must re-check
// that the row is still the one it read (its version), or it overwrites
// part of the runner's commit.

// runJSON returns r as a commit stores it.
func runJSON(t *testing.T, r *durable.RunState) string {
	t.Helper()
	text, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// waitBlockedBy waits until a statement starting with prefix waits on a
// lock conn's transaction holds. It asks through a connection of its own:
// inside conn's transaction pg_stat_activity would keep its first snapshot.
func waitBlockedBy(t *testing.T, conn *pgx.Conn, prefix string) {
	t.Helper()
	admin, err := pgx.Connect(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int
		if err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid)) AND starts_with(query, $2)`, int32(conn.PgConn().PID()), prefix).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatalf("no statement starting with %q waited on the row within 10 s", prefix)
}

// migrateWhileHeld runs migrate in the background while tx (on conn)
// holds a run's row, waits until a statement starting with prefix waits
// on that row, commits tx, and fails the test if migrate failed.
func migrateWhileHeld(t *testing.T, conn *pgx.Conn, tx pgx.Tx, prefix string, migrate func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- migrate() }()
	waitBlockedBy(t, conn, prefix)
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestMigration004KeepsDueAtOffARunCommittedMeanwhile: 004 sets due_at on
// a run it read waiting (paused by the string "true", so without due_at);
// a runner completes the run meanwhile. The completed run must not get a
// due_at: nothing would ever commit it again, and RunListDue would list it
// for ever.
func TestMigration004KeepsDueAtOffARunCommittedMeanwhile(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	st := openSchema(t, schema)
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pausedRun(t, st, "r", "true", until)
	// As the unfixed 002 left it, at version 3.
	execOn(t, schema, "UPDATE runs SET due_at = NULL", "DELETE FROM schema_migrations WHERE version >= 4")

	done, err := st.RunGet(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	done.Status, done.Waiting = durable.RunCompleted, nil
	// The runner's commit, not yet committed: it holds the run's row.
	conn, tx := lockingTx(t, schema)
	if _, err := tx.Exec(t.Context(), `UPDATE runs SET status = 'completed', wait_reason = NULL, wait_until = NULL,
		due_at = NULL, run_json = $1, version = version + 1 WHERE run_id = 'r'`, runJSON(t, done)); err != nil {
		t.Fatal(err)
	}
	// A process of the new binary opens the schema: 004 runs, and its
	// UPDATE waits on the row.
	migrateWhileHeld(t, conn, tx, "UPDATE runs SET due_at", func() error {
		s, err := postgres.New(context.Background(), postgres.Config{URL: testURL(t), Schema: schema, MaxConns: 2})
		if err == nil {
			_ = s.Close()
		}
		return err
	})
	if due := dueIDs(t, st, until.Add(time.Hour)); len(due) != 0 {
		t.Errorf("RunListDue lists %q; want none (r completed while migration 004 ran)", due)
	}
}

// TestMigration002KeepsDueAtOfARunResumedMeanwhile: 002 takes due_at from
// a run it read paused; a runner lifts the pause meanwhile, and its commit
// sets due_at. The resumed run must keep it, or its deadline never fires
// (RunListDue never lists it) until something else commits it.
func TestMigration002KeepsDueAtOfARunResumedMeanwhile(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	st := openSchema(t, schema)
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pausedRun(t, st, "r", true, until)
	// As a version before 002 left it: due_at on a paused run too.
	execOn(t, schema, "UPDATE runs SET due_at = wait_until")

	resumed, err := st.RunGet(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	resumed.Vars["_runtime"] = map[string]any{"control": map[string]any{"paused": false}}
	conn, tx := lockingTx(t, schema)
	if _, err := tx.Exec(t.Context(), `UPDATE runs SET due_at = wait_until, run_json = $1, version = version + 1
		WHERE run_id = 'r'`, runJSON(t, resumed)); err != nil {
		t.Fatal(err)
	}
	m002, err := postgres.MigrationSQL(2)
	if err != nil {
		t.Fatal(err)
	}
	// 002's UPDATE waits on the row (pg_stat_activity shows the DO block,
	// cut at track_activity_query_size).
	first, _, _ := strings.Cut(m002, "\n")
	migrateWhileHeld(t, conn, tx, first, func() error {
		c, err := pgx.Connect(context.Background(), testURL(t))
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "SET search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return err
		}
		_, err = c.Exec(context.Background(), m002)
		return err
	})
	if due := dueIDs(t, st, until.Add(time.Hour)); !slices.Equal(due, []string{"r"}) {
		t.Errorf("RunListDue lists %q; want [r] (r was resumed while migration 002 ran)", due)
	}
}
