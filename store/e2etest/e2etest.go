// Package e2etest is the second tier of store tests: it runs real
// workflows through the runtime and the scheduler on a store and checks
// the exact ledger each one writes. Every backend runs it.
package e2etest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

type env struct {
	t   *testing.T
	ctx context.Context
	st  store.Store
	clk *runtimetest.Clock
	rt  *runtime.Runtime
	sch *scheduler.Scheduler
	// rts and schs are every runner on the store (rt and sch first); more
	// than one only in the scenarios with several runners, which claim.
	rts  []*runtime.Runtime
	schs []*scheduler.Scheduler

	callsMu sync.Mutex
	calls   map[string]int // "slow" handler executions by idempotency key
}

func newEnv(t *testing.T, st store.Store) *env { return newRunners(t, st, 1) }

// newRunners builds n runners (runtime and scheduler) on st, as n
// processes sharing a database would be; with more than one they claim
// runs.
func newRunners(t *testing.T, st store.Store, n int) *env {
	clk := runtimetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	e := &env{t: t, ctx: context.Background(), st: st, clk: clk, calls: map[string]int{}}
	for i := range n {
		var claims *runtime.Claims
		if n > 1 {
			// A day: the scenarios move the fake clock by minutes.
			// Renewals every few milliseconds: a runner whose run a
			// cancel through the other took learns it while its effect
			// is still in flight.
			claims = &runtime.Claims{Owner: fmt.Sprintf("runner-%d", i), TTL: 24 * time.Hour, RenewEvery: 3 * time.Millisecond}
		}
		rt, sch := e.newRunner(claims)
		e.rts, e.schs = append(e.rts, rt), append(e.schs, sch)
	}
	e.rt, e.sch = e.rts[0], e.schs[0]
	return e
}

func (e *env) newRunner(claims *runtime.Claims) (*runtime.Runtime, *scheduler.Scheduler) {
	t, st, clk := e.t, e.st, e.clk
	reg, err := runtime.NewRegistry(workflows()...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clk.Now, Claims: claims,
		Handlers: map[durable.EffectType]runtime.Handler{
			"fail": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				return runtime.Failed("boom"), nil
			}},
			// slow stands for a call that leaves the process (a tool, a
			// model): it takes a moment and can be interrupted.
			"slow": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				e.callsMu.Lock()
				e.calls[req.IdempotencyKey]++
				e.callsMu.Unlock()
				d := time.Millisecond
				if req.IdempotencyKey[0] < '4' {
					d = 25 * time.Millisecond // a quarter of the calls are long enough to be cancelled midway
				}
				select {
				case <-time.After(d):
					return runtime.Completed(map[string]any{"ok": true}), nil
				case <-ctx.Done():
					return runtime.Outcome{}, ctx.Err()
				}
			}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	// A short poll interval for the scenarios that start the loop (the
	// others poll by hand).
	sch, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: clk.Now, PollInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return rt, sch
}

func (e *env) start(wf string, vars map[string]any) string {
	e.t.Helper()
	id, err := e.rt.Start(e.ctx, runtime.StartParams{WorkflowID: wf, Vars: vars, SessionID: "sess"})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) tick(id string) *durable.RunState {
	e.t.Helper()
	st, err := e.rt.Tick(e.ctx, id, runtime.TickOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// ledger renders a run's ledger as "node:kind:status" items, checking
// the invariants every record must satisfy on the way.
func (e *env) ledger(id string) string {
	e.t.Helper()
	recs, err := e.st.LedgerList(e.ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	started := map[string]bool{}
	var parts []string
	for i, r := range recs {
		if r.RunID != id || r.Seq != int64(i+1) || r.StepID == "" || r.StartedAt.IsZero() || r.SessionID != "sess" {
			e.t.Fatalf("record %d of %s is malformed: %+v", i, id, r)
		}
		kind := "complete"
		if r.Effect != nil {
			kind = string(r.Effect.Type)
		}
		switch r.Status {
		case durable.StepStarted:
			started[r.StepID] = true
			if r.IdempotencyKey == "" || !r.EndedAt.IsZero() {
				e.t.Fatalf("STARTED record %d of %s: key %q ended %v", i, id, r.IdempotencyKey, r.EndedAt)
			}
		case durable.StepCompleted, durable.StepWaiting, durable.StepFailed:
			if r.Effect != nil && r.Effect.Type != durable.EffectResume && !strings.HasPrefix(r.IdempotencyKey, "system:") && !started[r.StepID] {
				e.t.Fatalf("record %d of %s ends an attempt that never started", i, id)
			}
		}
		parts = append(parts, fmt.Sprintf("%s:%s:%s", r.NodeID, kind, r.Status))
	}
	if len(recs) > 0 && recs[0].RecordHash != "" {
		if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
			e.t.Fatalf("hash chain of %s does not verify: %+v", id, rep.Errors)
		}
	}
	return strings.Join(parts, " ")
}

func (e *env) expectLedger(id, want string) {
	e.t.Helper()
	if got := e.ledger(id); got != want {
		e.t.Fatalf("ledger of %s\n got %s\nwant %s", id, got, want)
	}
}

// Run executes every scenario on stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(newEnv(t, newStore(t)))
		})
	}
}
