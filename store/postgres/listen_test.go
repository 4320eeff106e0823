package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// startFollow runs obs.Follow on ctx in the background and returns, once
// it listens, the channel its result comes on when ctx ends.
func startFollow(t *testing.T, ctx context.Context, obs *observe.Store) <-chan error {
	t.Helper()
	ready := make(chan struct{})
	followed := make(chan error, 1)
	go func() {
		followed <- obs.Follow(ctx, observe.FollowConfig{Logger: testLogger(t), Ready: func() { close(ready) }})
	}()
	<-ready
	return followed
}

// TestFollowOtherRunnersAppends: a follower of a run's ledger through
// one store (one gateway process) is woken by the appends another store
// on the database makes (a runner on another machine), once committed,
// and not twice for its own: those come with their records, from the
// in-process decorator.
func TestFollowOtherRunnersAppends(t *testing.T) {
	testURL(t)
	t.Parallel()
	rs := openRunners(t, 2)
	runner, gateway := rs[0], rs[1]
	obs := observe.Wrap(gateway)
	sub := obs.Subscribe("followed", 16)
	defer sub.Cancel()
	other := obs.Subscribe("elsewhere", 16)
	defer other.Cancel()

	ctx, stop := context.WithCancel(t.Context())
	followed := startFollow(t, ctx, obs)

	create := func(s store.Store, id string) *durable.RunState {
		r := testRun(id)
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: []*durable.StepRecord{testRecord(id, "start")}}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	create(runner, "followed")
	ev := next(t, sub)
	if ev.RunID != "followed" || ev.Records != nil {
		t.Fatalf("event for the other store's append: %+v; want a wake-up for run followed", ev)
	}
	recs, err := gateway.LedgerList(ctx, &store.LedgerListParams{RunID: "followed"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("the woken follower reads %d records (%v); want the appended one", len(recs), err)
	}

	// The gateway's own append arrives once, with its records; the next
	// event is the other store's later append, with no wake-up between.
	if err := obs.LedgerAppend(ctx, "followed", []*durable.StepRecord{testRecord("followed", "own")}); err != nil {
		t.Fatal(err)
	}
	if err := runner.LedgerAppend(ctx, "followed", []*durable.StepRecord{testRecord("followed", "theirs")}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); len(ev.Records) != 1 || ev.Records[0].NodeID != "own" {
		t.Fatalf("event for the follower's own append: %+v; want its record", ev)
	}
	if ev := next(t, sub); ev.Records != nil || ev.RunID != "followed" {
		t.Fatalf("event after the own append: %+v; want the other store's wake-up only", ev)
	}
	select {
	case ev := <-other.C:
		t.Fatalf("a subscription to another run got %+v", ev)
	default:
	}

	stop()
	if err := <-followed; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
}

func next(t *testing.T, sub *observe.Subscription) observe.Event {
	t.Helper()
	select {
	case ev := <-sub.C:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return observe.Event{}
	}
}

// TestListenerNoticesSilentConnectionLoss: when the listening connection's
// network path starts dropping everything without a word (no reset, no
// close), ListenLedger returns an error within about two heartbeats, so
// that Follow connects again, instead of waiting for TCP to give up.
func TestListenerNoticesSilentConnectionLoss(t *testing.T) {
	testURL(t)
	t.Parallel()
	const heartbeat = 200 * time.Millisecond
	s, proxy := proxiedStore(t, freshSchemaName(t), postgres.Config{MaxConns: 2, ListenHeartbeat: heartbeat})
	ready := make(chan struct{})
	listened := make(chan error, 1)
	go func() {
		listened <- s.ListenLedger(t.Context(), func() { close(ready) }, func(string, bool) {})
	}()
	<-ready
	proxy.silence()
	select {
	case err := <-listened:
		if err == nil || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "ping") {
			t.Fatalf("ListenLedger over a silent connection = %v; want the unanswered ping's error", err)
		}
	case <-time.After(20 * heartbeat):
		t.Fatalf("ListenLedger still listening %s after its connection went silent", 20*heartbeat)
	}
}

