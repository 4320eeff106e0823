package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestFailingOperationsLeaveNoConnectionOrTx: many failing
// operations (stale commits, duplicate creates, refused claims, cancelled
// contexts, ids too long, unknown runs) must return every pool
// connection, and leave no transaction open on the server.
func TestFailingOperationsLeaveNoConnectionOrTx(t *testing.T) {
	url := os.Getenv("TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("set TEST_POSTGRES_URL=postgres://… to run the PostgreSQL store tests")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	defer func() { _ = DropSchema(context.Background(), url, schema) }()
	ctx := t.Context()
	s, err := New(ctx, Config{URL: url + "&application_name=" + schema, Schema: schema, MaxConns: 3, NotifyAppends: true,
		WriteTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n", Vars: map[string]any{}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 9000)
	rec := func() []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted}}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	short, cancelShort := context.WithTimeout(ctx, time.Microsecond)
	defer cancelShort()
	time.Sleep(time.Millisecond)
	for i := range 40 {
		stale := *run
		stale.Version = 0
		_ = s.RunCommit(ctx, &store.CommitParams{Run: &stale, Records: rec()})               // stale
		_ = s.RunCommit(ctx, &store.CommitParams{Run: &stale, Create: true, Records: rec()}) // exists
		gone := *run
		gone.RunID = "missing"
		_ = s.RunCommit(ctx, &store.CommitParams{Run: &gone, Records: rec()}) // not found
		lr := *run
		lr.RunID, lr.Version = long, 0
		_ = s.RunCommit(ctx, &store.CommitParams{Run: &lr, Create: true, Records: rec()}) // key too long / payload
		_ = s.LedgerAppend(ctx, long, rec())                                              // too long
		_ = s.RunCommit(cancelled, &store.CommitParams{Run: run, Records: rec()})
		_ = s.LedgerAppend(short, "r", rec())
		_, _ = s.RunGet(cancelled, "r")
		_, _ = s.LedgerList(short, &store.LedgerListParams{RunID: "r"})
		_, _ = s.RunList(cancelled, &store.RunListParams{})
		_, _ = s.RunListDue(short, &store.RunListDueParams{Now: time.Now()})
		_ = s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "a", TTL: time.Minute})
		_ = s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "b", TTL: time.Minute})              // held
		_ = s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "c", TTL: time.Minute, Renew: true}) // not held
		_ = s.RunClaim(short, &store.RunClaimParams{RunID: "r", Owner: "a", TTL: time.Minute, Renew: true})
		_, _ = s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "dup", RunID: "r", Type: "pause"})
		_, _ = s.CommandAppend(ctx, &durable.CommandRecord{CommandID: long, RunID: "r", Type: "pause"})
		_, _ = s.CommandAppend(cancelled, &durable.CommandRecord{RunID: "r", Type: "pause"})
		_, _ = s.CommandAppend(ctx, &durable.CommandRecord{RunID: "", Type: "pause"})
		_, _, _ = s.CommandListAfter(short, 0, 10)
		_ = s.CursorSave(cancelled, "c", 3)
		_, _ = s.LedgerDelete(short, "r")
		_, _ = s.RunDelete(cancelled, "r")
		_, _ = s.LedgerFindCompleted(short, "r", "k")
		if i%10 == 0 {
			if st := s.pool.Stat(); st.AcquiredConns() != 0 {
				t.Fatalf("after round %d: %d connections still acquired", i, st.AcquiredConns())
			}
		}
	}
	st := s.pool.Stat()
	if st.AcquiredConns() != 0 {
		t.Errorf("%d pool connections still acquired after the failing operations", st.AcquiredConns())
	}
	t.Logf("pool: total %d idle %d destroyed-lifetime %d", st.TotalConns(), st.IdleConns(), st.CanceledAcquireCount())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var open int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1
		AND state LIKE 'idle in transaction%'`, schema).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Errorf("%d of the store's connections are idle in a transaction", open)
	}
	// Still usable.
	if _, err := s.RunGet(ctx, "r"); err != nil {
		t.Errorf("RunGet after the failures: %v", err)
	}
}
