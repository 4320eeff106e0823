package history_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// Spec §6.1 (subscriptions: "no replay (clients replay with `list` and
// then follow live)") with §6.2 (ledger window: absolute 1-based cursors,
// cursor_end = cursor_start + len - 1): a client that renders a bundle
// and then follows the run live gets, from a subscription made after the
// export, none of the records the bundle already holds, and then every
// later record once, numbered on from the bundle's cursor_end; the
// records delivered are those LedgerList(After: cursor_end) lists, and a
// later bundle's cursor_end is the last one delivered.
func TestBundleCursorsContinueIntoLiveSubscription(t *testing.T) {
	ctx := context.Background()
	st := observe.Wrap(memory.New())
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "asker"})
	src := history.Source{Runs: st, Ledger: st}

	b, err := history.Export(ctx, src, id, history.Options{LedgerMaxItems: 1})
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerOf(t, b, id)
	end := num(t, l["cursor_end"], "cursor_end")
	if total := num(t, l["total"], "total"); end != total || num(t, l["cursor_start"], "cursor_start") != total {
		t.Fatalf("tail window of 1: start %v end %v total %v", l["cursor_start"], end, total)
	}

	sub := st.Subscribe(id, 64)
	defer sub.Cancel()
	select {
	case ev := <-sub.C:
		t.Fatalf("a new subscription replayed %+v", ev)
	default:
	}
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	var live []int64
	for done := false; !done; {
		select {
		case ev := <-sub.C:
			if ev.RunID != id {
				t.Fatalf("event of run %q", ev.RunID)
			}
			for _, r := range ev.Records {
				live = append(live, r.Seq)
			}
		default:
			done = true
		}
	}
	if sub.Lagged() {
		t.Fatal("subscription lagged")
	}
	if len(live) == 0 || live[0] != end+1 {
		t.Fatalf("live seqs %v, want them to start at cursor_end+1 = %d", live, end+1)
	}
	listed, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id, After: end})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, r := range listed {
		want = append(want, r.Seq)
	}
	if !reflect.DeepEqual(live, want) || !reflect.DeepEqual(live, seq(end+1, end+int64(len(live)))) {
		t.Fatalf("live seqs %v, listed after cursor_end %v", live, want)
	}

	b, err = history.Export(ctx, src, id, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l = ledgerOf(t, b, id)
	if got := num(t, l["cursor_end"], "cursor_end"); got != live[len(live)-1] || num(t, l["total"], "total") != got {
		t.Fatalf("later bundle cursor_end %d total %v, want %d", got, l["total"], live[len(live)-1])
	}
}
