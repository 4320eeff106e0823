// Package runtimetest is a harness for testing workflows: a runtime on an
// in-memory store (or one the test gives), a fake clock, a scheduler
// pass on demand, and scripted effect handlers that hand out prepared
// outcomes and record what they were asked.
//
//	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf}})
//	h.Script(durable.EffectLLMCall, runtime.Completed(map[string]any{"content": "hi"}))
//	id, st := h.Run("greet", nil)        // start and tick: waits for the user
//	st = h.Respond(id, map[string]any{"text": "yes"})
//	h.Advance(time.Hour)                 // releases due WAIT_UNTIL deadlines
//	h.RequireStatus(id, durable.RunCompleted)
//	got := h.Ledger(id)                  // ["ask:ask_user:started", …]
//
// Every method fails the test (t.Fatal) on an error, so a test reads as
// the story of its run.
package runtimetest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// DefaultStart is the fake clock's time when Config.Start is zero.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Config configures a Harness. Zero fields are defaults.
type Config struct {
	// Workflows are registered in the runtime's registry.
	Workflows []*runtime.Workflow
	// Handlers are merged over the built-in handlers (for effects a test
	// wants handled for real rather than scripted).
	Handlers map[durable.EffectType]runtime.Handler
	// Store is the store to run on; memory.New() when nil. The harness
	// does not close a store it was given.
	Store store.Store
	// Artifacts is the runtime's artifact store (offloading, memory
	// effects); none when nil, as in runtime.Config.
	Artifacts artifact.Store
	// Start is the fake clock's first reading; DefaultStart when zero.
	Start time.Time
	// Limits seeds vars._limits of new runs.
	Limits runtime.LimitsConfig
	// Policy is the runtime's effect policy (retries); the runtime's
	// default (one attempt) when nil. Its back-off waits advance the fake
	// clock instead of sleeping.
	Policy runtime.EffectPolicy
}

// Harness drives workflows in a test.
type Harness struct {
	// Runtime, Store and Clock are the harness's parts, for what its
	// methods do not cover.
	Runtime *runtime.Runtime
	Store   store.Store
	Clock   *Clock

	t     testing.TB
	sched *scheduler.Scheduler

	mu      sync.Mutex
	scripts map[durable.EffectType]*script
}

// Request is one effect request a scripted handler received.
type Request struct {
	RunID          string
	NodeID         string
	Payload        map[string]any // a copy
	ResultKey      string
	Attempt        int
	IdempotencyKey string
}

type script struct {
	outcomes []runtime.Outcome
	served   int
	requests []Request
	checked  bool // the test asked for Unused
}

// New returns a harness; a store it created is closed at the test's end.
func New(t testing.TB, cfg Config) *Harness {
	t.Helper()
	start := cfg.Start
	if start.IsZero() {
		start = DefaultStart
	}
	h := &Harness{t: t, Store: cfg.Store, Clock: NewClock(start), scripts: map[durable.EffectType]*script{}}
	if h.Store == nil {
		h.Store = memory.New()
		t.Cleanup(func() { _ = h.Store.Close() })
	}
	reg, err := runtime.NewRegistry(cfg.Workflows...)
	if err != nil {
		t.Fatalf("runtimetest: registering workflows: %v", err)
	}
	h.Runtime, err = runtime.New(runtime.Config{Store: h.Store, Registry: reg, Handlers: cfg.Handlers, Artifacts: cfg.Artifacts,
		Limits: cfg.Limits, Clock: h.Clock.Now, Policy: cfg.Policy,
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.Clock.Advance(d)
			return ctx.Err()
		}})
	if err != nil {
		t.Fatalf("runtimetest: %v", err)
	}
	h.sched, err = scheduler.New(scheduler.Config{Runtime: h.Runtime, Clock: h.Clock.Now})
	if err != nil {
		t.Fatalf("runtimetest: %v", err)
	}
	t.Cleanup(h.reportUnused)
	return h
}

// reportUnused fails the test for the scripted outcomes no request took,
// of the types whose leftovers the test did not look at (Unused): a
// script longer than the run's story usually means the run took another
// path than the test expects.
func (h *Harness) reportUnused() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for typ, sc := range h.scripts {
		if n := len(sc.outcomes) - sc.served; n > 0 && !sc.checked {
			h.t.Errorf("runtimetest: %d scripted %s outcome(s) of %d were never requested", n, typ, len(sc.outcomes))
		}
	}
}

// Script queues outcomes for an effect type: each request of that type
// takes the next one, in order. A request beyond the script fails the
// test and gets a failed outcome, and so do outcomes still queued when
// the test ends, unless the test called Unused for the type. Scripting a
// type replaces its handler (built-in or given in Config.Handlers),
// keeping its Local mark so the run commits as it would with the real
// one; call Script before the steps that use it, not while a tick runs.
func (h *Harness) Script(typ durable.EffectType, outcomes ...runtime.Outcome) {
	h.mu.Lock()
	sc, ok := h.scripts[typ]
	if !ok {
		sc = &script{}
		h.scripts[typ] = sc
	}
	sc.outcomes = append(sc.outcomes, outcomes...)
	h.mu.Unlock()
	if !ok {
		replaced, _ := h.Runtime.Handler(typ)
		h.Runtime.SetHandler(typ, runtime.Handler{Local: replaced.Local, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return h.serve(typ, req), nil
		}})
	}
}

