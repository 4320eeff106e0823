package observe_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// scriptedListener stands for a database that reports other processes'
// appends and deletes: its first listening reports two appends and a
// delete and then fails, the second one lasts.
type scriptedListener struct {
	store.Store
	listens atomic.Int32
}

func (s *scriptedListener) ListenLedger(ctx context.Context, ready func(), wake func(runID string, deleted bool)) error {
	ready()
	if s.listens.Add(1) == 1 {
		wake("a", false)
		wake("b", false)
		wake("a", true)
		return errors.New("connection reset")
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestFollowWakesAndRecovers(t *testing.T) {
	t.Parallel()
	st := observe.Wrap(&scriptedListener{Store: memory.New()})
	one := st.Subscribe("a", 8)
	all := st.Subscribe("", 8)
	ctx, stop := context.WithCancel(context.Background())
	readies := make(chan struct{}, 2)
	done := make(chan error, 1)
	go func() { done <- st.Follow(ctx, observe.FollowConfig{Ready: func() { readies <- struct{}{} }}) }()
	<-readies
	<-readies // listening again after the failure
	// "-a": the delete of a's ledger, reported as an event with Deleted;
	// "-": after listening again, any ledger may have been deleted
	// meanwhile.
	want := map[*observe.Subscription][]string{one: {"a", "-a", "-"}, all: {"a", "b", "-a", "-"}}
	for sub, runs := range want {
		for _, run := range runs {
			run, deleted := strings.CutPrefix(run, "-")
			select {
			case ev := <-sub.C:
				if ev.RunID != run || ev.Records != nil || ev.Deleted != deleted {
					t.Fatalf("event %+v; want a wake-up for %q (deleted: %t)", ev, run, deleted)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no wake-up for %q", run)
			}
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
}

func TestFollowNeedsAListener(t *testing.T) {
	t.Parallel()
	err := observe.Wrap(memory.New()).Follow(context.Background(), observe.FollowConfig{})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Follow over a store without a listener = %v, want ErrUnsupported", err)
	}
}
