package runtime_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// A WAIT_EVENT released by its deadline resolves with exactly
// {"timed_out": true} (builtin_wait.go's handleWaitEvent doc, the
// releaseDue doc; Python's docs): that object, nothing added, is written
// at the result key and carried by the resume record, whose wait_reason
// and wait_key are the event wait's.
func TestWaitEventDeadlineResolvesWithTimedOutOnly(t *testing.T) {
	f, id, st := waitEventFixture(t, map[string]any{"wait_key": "k", "timeout_s": 5})
	if st.Status != durable.RunWaiting {
		t.Fatalf("status %s; want waiting", st.Status)
	}
	f.now = f.now.Add(6 * time.Second)
	st, err := f.rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick past the deadline: %v %v", st, err)
	}
	if got, _ := json.Marshal(st.Output["evt"]); string(got) != `{"timed_out":true}` {
		t.Errorf("result_key holds %s; want {\"timed_out\":true}", got)
	}
	recs, err := f.st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	var resume *durable.StepRecord
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			if resume != nil {
				t.Fatalf("two resume records")
			}
			resume = r
		}
	}
	if resume == nil {
		t.Fatalf("no resume record in %d records", len(recs))
	}
	p := resume.Effect.Payload
	if got, _ := json.Marshal(p["payload"]); string(got) != `{"timed_out":true}` || p["wait_reason"] != "event" || p["wait_key"] != "k" {
		t.Errorf("resume record payload %v; want payload {\"timed_out\":true}, wait_reason event, wait_key k", p)
	}
}
