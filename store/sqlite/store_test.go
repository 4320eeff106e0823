package sqlite_test

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite schema.sql from a freshly migrated database")

var t0 = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)

func testRun(id string) *durable.RunState {
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
		Vars: map[string]any{}, CreatedAt: durable.NewTime(t0), UpdatedAt: durable.NewTime(t0)}
}

func TestNew_Config(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, cfg := range []sqlite.Config{
		{},
		{Path: ":memory:"},
		{Path: "file:x.db?mode=memory"},
		{Path: filepath.Join(dir, "a.db"), Synchronous: "EXTRA"},
		{Path: filepath.Join(dir, "b.db"), CheckpointPages: -1},
	} {
		if s, err := sqlite.New(t.Context(), cfg); err == nil {
			_ = s.Close()
			t.Errorf("New(%+v) succeeded; want an error", cfg)
		}
	}
	for _, sync := range []string{"", "normal", "FULL", "OFF"} {
		s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "s"+sync+".db"), Synchronous: sync})
		if err != nil {
			t.Fatalf("New(synchronous %q): %v", sync, err)
		}
		_ = s.Close()
	}
}

func TestStore_Close(t *testing.T) {
	t.Parallel()
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: testRun("r"), Create: true}); err == nil {
		t.Fatal("RunCommit after Close succeeded")
	}
	if _, err := s.RunGet(t.Context(), "r"); err == nil {
		t.Fatal("RunGet after Close succeeded")
	}
}

// TestMigrations opens a fresh database twice (the second open applies
// nothing) and checks schema.sql is the dump of the migrated schema.
func TestMigrations(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := open(t, path)
	r := testRun("r1")
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openShared(t, path)
	if got, err := s2.RunGet(t.Context(), "r1"); err != nil || got.Version != 1 {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	checkMigrations(t, path)

	dump := dumpSchema(t, path)
	if *update {
		if err := os.WriteFile("schema.sql", []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != dump {
		t.Errorf("schema.sql is stale; run go test ./store/sqlite/ -run TestMigrations -update\n--- dump:\n%s", dump)
	}
}

// TestMigrations_NewerSchemaRefused: a database a newer binary migrated
// is refused with an error naming both versions, and left as it was.
func TestMigrations_NewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: path, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var have int
	if err := db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&have); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from_the_future', '2030-01-01T00:00:00+00:00')`, have+5); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // the store opens its file exclusively
		t.Fatal(err)
	}
	_, err = sqlite.New(t.Context(), sqlite.Config{Path: path, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d, newer than this binary's %d", have+5, have)) {
		t.Fatalf("opening a database at a newer schema: %v; want an error naming versions %d and %d", err, have+5, have)
	}
	if db, err = sql.Open("sqlite", path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != have+1 {
		t.Errorf("schema_migrations holds %d rows (%v), want %d", n, err, have+1)
	}
}

// dumpSchema returns the schema of the database at path as SQL text.
func dumpSchema(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type, name, sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
		ORDER BY tbl_name, CASE type WHEN 'table' THEN 0 ELSE 1 END, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("-- Schema of store/sqlite after every migration (generated by TestMigrations -update; do not edit).\n")
	b.WriteString("-- Tables from the Python runtime, then the Go additions (version, wait_key, completed_key,\n")
	b.WriteString("-- run_claims, schema_migrations); see migrations/.\n")
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n%s;\n", text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRunListDue_EventDeadline: an event wait with a timeout is in the
// due index (Python indexes WAIT_UNTIL only), and leaves it on resume.
func TestRunListDue_EventDeadline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "db"))
	until := t0.Add(90*time.Second + 123456*time.Microsecond)
	r := testRun("ev")
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt:x", Until: durable.NewTime(until), AllowFreeText: true}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		now  time.Time
		want int
	}{
		{until.Add(-time.Microsecond), 0},
		{until, 1},
		{until.Add(999 * time.Nanosecond), 1}, // sub-microsecond now: truncated, still due
		{until.Add(time.Hour), 1},
	} {
		due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: c.now})
		if err != nil || len(due) != c.want {
			t.Fatalf("RunListDue(%v) = %+v, %v; want %d", c.now, due, err, c.want)
		}
		if c.want == 1 && (due[0].RunID != "ev" || !due[0].Until.Equal(until)) {
			t.Fatalf("due = %+v", due[0])
		}
	}
	byKey, err := s.RunList(ctx, &store.RunListParams{WaitKeys: []string{"evt:x"}})
	if err != nil || len(byKey) != 1 {
		t.Fatalf("RunList by wait key = %d, %v", len(byKey), err)
	}
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{})
	if err != nil || len(rows) != 1 || !rows[0].WaitUntil.Equal(until) || rows[0].WaitReason != durable.WaitEvent {
		t.Fatalf("RunIndex = %+v, %v; want wait_until %v", rows, err, until)
	}
	r.Status, r.Waiting = durable.RunRunning, nil
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.RunListDue(ctx, &store.RunListDueParams{Now: until.Add(time.Hour)}); len(due) != 0 {
		t.Fatalf("resumed run still due: %+v", due)
	}
	if byKey, _ := s.RunList(ctx, &store.RunListParams{WaitKeys: []string{"evt:x"}}); len(byKey) != 0 {
		t.Fatalf("resumed run still found by wait key")
	}
	if next, err := s.RunNextDue(ctx); err != nil || !next.IsZero() {
		t.Fatalf("RunNextDue = %v, %v; want zero", next, err)
	}
}

