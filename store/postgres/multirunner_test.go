package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

var update = flag.Bool("update", false, "rewrite schema.sql from the embedded migrations")

var t0 = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)

func testRun(id string) *durable.RunState {
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
		Vars: map[string]any{}, CreatedAt: durable.NewTime(t0), UpdatedAt: durable.NewTime(t0)}
}

func testRecord(runID, node string) *durable.StepRecord {
	return &durable.StepRecord{RunID: runID, StepID: "s-" + node, NodeID: node, Status: durable.StepCompleted,
		StartedAt: durable.NewTime(t0), EndedAt: durable.NewTime(t0)}
}

func TestNew_Config(t *testing.T) {
	t.Parallel()
	for _, cfg := range []postgres.Config{
		{},
		{URL: "postgres://x@127.0.0.1:1/db", MaxConns: -1},
		{URL: "::not a url::"},
	} {
		if s, err := postgres.New(t.Context(), cfg); err == nil {
			_ = s.Close()
			t.Errorf("New(%+v) succeeded; want an error", cfg)
		}
	}
}

func TestSkipMessage(t *testing.T) {
	t.Parallel()
	if !strings.Contains(skipMessage, "TEST_POSTGRES_URL") || !strings.Contains(skipMessage, ".ci/postgres.sh") {
		t.Errorf("skip message %q does not say how to enable the tests", skipMessage)
	}
}

// TestSchemaFile checks schema.sql is the schema the migrations build.
func TestSchemaFile(t *testing.T) {
	t.Parallel()
	want, err := postgres.SchemaSQL()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.sql", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("schema.sql is stale; run go test ./store/postgres -run TestSchemaFile -update")
	}
}

func TestStore_Close(t *testing.T) {
	t.Parallel()
	s := openSchema(t, testSchema(t))
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

// freshSchemaName returns a schema name that does not exist yet (New
// creates it) and drops it when the test ends.
func freshSchemaName(t *testing.T) string {
	t.Helper()
	url := testURL(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Error(err)
		}
	})
	return schema
}

