package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestLongRunIDWithNotifyAppends: Config.NotifyAppends only
// adds a notification to each append ("so that followers in other
// processes learn of it"); it must not change which writes succeed. The
// notification's payload (listen.go appendPayload) carries the whole run
// id, and PostgreSQL refuses a NOTIFY payload of 8000 bytes or more
// ("payload string too long", 22023), which rolls the whole batch back: a
// run whose id the same database stores fine without NotifyAppends can
// be neither created nor appended to by a runner that has it on.
func TestLongRunIDWithNotifyAppends(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	tail := func(err error) string {
		s := err.Error()
		if len(s) > 160 {
			s = "…" + s[len(s)-160:]
		}
		return strings.ReplaceAll(s, strings.Repeat("r", 100), "")
	}
	id := strings.Repeat("r", 8000)
	plain := openSchema(t, schema)
	if err := plain.RunCommit(t.Context(), &store.CommitParams{Run: testRun(id), Create: true,
		Records: []*durable.StepRecord{testRecord(id, "a")}}); err != nil {
		t.Fatalf("without NotifyAppends the commit of a run with an %d-byte id fails too (%s); the test wants it to work", len(id), tail(err))
	}
	notifying, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema, Logger: testLogger(t), MaxConns: 2, NotifyAppends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer notifying.Close()
	// A listener on another Store value is still woken (for every run:
	// the id does not fit in the payload).
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready, woken, done := make(chan struct{}), make(chan string, 8), make(chan error, 1)
	go func() {
		done <- plain.ListenLedger(ctx, func() { close(ready) }, func(runID string, _ bool) { woken <- runID })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("listening: %v", err)
	}
	if err := notifying.LedgerAppend(t.Context(), id, []*durable.StepRecord{testRecord(id, "b")}); err != nil {
		t.Errorf("LedgerAppend to a run (%d-byte id) that the store without NotifyAppends committed fine fails with NotifyAppends: %s", len(id), tail(err))
	} else {
		select {
		case got := <-woken:
			if got != "" && got != id {
				t.Errorf("woken for run %q, want every follower (\"\") or the run", got[:min(len(got), 20)])
			}
		case <-time.After(10 * time.Second):
			t.Error("the append to a run with a long id woke no listener")
		}
	}
	id2 := strings.Repeat("r", 7999) + "s"
	if err := notifying.RunCommit(t.Context(), &store.CommitParams{Run: testRun(id2), Create: true,
		Records: []*durable.StepRecord{testRecord(id2, "a")}}); err != nil {
		t.Errorf("RunCommit creating a run with a %d-byte id fails only because NotifyAppends is set: %s", len(id2), tail(err))
	}
}
