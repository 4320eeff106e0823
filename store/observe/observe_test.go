package observe_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

func rec(run string) *durable.StepRecord {
	return &durable.StepRecord{RunID: run, StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
}

func TestSubscribeDeliversStoredRecords(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(hashchain.Wrap(memory.New()))
	ctx := context.Background()
	one := st.Subscribe("a", 4)
	all := st.Subscribe("", 4)
	defer all.Cancel()
	if err := st.LedgerAppend(ctx, "a", []*durable.StepRecord{rec("a")}); err != nil {
		t.Fatal(err)
	}
	if err := st.LedgerAppend(ctx, "b", []*durable.StepRecord{rec("b")}); err != nil {
		t.Fatal(err)
	}
	ev := <-one.C
	if ev.RunID != "a" || ev.Records[0].Seq != 1 || ev.Records[0].RecordHash == "" {
		t.Fatalf("event %+v record %+v: want the stored record with seq and hash", ev, ev.Records[0])
	}
	if got := (<-all.C).RunID + (<-all.C).RunID; got != "ab" {
		t.Fatalf("all-runs subscription got %q", got)
	}
	select {
	case ev := <-one.C:
		t.Fatalf("run filter leaked %+v", ev)
	default:
	}
	one.Cancel()
	one.Cancel()
	if _, open := <-one.C; open {
		t.Fatal("channel open after Cancel")
	}
}

func TestFullBufferNeverBlocksWriter(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(memory.New())
	sub := st.Subscribe("a", 1)
	defer sub.Cancel()
	for i := 0; i < 5; i++ {
		if err := st.LedgerAppend(context.Background(), "a", []*durable.StepRecord{rec("a")}); err != nil {
			t.Fatal(err)
		}
	}
	if !sub.Lagged() {
		t.Fatal("dropped events not reported")
	}
	if sub.Lagged() {
		t.Fatal("Lagged must clear")
	}
}

// TestLedgerDeleteTellsFollowers: a delete reaches the run's followers as
// a Deleted event, so that a follower whose cursor is past the regrown
// ledger's first seqs reads it again from the start; a delete that found
// nothing sends none.
func TestLedgerDeleteTellsFollowers(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(memory.New())
	ctx := context.Background()
	sub := st.Subscribe("a", 4)
	defer sub.Cancel()
	other := st.Subscribe("b", 4)
	defer other.Cancel()
	for range 2 {
		if err := st.LedgerAppend(ctx, "a", []*durable.StepRecord{rec("a")}); err != nil {
			t.Fatal(err)
		}
	}
	<-sub.C
	<-sub.C
	if n, err := st.LedgerDelete(ctx, "a"); err != nil || n != 2 {
		t.Fatalf("LedgerDelete = %d, %v; want 2", n, err)
	}
	if ev := <-sub.C; !ev.Deleted || ev.RunID != "a" || ev.Records != nil {
		t.Fatalf("event after the delete: %+v; want a Deleted event for run a", ev)
	}
	if n, err := st.LedgerDelete(ctx, "a"); err != nil || n != 0 {
		t.Fatalf("second LedgerDelete = %d, %v; want 0", n, err)
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("a delete that removed nothing sent %+v", ev)
	case ev := <-other.C:
		t.Fatalf("another run's follower got %+v", ev)
	default:
	}
}
