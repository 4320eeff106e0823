package observe_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestSpecSubscriptionHasNoReplay pins spec §6.1: subscriptions are live
// only, with no replay: a subscriber hears the appends made after it
// subscribed, never the records already in the ledger (clients replay
// with list, then follow).
func TestSpecSubscriptionHasNoReplay(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(memory.New())
	ctx := context.Background()
	if err := st.LedgerAppend(ctx, "a", []*durable.StepRecord{rec("a"), rec("a")}); err != nil {
		t.Fatal(err)
	}
	sub := st.Subscribe("a", 4)
	defer sub.Cancel()
	select {
	case ev := <-sub.C:
		t.Fatalf("a new subscription got %+v before any new append", ev)
	default:
	}
	if err := st.LedgerAppend(ctx, "a", []*durable.StepRecord{rec("a")}); err != nil {
		t.Fatal(err)
	}
	ev := <-sub.C
	if ev.RunID != "a" || len(ev.Records) != 1 || ev.Records[0].Seq != 3 {
		t.Fatalf("event %+v; want the one new record, seq 3", ev)
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("unexpected second event %+v", ev)
	default:
	}
}
