package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestFollowerReadsFromStartAfterDeleteWhileListenerReconnects: a process
// follows a run through observe.Follow and loses its LISTEN connection
// (a server restart, a failover). While Follow waits to listen again,
// another runner deletes the run's ledger and appends a new one longer
// than the follower's cursor. No notification of either arrives, and a
// read from the cursor would skip the new ledger's first records: once
// listening again, Follow must tell the follower that any ledger may
// have been deleted, so it reads from seq 1.
func TestFollowerReadsFromStartAfterDeleteWhileListenerReconnects(t *testing.T) {
	url := testURL(t)
	schema := freshSchemaName(t)
	app := "reconnect_" + schema
	open := func(appName string) *postgres.Store {
		s, err := postgres.New(t.Context(), postgres.Config{URL: url + "&application_name=" + appName,
			Schema: schema, Logger: testLogger(t), MaxConns: 2, NotifyAppends: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	follower, runner := open(app), open(app+"_runner")
	obs := observe.Wrap(follower)
	sub := obs.Subscribe("r", 64)
	defer sub.Cancel()

	ctx, stop := context.WithCancel(t.Context())
	readies := make(chan struct{}, 8)
	followed := make(chan error, 1)
	go func() {
		followed <- obs.Follow(ctx, observe.FollowConfig{Logger: testLogger(t), Ready: func() { readies <- struct{}{} }})
	}()
	defer func() { stop(); <-followed }()
	<-readies

	f := &ledgerFollower{t: t, obs: obs, runID: "r"}
	if err := runner.RunCommit(ctx, &store.CommitParams{Run: testRun("r"), Create: true, Records: []*durable.StepRecord{
		testRecord("r", "old-1"), testRecord("r", "old-2"), testRecord("r", "old-3")}}); err != nil {
		t.Fatal(err)
	}
	f.read(next(t, sub))
	if f.cursor != 3 {
		t.Fatalf("premise: cursor %d after the first records, want 3", f.cursor)
	}

	// Cut the follower's LISTEN connection and wait for its backend to go.
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	const listeners = `FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`
	var cut int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) `+listeners+`) k`, app).Scan(&cut); err != nil || cut != 1 {
		t.Fatalf("premise: terminated %d listening backends (%v), want 1", cut, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_clear_snapshot(), (SELECT 1 `+listeners+`) l`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("premise: the listening backend is still there 10 s after its termination")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// In the gap (Follow pauses 1 s before listening again): the ledger is
	// deleted and grows again past the follower's cursor.
	if _, err := runner.LedgerDelete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if err := runner.LedgerAppend(ctx, "r", []*durable.StepRecord{testRecord("r", "new-1"),
		testRecord("r", "new-2"), testRecord("r", "new-3"), testRecord("r", "new-4")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-readies:
	case <-time.After(15 * time.Second):
		t.Fatal("Follow did not listen again within 15 s")
	}
	want := []string{"old-1", "old-2", "old-3", "new-1", "new-2", "new-3", "new-4"}
	for deadline := time.After(5 * time.Second); !slices.Equal(f.seen, want); {
		select {
		case ev := <-sub.C:
			f.read(ev)
		case <-deadline:
			t.Fatalf("streamed %q, want %q: the delete made while Follow listened again went unreported", f.seen, want)
		}
	}
}
