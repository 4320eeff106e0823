package runtime

// An external effect whose completing commit loses to another writer's
// (two processes sharing a store without claims; here two runtimes on one
// store value, each with its own locks): the effect ran, so its end is
// recorded, and neither a replay nor a retry runs it a second time.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// conflictStores are the store kinds the tests run on: atomic commits
// (memory, SQLite) and records-first ones (JSON files).
var conflictStores = []string{"memory", "jsonfile", "sqlite"}

func newConflictStore(t *testing.T, kind string) store.Store {
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

// blockingOnce is an external "llm" handler whose first call signals
// entered and waits for release; every call answers {"answer": "42"}.
type blockingOnce struct {
	calls             atomic.Int32
	entered, released chan struct{}
}

func newBlockingOnce() *blockingOnce {
	return &blockingOnce{entered: make(chan struct{}), released: make(chan struct{})}
}

func (b *blockingOnce) config() Config {
	return Config{Clock: steppingMilliClock(), Handlers: map[durable.EffectType]Handler{"llm": {Func: func(context.Context, *EffectRequest) (Outcome, error) {
		if b.calls.Add(1) == 1 {
			close(b.entered)
			<-b.released
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}}}}
}

// endsByStep counts the end records (not STARTED) of each step id of the
// run's "llm" attempts, and fails on a STARTED record left without one.
func endsByStep(t *testing.T, st store.Store, runID string) map[string]int {
	t.Helper()
	recs, err := st.LedgerList(t.Context(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]int{}
	for _, r := range recs {
		if r.Effect == nil || r.Effect.Type != "llm" {
			continue
		}
		if r.Status == durable.StepStarted {
			ends[r.StepID] += 0
		} else {
			ends[r.StepID]++
		}
	}
	for step, n := range ends {
		if n == 0 {
			t.Errorf("attempt %s has no end record", step)
		}
	}
	return ends
}

func TestEffectCompletionLostToAPauseIsNotRunAgain(t *testing.T) {
	for _, kind := range conflictStores {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			m := startAgentMidEffect(t, kind)
			st, b, id, h, ticked := m.st, m.b, m.id, m.h, m.ticked
			if _, err := b.Pause(ctx, id, "operator"); err != nil {
				t.Fatal(err)
			}
			close(h.released)
			if err := <-ticked; err != nil {
				t.Fatalf("the tick whose commit lost to the pause: %v", err)
			}
			if run, err := b.GetState(ctx, id); err != nil || !IsPaused(run) {
				t.Fatalf("after the lost commit: %v, %v; want the run as the pause left it", run, err)
			}
			if _, err := b.ResumeRun(ctx, id); err != nil {
				t.Fatal(err)
			}
			run, err := b.Tick(ctx, id, TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != durable.RunCompleted || jsonText(t, run.Output) != `{"answer":"42"}` {
				t.Fatalf("run %s with output %s, want completed with the effect's answer", run.Status, jsonText(t, run.Output))
			}
			if n := h.calls.Load(); n != 1 {
				t.Fatalf("the effect ran %d times; its completion, lost with the commit, must be reused", n)
			}
			if ends := endsByStep(t, st, id); len(ends) != 1 {
				t.Fatalf("attempts %v, want the one attempt", ends)
			}
		})
	}
}

func TestApplyEffectLostToAPauseIsReusedByItsRetry(t *testing.T) {
	for _, kind := range conflictStores {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			st := newConflictStore(t, kind)
			h := newBlockingOnce()
			a := errRuntime(t, st, h.config(), askOnly())
			b := errRuntime(t, st, h.config(), askOnly())
			id := startWaiting(t, a, "ask")
			p := ApplyEffectParams{RunID: id, NodeID: "apply", IdempotencyKey: "command:c1",
				Effect: &durable.Effect{Type: "llm", ResultKey: "_temp.applied"}}
			applied := applyInBackground(ctx, a, p)
			<-h.entered
			// A waiting run is paused too, unless it waits for a person:
			// so the ask node waits on an event here.
			if _, err := b.Pause(ctx, id, "operator"); err != nil {
				t.Fatal(err)
			}
			close(h.released)
			if err := <-applied; !errors.Is(err, ErrRunChanged) {
				t.Fatalf("apply whose commit lost to the pause: %v, want ErrRunChanged", err)
			}
			out, err := a.ApplyEffect(ctx, p)
			if err != nil || jsonText(t, out.Result) != `{"answer":"42"}` {
				t.Fatalf("retry: %v, %v", out.Result, err)
			}
			if n := h.calls.Load(); n != 1 {
				t.Fatalf("the effect ran %d times; the retry must reuse the recorded completion", n)
			}
			run, err := a.GetState(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			tmp, _ := run.Vars["_temp"].(map[string]any)
			if !IsPaused(run) || jsonText(t, tmp["applied"]) != `{"answer":"42"}` {
				t.Fatalf("after the retry: paused %v, _temp %s; want the pause kept and the result written", IsPaused(run), jsonText(t, tmp))
			}
			if ends := endsByStep(t, st, id); len(ends) != 1 {
				t.Fatalf("attempts %v, want the one attempt", ends)
			}
		})
	}
}

// A run another writer cancelled during the effect keeps the end that
// cancel gave the attempt, and no second one.
func TestEffectCompletionLostToACancelIsNotRecordedTwice(t *testing.T) {
	for _, kind := range conflictStores {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			m := startAgentMidEffect(t, kind)
			st, b, id, h, ticked := m.st, m.b, m.id, m.h, m.ticked
			if _, err := b.Cancel(ctx, id, "stop"); err != nil {
				t.Fatal(err)
			}
			close(h.released)
			<-ticked
			run, err := b.GetState(ctx, id)
			if err != nil || run.Status != durable.RunCancelled {
				t.Fatalf("run %v, %v; want it cancelled", run, err)
			}
			wantOneEndEach(t, st, id)
		})
	}
}