func (h *Harness) serve(typ durable.EffectType, req *runtime.EffectRequest) runtime.Outcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	sc := h.scripts[typ]
	sc.requests = append(sc.requests, Request{RunID: req.Run.RunID, NodeID: req.NodeID,
		Payload: pyjson.CloneObject(req.Effect.Payload), ResultKey: req.Effect.ResultKey,
		Attempt: req.Attempt, IdempotencyKey: req.IdempotencyKey})
	if sc.served == len(sc.outcomes) {
		msg := fmt.Sprintf("runtimetest: %s request %d (run %s, node %s) has no scripted outcome",
			typ, len(sc.requests), req.Run.RunID, req.NodeID)
		h.t.Errorf("%s", msg)
		return runtime.Failed(msg)
	}
	// A copy, as a real handler returns a fresh value each call: the
	// kernel writes it into the run's vars, where a node may change it.
	out := sc.outcomes[sc.served]
	sc.served++
	out.Result = deepCopy(out.Result)
	if out.Wait != nil {
		w := *out.Wait
		w.Details, _ = deepCopy(w.Details).(map[string]any)
		w.Choices, _ = deepCopy(w.Choices).([]string)
		out.Wait = &w
	}
	return out
}

// deepCopy copies v's maps and slices at every level, keeping their Go
// types ([]map[string]any stays one): a scripted outcome built with typed
// containers must not be shared with the runs it is handed to.
func deepCopy(v any) any {
	if v == nil {
		return nil
	}
	return copyValue(reflect.ValueOf(v)).Interface()
}

func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := copyValue(v.Elem())
		out := reflect.New(v.Type()).Elem()
		out.Set(c)
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), copyValue(it.Value()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i)))
		}
		return out
	}
	return v
}

// Requests returns the requests the scripted handler of typ received, in
// order.
func (h *Harness) Requests(typ durable.EffectType) []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sc := h.scripts[typ]; sc != nil {
		return append([]Request(nil), sc.requests...)
	}
	return nil
}

// Unused returns how many scripted outcomes of typ no request took; the
// test then owns the check, and they are not reported at its end.
func (h *Harness) Unused(typ durable.EffectType) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sc := h.scripts[typ]; sc != nil {
		sc.checked = true
		return len(sc.outcomes) - sc.served
	}
	return 0
}

// Start starts a run of workflowID with vars and returns its id.
func (h *Harness) Start(workflowID string, vars map[string]any) string {
	h.t.Helper()
	id, err := h.Runtime.Start(h.t.Context(), runtime.StartParams{WorkflowID: workflowID, Vars: vars})
	if err != nil {
		h.t.Fatalf("runtimetest: starting %s: %v", workflowID, err)
	}
	return id
}

// Run starts a run and ticks it once: until it waits or ends, or uses the
// default step budget (100). A run left running (its budget used) is
// handed to the scheduler, as scheduler.Scheduled.Run does: the next
// Advance drives it on.
func (h *Harness) Run(workflowID string, vars map[string]any) (string, *durable.RunState) {
	h.t.Helper()
	id := h.Start(workflowID, vars)
	return id, h.Tick(id)
}

// Tick ticks a run until it waits or ends (or uses the default step
// budget) and returns its state. A run left running is handed to the
// scheduler, as by Run.
func (h *Harness) Tick(runID string) *durable.RunState {
	h.t.Helper()
	st, err := h.Runtime.Tick(h.t.Context(), runID, runtime.TickOptions{})
	if err != nil {
		h.t.Fatalf("runtimetest: ticking %s: %v", runID, err)
	}
	h.driveOn(st)
	return st
}

// driveOn hands a run a call left running (its step budget used) to the
// scheduler, as scheduler.Scheduled does: it is no longer due, and
// Advance would otherwise never drive it on.
func (h *Harness) driveOn(st *durable.RunState) {
	if st.Status == durable.RunRunning && !runtime.IsPaused(st) {
		h.sched.DriveSoon(st.RunID)
	}
}

// Respond resumes a run waiting for a user, an event or any other wait
// with payload (written at the wait's result key) and returns its state.
// The run must be waiting. A run left running is handed to the
// scheduler, as scheduler.Scheduled.Respond does: the next Advance drives
// it on.
func (h *Harness) Respond(runID string, payload map[string]any) *durable.RunState {
	h.t.Helper()
	st := h.State(runID)
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		h.t.Fatalf("runtimetest: responding to run %s, which is %s, not waiting", runID, st.Status)
	}
	st, err := h.Runtime.Resume(h.t.Context(), runtime.ResumeParams{RunID: runID, WaitKey: st.Waiting.WaitKey, Payload: payload})
	if err != nil {
		h.t.Fatalf("runtimetest: resuming %s: %v", runID, err)
	}
	h.driveOn(st)
	return st
}

