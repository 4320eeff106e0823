package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// busyHolderStore simulates a live runner "other" that holds a due run
// and ticks it: the holder's first checkpoint past the wait (say the
// STARTED record of the LLM call that follows a timer) lands just after
// the reader's first look at the run (tickHeldDue's read), and the holder
// keeps its claim while the call runs. It counts the claims "me" tries
// after that checkpoint.
type busyHolderStore struct {
	*memory.Store
	keepWait   bool // the holder's checkpoint changes only the run's vars (a limits or vars update), keeping its wait
	mu         sync.Mutex
	armed      bool // "me" was refused a claim: its next read is tickHeldDue's
	changed    bool
	afterClaim int // claims "me" tried once the holder had checkpointed
}

func (s *busyHolderStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	err := s.Store.RunClaim(ctx, p)
	if p.Owner == "me" && !p.Renew {
		s.mu.Lock()
		if s.changed {
			s.afterClaim++
		} else if errors.Is(err, store.ErrConflict) {
			s.armed = true
		}
		s.mu.Unlock()
	}
	return err
}

func (s *busyHolderStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	seen, err := s.Store.RunGet(ctx, runID)
	s.mu.Lock()
	fire := s.armed && !s.changed && err == nil
	if fire {
		s.armed, s.changed = false, true
	}
	s.mu.Unlock()
	if fire {
		// The holder's checkpoint past the wait: running, no longer due
		// (or, keeping the wait, a new version all the same).
		cur, gerr := s.Store.RunGet(ctx, runID)
		if gerr != nil {
			return nil, gerr
		}
		if !s.keepWait {
			cur.Status, cur.Waiting = durable.RunRunning, nil
		}
		cur.Vars["holder"] = "ticking"
		if cerr := s.Store.RunCommit(ctx, &store.CommitParams{Run: cur}); cerr != nil {
			return nil, cerr
		}
	}
	return seen, err
}

// A Tick of a due run another runner holds read it, then waited through
// the whole of claimWaits (~1.3 s, 9 claims) for the holder before it
// compared the version. When
// the holder is ticking the run (the usual race of schedulers that all
// wake at the same deadline), the run has changed a few milliseconds in
// and the outcome is settled: the scheduler's serial PollOnce stalled
// ~1.3 s on each such run, where it passed over it at once before. The
// Tick now looks at the run between its tries.
//
// The same when the holder's commit keeps the wait (a limits or vars
// update through it): the run is at a new version under a live holder, no
// idle run to take over, which idleWaiting tells by the version.
func TestTakeoverTickStopsWaitingOnceTheHeldRunChanged(t *testing.T) {
	t.Parallel()
	for _, keepWait := range []bool{false, true} {
		tickHeldByABusyHolder(t, keepWait)
	}
}

func tickHeldByABusyHolder(t *testing.T, keepWait bool) {
	t.Helper()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var cmu sync.Mutex
	clock := func() time.Time { cmu.Lock(); defer cmu.Unlock(); return now }
	timer := timerWorkflow()
	st := &busyHolderStore{Store: memory.New(), keepWait: keepWait}
	reg, _ := runtime.NewRegistry(timer)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only to fail a hung test
	defer cancel()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "timer"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("timer run: %s", got.Status)
	}
	cmu.Lock()
	now = now.Add(2 * time.Minute)
	cmu.Unlock()
	if err := st.Store.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}

	_, err = rt.Tick(ctx, id, runtime.TickOptions{})
	if !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Tick = %v; want ErrRunClaimed (the holder works on the run)", err)
	}
	st.mu.Lock()
	n, changed := st.afterClaim, st.changed
	st.mu.Unlock()
	want := durable.RunRunning
	if keepWait {
		if !changed {
			t.Fatal("keep wait: the holder never committed: the test no longer reaches the case it is about")
		}
		want = durable.RunWaiting
	}
	if got, _ := rt.GetState(ctx, id); changed && (got.Vars["holder"] != "ticking" || got.Status != want) {
		t.Fatalf("keep wait %v: the run: %s; want it as its holder left it", keepWait, got.Status)
	}
	if n > 1 {
		t.Fatalf("keep wait %v: Tick tried %d more claims (all of claimWaits, ~1.3 s) after the held run had changed, "+
			"although no claim could make it tick that run any more; want it to stop waiting once the run changed", keepWait, n)
	}
}
