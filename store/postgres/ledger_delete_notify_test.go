package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestFollowerInAnotherProcessSeesARegrownLedger: a gateway process
// follows a run's ledger through observe.Follow while a runner on another
// machine deletes that ledger and grows a new one (LedgerDelete: "a later
// append starts again at seq 1"; the hashchain decorator allows for this
// between runners). A follower in the runner's own process gets
// Event.Deleted and reads from the start; the one in the gateway process
// got no sign of the delete (LedgerDelete sent no notification), the
// append that followed only woke it, and reading after its cursor (2) it
// found nothing, so the new ledger's records up to its old cursor were
// never streamed.
func TestFollowerInAnotherProcessSeesARegrownLedger(t *testing.T) {
	testURL(t)
	t.Parallel()
	rs := openRunners(t, 2)
	runner, gateway := rs[0], rs[1]
	obs := observe.Wrap(gateway)
	sub := obs.Subscribe("regrown", 16)
	defer sub.Cancel()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	followed := startFollow(t, ctx, obs)
	defer func() { stop(); <-followed }()

	f := &ledgerFollower{t: t, obs: obs, runID: "regrown"}
	r := testRun("regrown")
	if err := runner.RunCommit(ctx, &store.CommitParams{Run: r, Create: true,
		Records: []*durable.StepRecord{testRecord("regrown", "old-1"), testRecord("regrown", "old-2")}}); err != nil {
		t.Fatal(err)
	}
	f.read(next(t, sub))
	if f.cursor != 2 {
		t.Fatalf("follower cursor %d after the first append, want 2 (seen %v)", f.cursor, f.seen)
	}
	if _, err := runner.LedgerDelete(ctx, "regrown"); err != nil {
		t.Fatal(err)
	}
	if err := runner.LedgerAppend(ctx, "regrown", []*durable.StepRecord{testRecord("regrown", "new-1")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for !slices.Contains(f.seen, "new-1") {
		select {
		case ev := <-sub.C:
			f.read(ev)
		case <-deadline:
			t.Fatalf("the follower in the other process never saw record new-1 of the regrown ledger "+
				"(seen %v, cursor %d): the delete was not reported across processes", f.seen, f.cursor)
		}
	}
}

// TestListenLedgerReportsDeletes: ListenLedger reports another store's
// delete of a ledger with records as deleted, and not its own store's
// (as for appends, followers in its process hear of those from
// store/observe); the delete of an empty
// ledger is not reported (store/observe announces a delete only when it
// deleted something), and the delete of a run whose id is too long for a
// payload is reported as a delete with an empty run id: every follower
// reads from seq 1 (records read twice), where a plain wake would have it
// read a ledger deleted and grown again from its middle.
func TestListenLedgerReportsDeletes(t *testing.T) {
	url := testURL(t)
	t.Parallel()
	schema := freshSchemaName(t)
	open := func() *postgres.Store {
		s, err := postgres.New(t.Context(), postgres.Config{URL: url, Schema: schema, Logger: testLogger(t),
			MaxConns: 2, NotifyAppends: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	listener, writer := open(), open()
	type change struct {
		runID   string
		deleted bool
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	ready, changes, listened := make(chan struct{}), make(chan change, 16), make(chan error, 1)
	go func() {
		listened <- listener.ListenLedger(ctx, func() { close(ready) }, func(runID string, deleted bool) {
			changes <- change{runID, deleted}
		})
	}()
	<-ready
	appendTo := func(runID string) {
		if err := writer.LedgerAppend(ctx, runID, []*durable.StepRecord{testRecord(runID, "n")}); err != nil {
			t.Fatal(err)
		}
	}
	deleteOf := func(runID string) {
		if _, err := writer.LedgerDelete(ctx, runID); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("r", 8000)
	appendTo("r")
	deleteOf("r")
	deleteOf("r") // empty now
	deleteOf("never-appended")
	appendTo(long)
	deleteOf(long)
	// The listener's own append and delete are not reported.
	if err := listener.LedgerAppend(ctx, "own", []*durable.StepRecord{testRecord("own", "n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := listener.LedgerDelete(ctx, "own"); err != nil {
		t.Fatal(err)
	}
	appendTo("last")
	// Notifications arrive in commit order.
	for _, want := range []change{{"r", false}, {"r", true}, {"", false}, {"", true}, {"last", false}} {
		select {
		case got := <-changes:
			if got != want {
				t.Fatalf("reported %+v, want %+v", got, want)
			}
		case err := <-listened:
			t.Fatalf("ListenLedger ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("no report within 10 s, want %+v", want)
		}
	}
}

// TestLedgerDeleteNotificationWakesOlderListeners: a delete's NOTIFY
// payload splits, as a listener that predates delete notifications splits
// it, into the schema, an origin, and the run id, so such a listener (of
// a gateway not yet upgraded) wakes the run's followers as for an append.
func TestLedgerDeleteNotificationWakesOlderListeners(t *testing.T) {
	url := testURL(t)
	t.Parallel()
	schema := freshSchemaName(t)
	writer, err := postgres.New(t.Context(), postgres.Config{URL: url, Schema: schema, Logger: testLogger(t),
		MaxConns: 2, NotifyAppends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN abstractgateway_ledger"); err != nil {
		t.Fatal(err)
	}
	if err := writer.LedgerAppend(ctx, "r", []*durable.StepRecord{testRecord("r", "n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.LedgerDelete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	var payloads []string
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(payloads) < 2 {
		n, err := conn.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("waiting for the append's and the delete's notifications (got %q): %v", payloads, err)
		}
		if strings.HasPrefix(n.Payload, schema+"\x1f") { // other tests' schemas share the channel
			payloads = append(payloads, n.Payload)
		}
	}
	appendOrigin := strings.Split(payloads[0], "\x1f")[1]
	fields := strings.SplitN(payloads[1], "\x1f", 3)
	if len(fields) != 3 || fields[0] != schema || fields[1] == appendOrigin || fields[2] != "r" {
		t.Errorf("delete payload %q; want the schema, an origin that is not the writer's own, and the run id",
			payloads[1])
	}
}

// ledgerFollower reads a run's ledger as store/observe describes a
// follower (a gateway streaming it): after its cursor on a wake-up, from
// seq 1 after a Deleted event. seen holds the node ids read, in order.
type ledgerFollower struct {
	t      *testing.T
	obs    *observe.Store
	runID  string
	cursor int64
	seen   []string
}

func (f *ledgerFollower) read(ev observe.Event) {
	f.t.Helper()
	if ev.Deleted {
		f.cursor = 0
	}
	recs, err := f.obs.LedgerList(f.t.Context(), &store.LedgerListParams{RunID: f.runID, After: f.cursor})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, r := range recs {
		f.seen = append(f.seen, r.NodeID)
		f.cursor = r.Seq
	}
}
