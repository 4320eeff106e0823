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

	callsMu sync.Mutex
	calls   map[string]int // "slow" handler executions by idempotency key
}

func newEnv(t *testing.T, st store.Store) *env {
	clk := runtimetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	reg, err := runtime.NewRegistry(workflows()...)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: context.Background(), st: st, clk: clk, calls: map[string]int{}}
	e.rt, err = runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clk.Now,
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
				select {
				case <-time.After(200 * time.Microsecond):
					return runtime.Completed(map[string]any{"ok": true}), nil
				case <-ctx.Done():
					return runtime.Outcome{}, ctx.Err()
				}
			}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if e.sch, err = scheduler.New(scheduler.Config{Runtime: e.rt, Clock: clk.Now}); err != nil {
		t.Fatal(err)
	}
	return e
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