// askOnly is workflow "ask": its node waits for an event (a run waiting
// for a person is not paused) and then completes.
func askOnly() *Workflow {
	return &Workflow{ID: "ask", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"wait_key": "go"}, ResultKey: "ev"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantOneEndEach fails unless every "llm" attempt of run id has exactly
// one end record.
func wantOneEndEach(t *testing.T, st store.Store, id string) {
	t.Helper()
	for step, n := range endsByStep(t, st, id) {
		if n != 1 {
			t.Errorf("attempt %s has %d end records, want 1", step, n)
		}
	}
}

// tickInBackground ticks run id on rt in a goroutine; the channel gets
// the tick's error.
func tickInBackground(ctx context.Context, rt *Runtime, id string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := rt.Tick(ctx, id, TickOptions{})
		done <- err
	}()
	return done
}

// applyInBackground calls rt.ApplyEffect(p) in a goroutine; the channel
// gets its error.
func applyInBackground(ctx context.Context, rt *Runtime, p ApplyEffectParams) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := rt.ApplyEffect(ctx, p)
		done <- err
	}()
	return done
}

// startWaiting starts workflow wfID on rt and ticks it to its first wait.
func startWaiting(t *testing.T, rt *Runtime, wfID string) string {
	t.Helper()
	id, err := rt.Start(t.Context(), StartParams{WorkflowID: wfID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(t.Context(), id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	return id
}

// agentMidEffect is a selfResumingAgent run started by runtime a, whose
// tick is in its "llm" effect (h's first call, held until h.released);
// runtime b shares a's store.
type agentMidEffect struct {
	st     store.Store
	a, b   *Runtime
	id     string
	h      *blockingOnce
	ticked <-chan error // a's tick's error
}

func startAgentMidEffect(t *testing.T, kind string) *agentMidEffect {
	t.Helper()
	m := &agentMidEffect{st: newConflictStore(t, kind), h: newBlockingOnce()}
	var nodeCalls atomic.Int32
	m.a = errRuntime(t, m.st, m.h.config(), selfResumingAgent(&nodeCalls))
	m.b = errRuntime(t, m.st, m.h.config(), selfResumingAgent(&nodeCalls))
	id, err := m.a.Start(t.Context(), StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	m.id = id
	m.ticked = tickInBackground(t.Context(), m.a, id)
	<-m.h.entered
	return m
}
