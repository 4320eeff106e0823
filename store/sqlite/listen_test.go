package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// heard collects a ListenLedger's wake-ups.
type heard struct {
	mu     sync.Mutex
	events []string // run id, "-" prefixed for a delete
	more   chan struct{}
}

func newHeard() *heard { return &heard{more: make(chan struct{}, 100)} }

func (h *heard) wake(runID string, deleted bool) {
	h.mu.Lock()
	if deleted {
		runID = "-" + runID
	}
	h.events = append(h.events, runID)
	h.mu.Unlock()
	h.more <- struct{}{}
}

// waitFor waits until the events heard contain want, in that order.
func (h *heard) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		h.mu.Lock()
		got := slices.Clone(h.events)
		h.mu.Unlock()
		if containsInOrder(got, want) {
			return
		}
		select {
		case <-h.more:
		case <-deadline:
			t.Fatalf("heard %q, want %q among them in order", got, want)
		}
	}
}

func (h *heard) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func listen(t *testing.T, s *sqlite.Store, h *heard) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- s.ListenLedger(ctx, func() { close(ready) }, h.wake) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("ListenLedger: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("ListenLedger after cancel: %v", err)
		}
	})
}

func waitingRun(id string) *durable.RunState {
	now := durable.NewTime(time.Now())
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "a",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
}

func rec(runID, step string) *durable.StepRecord {
	now := durable.NewTime(time.Now())
	return &durable.StepRecord{RunID: runID, StepID: step, NodeID: "a", Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Attempt: 1}
}

// Two store values shared on one file stand for two processes: each hears
// the other's appends and deletes, never its own.
func TestListenLedgerHearsAnotherStoreValue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	a, b := openWith(t, sqlite.Config{Path: path, Shared: true, ListenEvery: 5 * time.Millisecond}), openShared(t, path)
	h := newHeard()
	listen(t, a, h)

	if err := a.RunCommit(ctx, &store.CommitParams{Run: waitingRun("mine"), Create: true, Records: []*durable.StepRecord{rec("mine", "s1")}}); err != nil {
		t.Fatal(err)
	}
	if err := b.RunCommit(ctx, &store.CommitParams{Run: waitingRun("theirs"), Create: true, Records: []*durable.StepRecord{rec("theirs", "s1")}}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "theirs")
	if err := b.LedgerAppend(ctx, "theirs", []*durable.StepRecord{rec("theirs", "s2")}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "theirs", "theirs")
	if _, err := b.LedgerDelete(ctx, "theirs"); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "theirs", "theirs", "-theirs")
	if err := a.LedgerAppend(ctx, "mine", []*durable.StepRecord{rec("mine", "s2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.LedgerDelete(ctx, "mine"); err != nil {
		t.Fatal(err)
	}
	// One more of theirs, heard after everything above.
	if err := b.LedgerAppend(ctx, "last", []*durable.StepRecord{rec("last", "s1")}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "last")
	for _, e := range h.all() {
		if e == "mine" || e == "-mine" {
			t.Fatalf("heard its own write: %q", h.all())
		}
	}
}

// observe.Follow over a shared store: a subscriber of a run is woken by
// another process's appends to it, and told of its delete.
func TestFollowOverASharedStore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	a := observe.Wrap(openWith(t, sqlite.Config{Path: path, Shared: true, ListenEvery: 5 * time.Millisecond}))
	b := openShared(t, path)
	sub := a.Subscribe("r", 16)
	defer sub.Cancel()
	fctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	followed := make(chan error, 1)
	go func() { followed <- a.Follow(fctx, observe.FollowConfig{Ready: func() { close(ready) }}) }()
	<-ready
	defer func() {
		cancel()
		<-followed
	}()
	if err := b.RunCommit(ctx, &store.CommitParams{Run: waitingRun("r"), Create: true, Records: []*durable.StepRecord{rec("r", "s1")}}); err != nil {
		t.Fatal(err)
	}
	next := func() observe.Event {
		t.Helper()
		select {
		case ev := <-sub.C:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no event for another process's write")
			return observe.Event{}
		}
	}
	if ev := next(); ev.RunID != "r" || ev.Deleted {
		t.Fatalf("event %+v, want a wake-up for r", ev)
	}
	recs, err := a.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("the follower reads %d records (%v), want the one appended", len(recs), err)
	}
	if _, err := b.LedgerDelete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.RunID != "r" || !ev.Deleted {
		t.Fatalf("event %+v, want r's delete", ev)
	}
}

// A store that owns its file has no other writer: its ListenLedger says
// so at once, and Follow with it.
func TestListenLedgerOfAnOwningStoreIsUnsupported(t *testing.T) {
	t.Parallel()
	s := openWith(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
	err := s.ListenLedger(t.Context(), func() { t.Error("ready called") }, func(string, bool) {})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ListenLedger of an owning store: %v, want ErrUnsupported", err)
	}
}
