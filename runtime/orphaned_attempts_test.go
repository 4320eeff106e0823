package runtime_test

// An effect attempt whose STARTED record is durable but whose end never
// was (its tick's caller went away, a kill cut its commit) is closed when
// the effect is attempted again: failed, never reused, so the ledger shows
// no attempt in flight for ever.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// storeOfKind makes a store of kind (memory, jsonfile or sqlite), closed
// when the test ends.
func storeOfKind(t *testing.T, kind string) store.Store {
	t.Helper()
	var st store.Store
	var err error
	switch kind {
	case "memory":
		st = memory.New()
	case "jsonfile":
		st, err = jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
	case "sqlite":
		st, err = sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite")})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// interruptedOnce is an external "job" handler whose first call waits
// for its context to end (a shutdown) after signalling entered; later
// calls complete with {"ok": true}.
type interruptedOnce struct {
	calls   atomic.Int32
	entered chan struct{}
}

func (h *interruptedOnce) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if h.calls.Add(1) == 1 {
			close(h.entered)
			<-ctx.Done()
			return runtime.Outcome{}, ctx.Err()
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
}

// jobThenDone is workflow "w": node act requests a "job" effect, then
// done completes the run.
func jobThenDone() *runtime.Workflow {
	return &runtime.Workflow{ID: "w", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "job", ResultKey: "r", Payload: map[string]any{"n": 1}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
}

// attemptEnds checks that every attempt of effect typ in recs has exactly
// one end, and returns the attempts' ends in ledger order.
func attemptEnds(t *testing.T, recs []*durable.StepRecord, typ durable.EffectType) []*durable.StepRecord {
	t.Helper()
	ended := map[string]int{}
	var starts []string
	var ends []*durable.StepRecord
	for _, r := range recs {
		if r.Effect == nil || r.Effect.Type != typ {
			continue
		}
		if r.Status == durable.StepStarted {
			starts = append(starts, r.StepID)
			continue
		}
		ended[r.StepID]++
		ends = append(ends, r)
	}
	for _, id := range starts {
		if ended[id] != 1 {
			t.Errorf("attempt %s has %d end records, want 1", id, ended[id])
		}
	}
	return ends
}

// wantOrphanThenCompleted checks that the effect's first attempt was
// closed as interrupted and its second completed.
func wantOrphanThenCompleted(t *testing.T, recs []*durable.StepRecord, typ durable.EffectType) {
	t.Helper()
	ends := attemptEnds(t, recs, typ)
	if len(ends) != 2 || ends[0].Status != durable.StepFailed || !strings.HasPrefix(ends[0].Error, "interrupted:") ||
		ends[1].Status != durable.StepCompleted || ends[0].IdempotencyKey != ends[1].IdempotencyKey {
		for _, r := range recs {
			t.Logf("%d %s %s %s %s", r.Seq, r.NodeID, r.Status, r.StepID, r.Error)
		}
		t.Fatal("want the interrupted attempt ended failed (interrupted), then the new attempt completed, under one key")
	}
}

func TestAttemptInterruptedByItsCallerIsClosedWhenReplayed(t *testing.T) {
	for _, kind := range []string{"memory", "jsonfile", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			st := storeOfKind(t, kind)
			h := &interruptedOnce{entered: make(chan struct{})}
			rt := applyRuntime(t, runtime.Config{Store: st, Handlers: map[durable.EffectType]runtime.Handler{"job": h.handler()}}, jobThenDone())
			id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
			if err != nil {
				t.Fatal(err)
			}
			tctx, stop := context.WithCancel(t.Context())
			ticked := make(chan error, 1)
			go func() {
				_, err := rt.Tick(tctx, id, runtime.TickOptions{})
				ticked <- err
			}()
			<-h.entered
			stop() // a shutdown
			if err := <-ticked; !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted tick: %v", err)
			}
			run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
			if err != nil || run.Status != durable.RunCompleted {
				t.Fatalf("replay: %v, %v", run, err)
			}
			if n := h.calls.Load(); n != 2 {
				t.Fatalf("handler called %d times, want 2 (the interrupted call has no result)", n)
			}
			wantOrphanThenCompleted(t, ledgerOf(t, rt, id), "job")
		})
	}
}

// On the JSON-file store a kill can leave a commit's records without its
// state: here the STARTED record of the attempt. The run restarts from
// before the effect, its node runs again and requests the effect under
// the same key; the torn attempt is closed.
func TestTornStartedRecordIsClosedOnReplay(t *testing.T) {
	var calls atomic.Int32
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	newRuntime := func(st store.Store) *runtime.Runtime {
		return applyRuntime(t, runtime.Config{Store: st, Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, jobThenDone())
	}
	run, id, js := replayAfterKill(t, newRuntime, func(r *durable.StepRecord) bool {
		return r.Status == durable.StepStarted && r.Effect != nil && r.Effect.Type == "job"
	})
	if run.Status != durable.RunCompleted || calls.Load() != 1 {
		t.Fatalf("replay: run %s, handler called %d times; want completed, called once (the kill came before the call)", run.Status, calls.Load())
	}
	recs, err := js.LedgerList(t.Context(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	wantOrphanThenCompleted(t, recs, "job")
}

// ApplyEffect retried after its caller went away during the effect.
func TestApplyEffectInterruptedThenRetriedClosesTheFirstAttempt(t *testing.T) {
	for _, kind := range []string{"memory", "jsonfile", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			st := storeOfKind(t, kind)
			h := &interruptedOnce{entered: make(chan struct{})}
			rt := applyRuntime(t, runtime.Config{Store: st, Handlers: map[durable.EffectType]runtime.Handler{"job": h.handler()}}, askThenDone())
			run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
			p := runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "apply", IdempotencyKey: "command:c1",
				Effect: &durable.Effect{Type: "job", ResultKey: "_temp.applied"}}
			actx, stop := context.WithCancel(t.Context())
			applied := make(chan error, 1)
			go func() {
				_, err := rt.ApplyEffect(actx, p)
				applied <- err
			}()
			<-h.entered
			stop()
			if err := <-applied; !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted apply: %v", err)
			}
			if out, err := rt.ApplyEffect(t.Context(), p); err != nil || out.Status != runtime.OutcomeCompleted {
				t.Fatalf("retry: %+v, %v", out, err)
			}
			wantOrphanThenCompleted(t, ledgerOf(t, rt, run.RunID), "job")
		})
	}
}
