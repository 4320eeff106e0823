package observe_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestLaggedFollowerStillSeesDelete: a follower that fell behind (full
// buffer) when a ledger was deleted and regrew must still learn of the
// delete: the regrown ledger starts at seq 1 again, below its cursor, and
// a read from its cursor (what Lagged asks for) misses its first records.
// A follower keeping to the package doc's protocol (drain C, reset its
// cursor on Deleted, read from its cursor on each event and once more
// when Lagged) must end up having read every record the ledger holds.
func TestLaggedFollowerStillSeesDelete(t *testing.T) {
	ctx := context.Background()
	js, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	st := observe.Wrap(js)
	sub := st.Subscribe("a", 2)
	defer sub.Cancel()

	var cursor int64
	seen := map[string]bool{}
	read := func() {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "a", After: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			seen[r.StepID] = true
			cursor = r.Seq
		}
	}
	mk := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "a", StepID: step, NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	}
	// The follower reads seq 1 and 2, then falls behind: these two
	// appends' events fill its buffer.
	for _, s := range []string{"old1", "old2"} {
		if err := st.LedgerAppend(ctx, "a", []*durable.StepRecord{mk(s)}); err != nil {
			t.Fatal(err)
		}
	}
	read()
	// Meanwhile the ledger is deleted and grows again, to 3 records.
	if _, err := st.LedgerDelete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 1; i <= 3; i++ {
		s := fmt.Sprintf("new%d", i)
		want = append(want, s)
		if err := st.LedgerAppend(ctx, "a", []*durable.StepRecord{mk(s)}); err != nil {
			t.Fatal(err)
		}
	}
	// The follower catches up.
	for done := false; !done; {
		select {
		case ev := <-sub.C:
			if ev.Deleted {
				cursor = 0
			}
			read()
		default:
			done = true
		}
	}
	if sub.Lagged() {
		read()
	}
	for _, s := range want {
		if !seen[s] {
			t.Errorf("the follower never read %s of the regrown ledger (its cursor is %d)", s, cursor)
		}
	}
}

// drain returns the events buffered in sub.
func drain(sub *observe.Subscription) []observe.Event {
	var out []observe.Event
	for {
		select {
		case ev := <-sub.C:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestDeletesInAFullBuffer: a delete that finds the buffer full is
// dropped only when a buffered delete covers its run; when the buffer
// holds distinct runs' deletes only, they are merged into one Deleted
// event with an empty RunID (every ledger may have been deleted).
func TestDeletesInAFullBuffer(t *testing.T) {
	ctx := context.Background()
	st := observe.Wrap(memory.New())
	sub := st.Subscribe("", 2)
	defer sub.Cancel()
	del := func(run string) {
		t.Helper()
		if err := st.LedgerAppend(ctx, run, []*durable.StepRecord{rec(run)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.LedgerDelete(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	del("a") // buffer: [append a, delete a]
	del("a") // the second delete of a is covered by the first
	evs := drain(sub)
	if len(evs) != 2 || evs[0].Deleted || !evs[1].Deleted || evs[1].RunID != "a" {
		t.Fatalf("events %+v; want the append of a, then its delete", evs)
	}
	if !sub.Lagged() {
		t.Error("not lagged although an append's event was dropped")
	}

	del("a") // buffer: [append a, delete a]
	del("b") // the append of b is dropped; its delete replaces the append of a
	del("c") // three runs' deletes in two places: merged
	evs = drain(sub)
	if len(evs) != 1 || !evs[0].Deleted || evs[0].RunID != "" {
		t.Fatalf("events %+v; want one Deleted event with an empty RunID", evs)
	}
}

// TestDeletesNeverBlockWriters: deletes making room in full buffers,
// from several writers at once while followers read and cancel, must
// neither block a writer nor lose the last delete (run under -race).
func TestDeletesNeverBlockWriters(t *testing.T) {
	ctx := context.Background()
	st := observe.Wrap(memory.New())
	subs := []*observe.Subscription{st.Subscribe("", 1), st.Subscribe("", 3), st.Subscribe("r0", 1)}
	stop := make(chan struct{})
	go func() { // a slow follower of the second subscription
		for {
			select {
			case <-subs[1].C:
			case <-stop:
				return
			}
		}
	}()
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			run := fmt.Sprintf("r%d", w)
			for range 200 {
				_ = st.LedgerAppend(ctx, run, []*durable.StepRecord{rec(run)})
				_, _ = st.LedgerDelete(ctx, run)
			}
		}()
	}
	for range 4 {
		<-done
	}
	close(stop)
	// r0's follower saw nothing for a while: its buffer holds r0's delete.
	if evs := drain(subs[2]); len(evs) != 1 || !evs[0].Deleted || evs[0].RunID != "r0" {
		t.Errorf("the r0 follower holds %+v; want r0's delete", evs)
	}
	for _, sub := range subs {
		sub.Cancel()
	}
}