func TestLedgerFindCompleted(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "db"))
	rec := func(step string, st durable.StepStatus, key string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r", StepID: step, Status: st, IdempotencyKey: key, Attempt: 1}
	}
	if err := s.LedgerAppend(ctx, "r", []*durable.StepRecord{
		rec("a", durable.StepStarted, "k1"), rec("a", durable.StepFailed, "k1"),
		rec("b", durable.StepStarted, "k1"), rec("b", durable.StepCompleted, "k1"),
		rec("c", durable.StepCompleted, "k1"), rec("d", durable.StepCompleted, "k2"),
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run, key, step string
		seq            int64
	}{
		{"r", "k1", "b", 4}, {"r", "k2", "d", 6}, {"r", "k3", "", 0}, {"other", "k1", "", 0},
	} {
		got, err := s.LedgerFindCompleted(ctx, c.run, c.key)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.step == "" && got != nil:
			t.Errorf("find(%s, %s) = %+v; want nil", c.run, c.key, got)
		case c.step != "" && (got == nil || got.StepID != c.step || got.Seq != c.seq):
			t.Errorf("find(%s, %s) = %+v; want step %s seq %d", c.run, c.key, got, c.step, c.seq)
		}
	}
	if n, err := s.LedgerDelete(ctx, "r"); err != nil || n != 6 {
		t.Fatalf("LedgerDelete = %d, %v", n, err)
	}
	if got, _ := s.LedgerFindCompleted(ctx, "r", "k1"); got != nil {
		t.Fatalf("found a deleted record: %+v", got)
	}
}

func TestRunClaim(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "db"))
	claim := func(owner string, now time.Duration) error {
		return s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: owner, TTL: 10 * time.Second, Now: t0.Add(now)})
	}
	steps := []struct {
		owner    string
		now      time.Duration
		conflict bool
	}{
		{"a", 0, false},
		{"b", 5 * time.Second, true},
		{"a", 8 * time.Second, false},                      // renew: expires at 18 s
		{"b", 17*time.Second + 999*time.Millisecond, true}, // still live
		{"b", 18 * time.Second, false},                     // expired at 18 s exactly
		{"a", 19 * time.Second, true},
	}
	for i, st := range steps {
		err := claim(st.owner, st.now)
		if got := errors.Is(err, store.ErrConflict); got != st.conflict || (err != nil && !got) {
			t.Fatalf("step %d: claim by %s at %v: %v; want conflict %v", i, st.owner, st.now, err, st.conflict)
		}
	}
	if err := s.RunRelease(ctx, "r", "a"); err != nil { // not the holder: no-op
		t.Fatal(err)
	}
	if err := claim("a", 20*time.Second); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim after a foreign release: %v; want ErrConflict", err)
	}
	if err := s.RunRelease(ctx, "r", "b"); err != nil {
		t.Fatal(err)
	}
	if err := claim("a", 20*time.Second); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
}

// TestConcurrentCommits_TwoStores races writers through two Store
// instances on one file (two writer connections, as two processes would
// have): each round exactly one commit wins.
func TestConcurrentCommits_TwoStores(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db")
	stores := []*sqlite.Store{openShared(t, path), openShared(t, path)}
	if err := stores[0].RunCommit(ctx, &store.CommitParams{Run: testRun("r"), Create: true}); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 6, 10
	for round := range rounds {
		read, err := stores[round%2].RunGet(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			r := read.Clone()
			r.CurrentNode = fmt.Sprintf("r%d-w%d", round, w)
			rec := &durable.StepRecord{RunID: "r", StepID: r.CurrentNode, Status: durable.StepCompleted}
			wg.Go(func() {
				errs[w] = stores[w%2].RunCommit(ctx, &store.CommitParams{Run: r, Records: []*durable.StepRecord{rec}})
			})
		}
		wg.Wait()
		wins := 0
		for w, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d writer %d: %v", round, w, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d winners", round, wins)
		}
	}
	recs, err := stores[1].LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(recs) != rounds {
		t.Fatalf("ledger: %d records, %v; want %d", len(recs), err, rounds)
	}
	for i, rec := range recs {
		if rec.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, rec.Seq)
		}
	}
	if got, _ := stores[0].RunGet(ctx, "r"); got.Version != rounds+1 {
		t.Fatalf("version %d; want %d", got.Version, rounds+1)
	}
}
