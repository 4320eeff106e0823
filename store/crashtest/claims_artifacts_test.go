package crashtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// offloadStack is the offloading decorator (threshold 100 bytes, so the
// noter's memo is offloaded) over a hash chain over the killable store:
// its artifact writes and its commits are each a persistence point.
func offloadStack(st store.Store, arts artifact.Store) store.Store {
	return offload.Wrap(hashchain.Wrap(st), arts, offload.Config{MaxInlineBytes: 100})
}

// TestCrashClaimsArtifacts kills the claims scenarios at every
// persistence point — run claims and releases on the stores with claims
// (memory, SQLite, PostgreSQL), memory notes' artifact writes, and with
// the offloading decorator its artifact writes — on every store, bare
// and decorated. The restarted process is another claim owner, as a real
// restart is: it takes the runs over once the dead owner's claims
// expired (by the runtimes' clocks, two claim TTLs apart). To keep the
// time down (SQLite under -race is slow), owned SQLite is decorated only
// (the bare one is sqlite_shared, whose claims are the same table), and a
// decorated stack runs only the noter, the scenario with values to
// offload.
func TestCrashClaimsArtifacts(t *testing.T) {
	t.Parallel()
	for _, be := range cfBackends() {
		if be.name != "sqlite" {
			t.Run(be.name, func(t *testing.T) {
				t.Parallel()
				RunClaimsArtifacts(t, be.fresh, nil)
			})
		}
		if be.name != "sqlite_shared" {
			t.Run(be.name+"_offload", func(t *testing.T) {
				t.Parallel()
				RunClaimsArtifacts(t, be.fresh, offloadStack, "crash_noter")
			})
		}
	}
}

// napWorkflows: a charge, a timer wait (until napUntil), a second charge.
func napWorkflows() []*runtime.Workflow {
	n := cfNode
	return []*runtime.Workflow{{ID: "crash_nap", Entry: "pay1", Nodes: map[string]runtime.NodeFunc{
		"pay1": n(func(run *durable.RunState) runtime.StepPlan { return cfCharge(1, "r1", "nap") }),
		"nap": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(noterT0.Add(time.Minute))}}, "pay2")
		}),
		"pay2": n(func(run *durable.RunState) runtime.StepPlan { return cfCharge(2, "r2", "done") }),
		"done": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r1": cfReceipt(run, "r1"), "r2": cfReceipt(run, "r2")})
		}),
	}}}
}

// napRuntime is a runtime over st claiming runs as owner, whose clock
// reads *now (advanced by the test).
func napRuntime(t *testing.T, st store.Store, owner string, now *noterClock, log *effectLog) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(napWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: now.Now, Logger: slog.New(slog.DiscardHandler),
		Claims: &runtime.Claims{Owner: owner, TTL: noterTTL, RenewEvery: noterTTL / 3},
		Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			log.add(req.IdempotencyKey)
			return runtime.Completed(map[string]any{"id": fmt.Sprintf("rcpt-%v", req.Effect.Payload["amount"])}), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestCrashClaimsDueRunTakenOverBeforeExpiry kills a runner at every
// persistence point of the tick that releases a due timer wait, and
// restarts as another owner before the dead owner's claim expired. A run
// the dead runner left waiting on its due timer (the claim taken, nothing
// committed since) is taken over after the kernel's short wait for the
// holder (tickHeldDue, about 1.3 s), not after the claim's TTL; a run the
// dead runner had moved on stays its until the claim expires
// (ErrRunClaimed, by design: it may have an effect in flight), and a
// third life after the expiry finishes it; a run that had ended is
// refused to a tick until then too (nothing is left to do). Every run ends as the clean
// run did, each effect with a durable completion executed once.
func TestCrashClaimsDueRunTakenOverBeforeExpiry(t *testing.T) {
	t.Parallel()
	for _, be := range cfBackends() {
		if be.name == "json" || be.name == "sqlite_shared" {
			continue // no claims; sqlite's claims are sqlite_shared's
		}
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			const runID = "crash-nap"
			// life runs the first life on st until its end or the kill:
			// it parks on the wait, then ticks again once it is due. It
			// returns the number of calls before the due tick.
			life := func(st *Store, log *effectLog) (int, *durable.RunState, error) {
				clock := &noterClock{now: noterT0}
				rt := napRuntime(t, st, "life-1", clock, log)
				if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "crash_nap", RunID: runID}); err != nil {
					return 0, nil, err
				}
				if _, err := rt.Tick(ctx, runID, runtime.TickOptions{}); err != nil {
					return 0, nil, err
				}
				due := st.Calls()
				clock.mu.Lock()
				clock.now = noterT0.Add(2 * time.Minute)
				clock.mu.Unlock()
				run, err := rt.Tick(ctx, runID, runtime.TickOptions{})
				return due, run, err
			}
			open := be.fresh(t)
			st, closeFn := open(t)
			probe := Wrap(st, -1, Before)
			due, want, err := life(probe, &effectLog{calls: map[string]int{}})
			closeFn()
			if err != nil || want.Status != durable.RunCompleted {
				t.Fatalf("clean run: %v %v", want, err)
			}
			kinds := probe.Kinds()
			for point := due; point < len(kinds); point++ {
				for _, phase := range []Phase{Before, After} {
					t.Run(fmt.Sprintf("kill-%02d-%s-%s", point, kinds[point], phase), func(t *testing.T) {
						t.Parallel()
						checkDueTakeover(t, be.fresh, life, runID, point, phase, want)
					})
				}
			}
		})
	}
}