// openRunners opens n Stores (n pools, as n runner processes would) on
// one schema that none has created yet, all at once.
func openRunners(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	schema := freshSchemaName(t)
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			stores[i], errs[i] = postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
				Logger: testLogger(t), MaxConns: 4, NotifyAppends: true})
		})
	}
	wg.Wait()
	for i, s := range stores {
		if s != nil {
			t.Cleanup(func() { _ = s.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("runner %d: New: %v", i, errs[i])
		}
	}
	return stores
}

// TestMigrations opens a fresh schema from four processes at once (each
// migration must be applied once) and reopens it (nothing to apply).
func TestMigrations(t *testing.T) {
	testURL(t)
	t.Parallel()
	stores := openRunners(t, 4)
	reopened := openSchema(t, stores[0].Schema())
	if err := reopened.RunCommit(t.Context(), &store.CommitParams{Run: testRun("r1"), Create: true}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM "+stores[0].Schema()+".schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(files) {
		t.Errorf("schema_migrations has %d rows, want %d (one per migration)", n, len(files))
	}
}

// TestMultiRunner runs two Stores (two pools, as two runner processes on
// two machines would) on one schema.
func TestMultiRunner(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	rs := openRunners(t, 2)
	a, b := rs[0], rs[1]

	t.Run("SeeEachOther", func(t *testing.T) {
		r := testRun("seen")
		if err := a.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{testRecord("seen", "n1")}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.RunGet(ctx, "seen")
		if err != nil || got.Version != 1 {
			t.Fatalf("b.RunGet = %+v, %v; want version 1", got, err)
		}
		got.Status = durable.RunCompleted
		if err := b.RunCommit(ctx, &store.CommitParams{Run: got, Records: []*durable.StepRecord{testRecord("seen", "n2")}}); err != nil {
			t.Fatal(err)
		}
		back, err := a.RunGet(ctx, "seen")
		if err != nil || back.Version != 2 || back.Status != durable.RunCompleted {
			t.Fatalf("a.RunGet = %+v, %v; want version 2, completed", back, err)
		}
		recs, err := a.LedgerList(ctx, &store.LedgerListParams{RunID: "seen"})
		if err != nil || len(recs) != 2 || recs[1].Seq != 2 || recs[1].NodeID != "n2" {
			t.Fatalf("a.LedgerList = %v, %v; want n1, n2", recs, err)
		}
		if _, err := b.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "seen", Type: "pause"}); err != nil {
			t.Fatal(err)
		}
		if res, err := a.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "seen", Type: "pause"}); err != nil || !res.Duplicate || res.Seq != 1 {
			t.Fatalf("duplicate from the other runner = %+v, %v", res, err)
		}
	})

	t.Run("OneWinnerPerVersion", func(t *testing.T) {
		if err := a.RunCommit(ctx, &store.CommitParams{Run: testRun("race"), Create: true}); err != nil {
			t.Fatal(err)
		}
		const rounds = 25
		for round := range rounds {
			var wins, conflicts atomic.Int32
			var wg sync.WaitGroup
			for i, s := range []*postgres.Store{a, b, a, b} {
				wg.Go(func() {
					r, err := s.RunGet(ctx, "race")
					if err != nil {
						t.Error(err)
						return
					}
					// Every contender commits the version read before any wins.
					r.Version = int64(round + 1)
					r.CurrentNode = fmt.Sprintf("round-%d-%d", round, i)
					err = s.RunCommit(ctx, &store.CommitParams{Run: r,
						Records: []*durable.StepRecord{testRecord("race", r.CurrentNode)}})
					switch {
					case err == nil:
						wins.Add(1)
					case errors.Is(err, store.ErrConflict):
						conflicts.Add(1)
					default:
						t.Errorf("commit: %v", err)
					}
				})
			}
			wg.Wait()
			if wins.Load() != 1 || conflicts.Load() != 3 {
				t.Fatalf("round %d: %d wins, %d conflicts; want 1 and 3", round, wins.Load(), conflicts.Load())
			}
		}
		r, err := b.RunGet(ctx, "race")
		if err != nil || r.Version != rounds+1 {
			t.Fatalf("final version = %v, %v; want %d", r, err, rounds+1)
		}
		recs, err := a.LedgerList(ctx, &store.LedgerListParams{RunID: "race"})
		if err != nil || len(recs) != rounds {
			t.Fatalf("ledger = %d records, %v; want %d (one per winning commit)", len(recs), err, rounds)
		}
		for i, rec := range recs {
			if rec.Seq != int64(i+1) {
				t.Fatalf("record %d has seq %d", i, rec.Seq)
			}
		}
	})

	t.Run("ClaimsExclude", func(t *testing.T) {
		now := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			s := []*postgres.Store{a, b}[i%2]
			wg.Go(func() {
				errs[i] = s.RunClaim(ctx, &store.RunClaimParams{RunID: "claimed", Owner: fmt.Sprintf("runner-%d", i),
					TTL: time.Minute, Now: now})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("runners %d and %d both hold the claim", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("claim %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no runner got the claim")
		}
		loser := (winner + 1) % len(errs)
		other := []*postgres.Store{a, b}[loser%2]
		claim := func(owner int, at time.Time) error {
			return other.RunClaim(ctx, &store.RunClaimParams{RunID: "claimed", Owner: fmt.Sprintf("runner-%d", owner), TTL: time.Minute, Now: at})
		}
		if err := claim(loser, now.Add(30*time.Second)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a live claim from the other store: %v", err)
		}
		if err := claim(loser, now.Add(time.Minute)); err != nil {
			t.Fatalf("claim of an expired claim from the other store: %v", err)
		}
		owner := []*postgres.Store{a, b}[winner%2]
		if err := owner.RunClaim(ctx, &store.RunClaimParams{RunID: "claimed", Owner: fmt.Sprintf("runner-%d", winner),
			TTL: time.Minute, Now: now.Add(61 * time.Second)}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("old owner reclaiming: %v", err)
		}
	})

	t.Run("ClaimsOnTheServerClock", func(t *testing.T) {
		// A zero Now is the database's clock: a claim that expired by it
		// is taken, a live one is refused, and the expiry stored is the
		// server's time plus the TTL.
		past := time.Now().Add(-2 * time.Hour)
		if err := a.RunClaim(ctx, &store.RunClaimParams{RunID: "server-clock", Owner: "a", TTL: time.Minute, Now: past}); err != nil {
			t.Fatal(err)
		}
		if err := b.RunClaim(ctx, &store.RunClaimParams{RunID: "server-clock", Owner: "b", TTL: time.Minute}); err != nil {
			t.Fatalf("claim of a claim expired by the server's clock: %v", err)
		}
		if err := a.RunClaim(ctx, &store.RunClaimParams{RunID: "server-clock", Owner: "a", TTL: time.Minute}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a claim live by the server's clock: %v", err)
		}
		expires, serverNow, err := b.ClaimExpiry(ctx, "server-clock")
		if err != nil {
			t.Fatal(err)
		}
		if left := expires.Sub(serverNow); left <= 50*time.Second || left > time.Minute {
			t.Fatalf("claim expires %v after the server's now; want just under the 1m TTL", left)
		}
	})

	t.Run("LedgerAppendGapless", func(t *testing.T) {
		const workers, appends = 8, 10
		var wg sync.WaitGroup
		for w := range workers {
			s := []*postgres.Store{a, b}[w%2]
			wg.Go(func() {
				for i := range appends {
					recs := []*durable.StepRecord{testRecord("shared", fmt.Sprintf("w%d-%d-a", w, i)),
						testRecord("shared", fmt.Sprintf("w%d-%d-b", w, i))}
					if err := s.LedgerAppend(ctx, "shared", recs); err != nil {
						t.Error(err)
						return
					}
					if recs[1].Seq != recs[0].Seq+1 {
						t.Errorf("one append got seqs %d and %d", recs[0].Seq, recs[1].Seq)
					}
				}
			})
		}
		wg.Wait()
		recs, err := b.LedgerList(ctx, &store.LedgerListParams{RunID: "shared"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2*workers*appends {
			t.Fatalf("%d records, want %d", len(recs), 2*workers*appends)
		}
		for i, rec := range recs {
			if rec.Seq != int64(i+1) {
				t.Fatalf("record %d has seq %d: not gapless", i, rec.Seq)
			}
			if i%2 == 1 && !strings.HasSuffix(rec.NodeID, "-b") || i%2 == 0 && !strings.HasSuffix(rec.NodeID, "-a") {
				t.Fatalf("record %d (%s): an append's records are not contiguous", i, rec.NodeID)
			}
		}
		if n, err := a.LedgerCount(ctx, "shared"); err != nil || n != 2*workers*appends {
			t.Fatalf("LedgerCount = %d, %v", n, err)
		}
	})

	t.Run("CommandsGapless", func(t *testing.T) {
		base, err := a.CommandLastSeq(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const n = 40
		var wg sync.WaitGroup
		for i := range n {
			s := []*postgres.Store{a, b}[i%2]
			wg.Go(func() {
				// Pairs race on one command id, from different stores.
				c := &durable.CommandRecord{CommandID: fmt.Sprintf("mr-%d", i/2), RunID: "seen", Type: "resume"}
				if _, err := s.CommandAppend(ctx, c); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		cmds, next, err := b.CommandListAfter(ctx, base, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(cmds) != n/2 || next != base+n/2 {
			t.Fatalf("%d commands up to %d, want %d up to %d", len(cmds), next, n/2, base+n/2)
		}
		for i, c := range cmds {
			if c.Seq != base+int64(i)+1 {
				t.Fatalf("command %d has seq %d: not gapless", i, c.Seq)
			}
		}
	})
}

// TestMigration002_PausedRunLeavesTheDueIndex: a paused run that still
// has a due_at (written before migration 002) loses it when the
// migration runs; a run that is not paused keeps its own, and a paused
// run whose JSON PostgreSQL cannot parse (a \u0000) keeps its own without
// failing the migration.
func TestMigration002_PausedRunLeavesTheDueIndex(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	st := openSchema(t, schema)
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, id := range []string{"paused", "paused-nul", "waiting"} {
		r := testRun(id)
		r.Status = durable.RunWaiting
		r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "next"}
		if id != "waiting" {
			r.Vars["_runtime"] = map[string]any{"control": map[string]any{"paused": true}}
		}
		if id == "paused-nul" {
			r.Vars["note"] = "a\u0000b"
		}
		if err := st.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		"UPDATE " + schema + ".runs SET due_at = '2026-01-01T00:00:00Z' WHERE run_id LIKE 'paused%'",
		"DELETE FROM " + schema + ".schema_migrations WHERE version >= 2", // 002 runs again (and those after it)
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	reopened := openSchema(t, schema)
	due, err := reopened.RunListDue(t.Context(), &store.RunListDueParams{Now: until.Add(time.Hour)})
	if err != nil || len(due) != 2 || due[0].RunID != "paused-nul" || due[1].RunID != "waiting" {
		t.Fatalf("due after migration 002: %v, %v; want paused-nul (unreadable) and waiting", due, err)
	}
}