// TestListenerHeartbeatKeepsDelivering: a listener that pings an idle
// connection several times still delivers the next append.
func TestListenerHeartbeatKeepsDelivering(t *testing.T) {
	url := testURL(t)
	t.Parallel()
	schema := freshSchemaName(t)
	open := func() *postgres.Store {
		s, err := postgres.New(t.Context(), postgres.Config{URL: url, Schema: schema, Logger: testLogger(t),
			MaxConns: 2, NotifyAppends: true, ListenHeartbeat: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	listener, writer := open(), open()
	ctx, stop := context.WithCancel(t.Context())
	ready := make(chan struct{})
	woken := make(chan string, 4)
	listened := make(chan error, 1)
	go func() {
		listened <- listener.ListenLedger(ctx, func() { close(ready) }, func(id string, _ bool) { woken <- id })
	}()
	<-ready
	// Three heartbeats of silence; a heartbeat long enough that a ping on
	// a loaded machine (the whole suite under -race) is answered within it.
	time.Sleep(3500 * time.Millisecond)
	if err := writer.RunCommit(ctx, &store.CommitParams{Run: testRun("after-pings"), Create: true,
		Records: []*durable.StepRecord{testRecord("after-pings", "start")}}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-woken:
		if id != "after-pings" {
			t.Fatalf("woken for %q; want after-pings", id)
		}
	case err := <-listened:
		t.Fatalf("ListenLedger ended on a healthy connection: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up within 10 s of an append after heartbeats")
	}
	stop()
	if err := <-listened; !errors.Is(err, context.Canceled) {
		t.Fatalf("ListenLedger after its context ended = %v", err)
	}
}

// TestFollowNonUTF8RunID: a notification's payload is text, so a run id
// holding bytes that are not UTF-8 travels with U+FFFD for them (keyText),
// which is not the id a follower of the run subscribed with: the wake-up
// went to nobody, and the follower saw the other runner's appends only at
// its next own read. A run id with U+FFFD may stand for such bytes (the
// run's ledger is the same for both spellings), so every follower wakes.
// No run can be created under such an id (store.ErrInvalidID), but a
// ledger can be appended to under one, as here.
func TestFollowNonUTF8RunID(t *testing.T) {
	testURL(t)
	t.Parallel()
	rs := openRunners(t, 2)
	runner, gateway := rs[0], rs[1]
	obs := observe.Wrap(gateway)
	const runID = "run-\xff"
	sub := obs.Subscribe(runID, 16)
	defer sub.Cancel()

	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	startFollow(t, ctx, obs)
	if err := runner.LedgerAppend(ctx, runID, []*durable.StepRecord{testRecord(runID, "start")}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Records != nil || (ev.RunID != "" && ev.RunID != runID) {
		t.Fatalf("event for the other store's append to %q: %+v; want a wake-up", runID, ev)
	}
	recs, err := gateway.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	if err != nil || len(recs) != 1 {
		t.Fatalf("the woken follower reads %d records (%v); want the appended one", len(recs), err)
	}
}

// TestListenLedgerIgnoresOtherSchemas: the notification channel is shared
// by every schema on the database; ListenLedger wakes only for appends
// "another Store value made to this schema". An append to another
// schema's ledger (another deployment on the same server) must not wake
// this schema's followers.
func TestListenLedgerIgnoresOtherSchemas(t *testing.T) {
	testURL(t)
	t.Parallel()
	open := func(schema string) *postgres.Store {
		s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
			Logger: testLogger(t), MaxConns: 2, NotifyAppends: true})
		if err != nil {
			t.Fatalf("New(schema %s): %v", schema, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	schemaA, schemaB := freshSchemaName(t), freshSchemaName(t)
	listener, writerA, writerB := open(schemaA), open(schemaA), open(schemaB)

	ctx, stop := context.WithCancel(t.Context())
	ready := make(chan struct{})
	woken := make(chan string, 16)
	listened := make(chan error, 1)
	go func() {
		listened <- listener.ListenLedger(ctx, func() { close(ready) }, func(runID string, _ bool) { woken <- runID })
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		stop()
		t.Fatal("not listening within 10 s")
	}
	append1 := func(s *postgres.Store, runID string) {
		if err := s.LedgerAppend(ctx, runID, []*durable.StepRecord{testRecord(runID, "n")}); err != nil {
			t.Error(err)
		}
	}
	// Committed in this order, so notified in this order.
	append1(writerB, "in-other-schema")
	append1(writerA, "in-this-schema")
	select {
	case id := <-woken:
		if id != "in-this-schema" {
			t.Errorf("first wake-up for run %q; want %q (the other schema's append must not wake)", id, "in-this-schema")
		}
	case <-time.After(10 * time.Second):
		t.Error("no wake-up within 10 s for this schema's append")
	}
	stop()
	if err := <-listened; !errors.Is(err, context.Canceled) {
		t.Errorf("ListenLedger after its context ended = %v", err)
	}
}

// TestListenLedgerReturnsWhenCtxEnds: ListenLedger listens "until
// ctx ends (it returns ctx's error)". Its connection is built from the
// pool's config, whose context watcher answered a cancelled context with
// a cancel request and then waited up to cancelAnswerWait (10 s) for the
// server: an idle LISTEN connection has no statement to cancel, so the
// server never answered and every stop of a follower (observe.Follow, a
// gateway shutting down) took 10 s.
func TestListenLedgerReturnsWhenCtxEnds(t *testing.T) {
	testURL(t)
	t.Parallel()
	s := openSchema(t, testSchema(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- s.ListenLedger(ctx, func() { close(ready) }, func(string, bool) {}) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("ListenLedger: %v", err)
	}
	start := time.Now()
	cancel()
	err := <-done
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("ListenLedger returned %v %v after its context ended; want it at once", err, took.Round(time.Millisecond))
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ListenLedger = %v; want context.Canceled", err)
	}
}