func checkDueTakeover(t *testing.T, fresh Backend, life func(*Store, *effectLog) (int, *durable.RunState, error),
	runID string, point int, phase Phase, want *durable.RunState) {
	ctx := context.Background()
	open := fresh(t)
	log := &effectLog{calls: map[string]int{}}
	st, closeFn := open(t)
	killer := Wrap(st, point, phase)
	_, _, _ = life(killer, log)
	if !killer.Dead() {
		t.Fatalf("the kill at point %d never happened", point)
	}
	closeFn()

	st, closeFn = open(t)
	defer closeFn()
	left, err := st.RunGet(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]int{}
	recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	for _, r := range recs {
		if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
			done[r.IdempotencyKey] = log.count(r.IdempotencyKey)
		}
	}
	idleDue := left.Status == durable.RunWaiting && left.Waiting != nil && left.Waiting.Reason == durable.WaitUntil

	// Second life: another owner, the dead one's claim still live.
	clock := &noterClock{now: noterT0.Add(3 * time.Minute)}
	rt := napRuntime(t, st, "life-2", clock, log)
	got, err := rt.Tick(ctx, runID, runtime.TickOptions{})
	switch {
	case err == nil:
	case errors.Is(err, runtime.ErrRunClaimed) && left.Status.Terminal():
		// The run had ended, its claim not yet released: a tick claims
		// before it reads, so it is refused until the claim expires,
		// though nothing is left to do. The durable run is the result.
		got = left
	case errors.Is(err, runtime.ErrRunClaimed) && !idleDue:
		// The dead runner had moved the run on: it stays held until the
		// claim expires. Third life, after the expiry.
		clock := &noterClock{now: noterT0.Add(2 * noterTTL)}
		rt := napRuntime(t, st, "life-3", clock, log)
		got, err = rt.Tick(ctx, runID, runtime.TickOptions{})
		if err != nil {
			t.Fatalf("after the claim expired: %v", err)
		}
	default:
		t.Fatalf("restart before the claim expired, run left %s (waiting on its due timer: %v): %v", left.Status, idleDue, err)
	}
	if got.Status != want.Status || !reflect.DeepEqual(normalize(got.Output), normalize(want.Output)) {
		t.Fatalf("after restart: %s %v, want %s %v", got.Status, got.Output, want.Status, want.Output)
	}
	for k, n := range done {
		if log.count(k) != n {
			t.Errorf("effect %s re-executed after its completion was durable", k)
		}
	}
	checkOneCharge(ctx, t, st, runID)
}

// TestKillPhasesOfSingleWrites: at a command, cursor, claim or artifact
// write, a kill Before leaves nothing written, a kill After leaves the
// write durable, and the caller sees ErrKilled either way; the artifact
// store's writes count in its Store's sequence.
func TestKillPhasesOfSingleWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	writes := []struct {
		kind    string
		write   func(s *Store, a *Artifacts) error
		durable func(st store.Store, arts artifact.Store) bool
	}{
		{"command", func(s *Store, _ *Artifacts) error {
			_, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r", Type: "pause"})
			return err
		}, func(st store.Store, _ artifact.Store) bool {
			n, err := st.CommandLastSeq(ctx)
			return err == nil && n == 1
		}},
		{"cursor", func(s *Store, _ *Artifacts) error {
			return s.CursorSave(ctx, "host", 7)
		}, func(st store.Store, _ artifact.Store) bool {
			n, err := st.CursorLoad(ctx, "host")
			return err == nil && n == 7
		}},
		{"claim", func(s *Store, _ *Artifacts) error {
			return s.RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "dead", TTL: time.Hour})
		}, func(st store.Store, _ artifact.Store) bool {
			err := st.(store.RunClaimer).RunClaim(ctx, &store.RunClaimParams{RunID: "r", Owner: "other", TTL: time.Hour})
			return errors.Is(err, store.ErrConflict)
		}},
		{"artifact", func(_ *Store, a *Artifacts) error {
			_, err := a.Put(ctx, artifact.PutParams{Content: []byte("x"), ArtifactID: "a1"})
			return err
		}, func(_ store.Store, arts artifact.Store) bool {
			ok, err := arts.Exists(ctx, "a1")
			return err == nil && ok
		}},
	}
	for _, w := range writes {
		for _, phase := range []Phase{Before, After} {
			st, arts := memory.New(), artifact.NewMemory()
			s := Wrap(st, 0, phase)
			a := WrapArtifacts(arts, s)
			if err := w.write(s, a); !errors.Is(err, ErrKilled) {
				t.Errorf("%s killed %s: %v, want ErrKilled", w.kind, phase, err)
			}
			if got := w.durable(st, arts); got != (phase == After) {
				t.Errorf("%s killed %s: durable %v, want %v", w.kind, phase, got, phase == After)
			}
			if kinds := s.Kinds(); len(kinds) != 1 || kinds[0] != w.kind {
				t.Errorf("%s killed %s: points %v", w.kind, phase, kinds)
			}
			if _, _, err := a.Get(ctx, "a1"); !errors.Is(err, ErrKilled) {
				t.Errorf("%s killed %s: artifact read after the kill: %v, want ErrKilled", w.kind, phase, err)
			}
		}
	}
}