// Advance lets d of time go by under the scheduler's loop, which sleeps
// until the next deadline: while the earliest WAIT_UNTIL or WAIT_EVENT
// deadline still ahead is within d, it sets the clock to that deadline
// and passes (scheduler.Pass), so each wait is released at its time and
// a wait set relative to the release starts from it; then it sets the
// clock to now+d and passes once more. A pass ticks the runs whose
// deadline has passed, however many, drives on the runs a pass or a
// call of the harness (Run, Tick, Respond) left running, and drives
// again the runtime's follow-ups due for a retry (their back-off, which
// the harness cannot see, is not stepped through: they are driven at the
// next pass after it). It returns how many runs were due over all its
// passes. Deadlines that keep falling due within d (a loop on a tiny
// wait) are followed for at most maxAdvanceSteps passes.
func (h *Harness) Advance(d time.Duration) int {
	h.t.Helper()
	target := h.Clock.Now().Add(d)
	n := 0
	if d > 0 {
		// What is due now (a run Run or Respond left running) goes first,
		// as the loop drives it at once: its waits start from now.
		n += h.pass()
	}
	for step := 0; ; step++ {
		next, ok := h.nextDeadline(target)
		if !ok {
			break
		}
		if step == maxAdvanceSteps {
			h.t.Fatalf("runtimetest: Advance(%s) passed %d deadlines and has not reached the end of its span; "+
				"advance in shorter spans", d, maxAdvanceSteps)
		}
		h.Clock.Advance(next.Sub(h.Clock.Now()))
		n += h.pass()
	}
	// The runtime's back-off sleeps advance the clock too, maybe past the
	// target: the clock never goes back.
	if now := h.Clock.Now(); now.Before(target) {
		h.Clock.Advance(target.Sub(now))
	}
	return n + h.pass()
}

// maxAdvanceSteps bounds the deadlines one Advance steps through.
const maxAdvanceSteps = 100_000

// nextDeadline returns the earliest deadline of a waiting run after the
// clock's time and at or before target. Deadlines at or before the clock
// belong to runs a pass left due (held for a retry, or of workflows the
// runtime does not serve): they are read past.
func (h *Harness) nextDeadline(target time.Time) (time.Time, bool) {
	h.t.Helper()
	now := h.Clock.Now()
	if !now.Before(target) {
		return time.Time{}, false
	}
	next, err := h.Store.RunNextDue(h.t.Context())
	if err != nil {
		h.t.Fatalf("runtimetest: reading the next deadline: %v", err)
	}
	if next.IsZero() || next.After(target) {
		return time.Time{}, false
	}
	if next.After(now) {
		return next.Time, true
	}
	due, err := h.Store.RunListDue(h.t.Context(), &store.RunListDueParams{Now: target, Limit: maxPassedOver})
	if err != nil {
		h.t.Fatalf("runtimetest: listing deadlines up to %s: %v", target, err)
	}
	for _, r := range due {
		if r.Until.After(now) {
			return r.Until.Time, true
		}
	}
	return time.Time{}, false
}

// maxPassedOver bounds the runs left due that nextDeadline reads past;
// beyond them Advance goes to the end of its span at once.
const maxPassedOver = 1000

// pass makes one scheduler pass at the clock's time and returns how many
// runs were due.
func (h *Harness) pass() int {
	h.t.Helper()
	n, err := h.sched.Pass(h.t.Context())
	if err != nil {
		h.t.Fatalf("runtimetest: scheduler pass: %v", err)
	}
	if st := h.sched.Stats(); st.RunsFailed > 0 {
		h.t.Fatalf("runtimetest: the scheduler failed to tick a due run: %v", st.Errors)
	}
	return n
}

// State returns a run's stored state.
func (h *Harness) State(runID string) *durable.RunState {
	h.t.Helper()
	st, err := h.Runtime.GetState(h.t.Context(), runID)
	if err != nil {
		h.t.Fatalf("runtimetest: loading %s: %v", runID, err)
	}
	return st
}

// RequireStatus fails the test unless the run has status want, and
// returns its state.
func (h *Harness) RequireStatus(runID string, want durable.RunStatus) *durable.RunState {
	h.t.Helper()
	st := h.State(runID)
	if st.Status != want {
		h.t.Fatalf("runtimetest: run %s of %s is %s (error %q), want %s", runID, st.WorkflowID, st.Status, st.Error, want)
	}
	return st
}

// Ledger returns a run's ledger as "node:kind:status" items, kind being
// the record's effect type, or "complete" for a record without effect.
func (h *Harness) Ledger(runID string) []string {
	h.t.Helper()
	recs, err := h.Runtime.GetLedger(h.t.Context(), runID)
	if err != nil {
		h.t.Fatalf("runtimetest: ledger of %s: %v", runID, err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		kind := "complete"
		if r.Effect != nil {
			kind = string(r.Effect.Type)
		}
		out[i] = r.NodeID + ":" + kind + ":" + string(r.Status)
	}
	return out
}
