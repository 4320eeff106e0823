package scheduler_test

// Model-based fuzz targets of the scheduler: the fuzzer's bytes decode
// into a short program of host operations (start runs of a few small
// workflows, move a fake clock, Pass / PollOnce, emit events, respond,
// cancel, pause, resume, restart) and the checker asserts, after every
// step, what must hold whatever the program:
//
//   - after a Pass (or PollOnce) at time T no run that is not paused still
//     waits on a deadline <= T, and the due index lists nothing at T;
//   - the due index agrees with the runs' own deadlines (store.Deadline);
//   - a wait is never released before its deadline, and the scheduler
//     never releases a wait that has none (ASK_USER, WAIT_EVENT without
//     timeout) — only Emit / Respond / Cancel / ResumeRun may;
//   - a WAIT_EVENT released by the scheduler resolves with
//     {"timed_out": true} at its result key;
//   - no run is left `running` after a Pass, a Recover, or a host call
//     that drives it;
//   - the ledger agrees with the status: exactly one terminal status
//     record, last, with the same status, for an ended run; none for a
//     live one;
//   - an ended run never changes again, no run is ever lost, and a
//     restart (new Runtime and Scheduler over the same store, Recover)
//     finds the same runs with the same statuses;
//   - no parent that is not paused waits on a child that has ended;
//   - the scheduler records no error and no failed run, and host errors
//     name what is wrong.
//
// FuzzSchedulerModelStores runs the same program on the in-memory store
// and on SQLite (reopened at each restart), and on PostgreSQL for some
// programs, and compares outcomes.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"go.uber.org/goleak"
)

// fzInt reads an integer var (0 when absent).
func fzInt(run *durable.RunState, k string) int64 {
	n, _ := runtime.AsInt(run.Vars[k])
	return n
}

func fzDone(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
	return runtime.Complete(map[string]any{"ok": true, "r": run.Vars["r"]}), nil
}

// fzWorkflows are the workflows of the programs:
//
//	fz_until:  WAIT_UNTIL now+d seconds, then complete
//	fz_event:  WAIT_EVENT global "e<k>", with timeout_s t when t >= 0
//	fz_ask:    ASK_USER, then complete
//	fz_parent: START_SUBWORKFLOW fz_until (d) async+wait, then complete
//	fz_done:   complete at once
func fzWorkflows() []*runtime.Workflow {
	node := func(eff func(run *durable.RunState, rc *runtime.RunContext) *durable.Effect) map[string]runtime.NodeFunc {
		return map[string]runtime.NodeFunc{
			"w": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(eff(run, rc), "done"), nil
			},
			"done": fzDone,
		}
	}
	return []*runtime.Workflow{
		{ID: "fz_until", Entry: "w", Nodes: node(func(run *durable.RunState, rc *runtime.RunContext) *durable.Effect {
			until := durable.FormatTime(rc.Now().Add(time.Duration(fzInt(run, "d")) * time.Second))
			return &durable.Effect{Type: durable.EffectWaitUntil, ResultKey: "r", Payload: map[string]any{"until": until}}
		})},
		{ID: "fz_event", Entry: "w", Nodes: node(func(run *durable.RunState, rc *runtime.RunContext) *durable.Effect {
			p := map[string]any{"name": fmt.Sprintf("e%d", fzInt(run, "k")), "scope": "global"}
			if t := fzInt(run, "t"); t >= 0 {
				p["timeout_s"] = t
			}
			return &durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "r", Payload: p}
		})},
		{ID: "fz_ask", Entry: "w", Nodes: node(func(run *durable.RunState, rc *runtime.RunContext) *durable.Effect {
			return &durable.Effect{Type: durable.EffectAskUser, ResultKey: "r", Payload: map[string]any{"prompt": "?"}}
		})},
		{ID: "fz_parent", Entry: "w", Nodes: node(func(run *durable.RunState, rc *runtime.RunContext) *durable.Effect {
			return &durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "r", Payload: map[string]any{
				"workflow_id": "fz_until", "async": true, "wait": true, "vars": map[string]any{"d": fzInt(run, "d")}}}
		})},
		{ID: "fz_done", Entry: "w", Nodes: map[string]runtime.NodeFunc{"w": fzDone}},
	}
}

var fzKinds = []string{"fz_until", "fz_event", "fz_ask", "fz_parent", "fz_done", "fz_event"}

// fzOp is one decoded operation.
type fzOp struct {
	code byte
	a, b byte
}

func (o fzOp) String() string { return fmt.Sprintf("{%d %d %d}", o.code%16, o.a, o.b) }

func fzDecode(data []byte) []fzOp {
	var ops []fzOp
	for i := 0; i+2 < len(data) && len(ops) < 40; i += 3 {
		ops = append(ops, fzOp{data[i], data[i+1], data[i+2]})
	}
	return ops
}

// fzHarness is one program's world: a store, the runtime and scheduler
// over it, the fake clock and what the checker remembers.
type fzHarness struct {
	t       testing.TB
	ctx     context.Context
	clk     *runtimetest.Clock
	st      store.Store
	reopen  func() store.Store // nil: restarts keep the store object
	rt      *runtime.Runtime
	s       *scheduler.Scheduler
	sch     *scheduler.Scheduled
	batch   int
	started []string // the runs the program started, in order
	ended   map[string]*durable.RunState
	// pending are runs an emit with NoDrive left running, for DriveSoon
	// and the next Pass.
	pending map[string]bool
	trace   []string
	// results are the outcomes of each step, for the differential target.
	results []string
	// loop: the scheduler's own loop runs (NewScheduled), and every step
	// waits for it to settle instead of calling Pass.
	loop bool
}

func (h *fzHarness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("%s\nprogram so far:\n  %s", fmt.Sprintf(format, args...), strings.Join(h.trace, "\n  "))
}

func (h *fzHarness) build() {
	reg, err := runtime.NewRegistry(fzWorkflows()...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.rt, err = runtime.New(runtime.Config{Store: h.st, Registry: reg, Clock: h.clk.Now})
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := scheduler.Config{Runtime: h.rt, Clock: h.clk.Now, BatchSize: h.batch, PollInterval: time.Second}
	if h.loop {
		cfg.PollInterval = 20 * time.Millisecond
		ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
		defer cancel()
		h.sch, err = scheduler.NewScheduled(ctx, h.rt, cfg)
		if err != nil {
			h.fail("NewScheduled: %v", err)
		}
		h.s = h.sch.Scheduler
		return
	}
	h.s, err = scheduler.New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sch = &scheduler.Scheduled{Runtime: h.rt, Scheduler: h.s}
}

// all returns every run of the store by id.
func (h *fzHarness) all() map[string]*durable.RunState {
	h.t.Helper()
	runs, err := h.st.RunList(h.ctx, &store.RunListParams{Limit: 100000})
	if err != nil {
		h.fail("listing runs: %v", err)
	}
	out := make(map[string]*durable.RunState, len(runs))
	for _, r := range runs {
		out[r.RunID] = r
	}
	return out
}

func fzWaitSig(r *durable.RunState) string {
	if r.Waiting == nil {
		return string(r.Status)
	}
	return fmt.Sprintf("%s/%s/%s/%s/%v", r.Status, r.Waiting.Reason, r.Waiting.WaitKey, r.Waiting.Until, runtime.IsPaused(r))
}

// check asserts the invariants after a step. kind is "pass" after Pass,
// "poll" after PollOnce, "recover" after a restart's Recover, "host"
// after any other call. before is the store before the step.
func (h *fzHarness) check(kind string, before map[string]*durable.RunState) map[string]*durable.RunState {
	h.t.Helper()
	now := h.clk.Now()
	after := h.all()
	for _, id := range h.started {
		if after[id] == nil {
			h.fail("run %s started by the program is lost", id)
		}
	}
	for id, r := range before {
		a := after[id]
		if a == nil {
			h.fail("run %s (%s) is lost", id, r.Status)
		}
		if r.Status.Terminal() && (a.Status != r.Status || a.Version != r.Version) {
			h.fail("ended run %s changed: %s v%d -> %s v%d", id, r.Status, r.Version, a.Status, a.Version)
		}
		if kind == "host" || kind == "race" || r.Status != durable.RunWaiting || runtime.IsPaused(r) || fzWaitSig(r) == fzWaitSig(a) {
			continue
		}
		// The scheduler moved this run out of its wait.
		w := r.Waiting
		switch {
		case w == nil:
		case w.Reason == durable.WaitSubworkflow:
			if c := after[runtime.WaitedChild(r)]; c != nil && !c.Status.Terminal() {
				h.fail("%s: parent %s released from its wait on child %s which is still %s", kind, id, c.RunID, c.Status)
			}
		case w.Until.IsZero():
			h.fail("%s: run %s released from a %s wait with no deadline (now %s)", kind, id, w.Reason, fzWaitSig(a))
		case now.Before(w.Until.Time):
			h.fail("%s at %s released run %s before its deadline %s", kind, durable.FormatTime(now), id, w.Until)
		case w.Reason == durable.WaitEvent && a.Status == durable.RunCompleted:
			if got, _ := a.Output["r"].(map[string]any); len(got) != 1 || got["timed_out"] != true {
				h.fail("run %s: WAIT_EVENT past its deadline resolved with %v, want {timed_out: true}", id, a.Output["r"])
			}
		}
	}
	// The due index agrees with the runs.
	due, err := h.st.RunListDue(h.ctx, &store.RunListDueParams{Now: now, Limit: 100000})
	if err != nil {
		h.fail("listing due runs: %v", err)
	}
	listed := map[string]bool{}
	for _, d := range due {
		listed[d.RunID] = true
		r := after[d.RunID]
		if r == nil {
			h.fail("due index lists unknown run %s", d.RunID)
		}
		if dl, ok := store.Deadline(r); !ok || !dl.Equal(d.Until.Time) || dl.After(now) {
			h.fail("due index lists %s until %s, but the run is %s", d.RunID, d.Until, fzWaitSig(r))
		}
	}
	for id, r := range after {
		if dl, ok := store.Deadline(r); ok && !dl.After(now) && !listed[id] {
			h.fail("run %s is due (%s <= %s) but not in the due index", id, dl, durable.FormatTime(now))
		}
		if kind == "pass" || kind == "poll" || kind == "race" {
			if dl, ok := store.Deadline(r); ok && !dl.After(now) {
				h.fail("after %s at %s run %s still waits on due deadline %s (%s)", kind, durable.FormatTime(now), id, dl, fzWaitSig(r))
			}
		}
		if r.Status == durable.RunRunning && !h.pending[id] {
			h.fail("after %s run %s is left running (paused %v)", kind, id, runtime.IsPaused(r))
		}
		if r.Status == durable.RunWaiting && r.Waiting != nil && r.Waiting.Reason == durable.WaitSubworkflow && !runtime.IsPaused(r) {
			if c := after[runtime.WaitedChild(r)]; c != nil && c.Status.Terminal() && !h.pending[c.RunID] {
				h.fail("after %s parent %s still waits on child %s which is %s", kind, id, c.RunID, c.Status)
			}
		}
		h.checkLedger(r)
		if r.Status.Terminal() {
			h.ended[id] = r
		}
	}
	for id, r := range h.ended {
		if a := after[id]; a == nil || a.Status != r.Status {
			h.fail("ended run %s lost or changed", id)
		}
	}
	if st := h.s.Stats(); len(st.Errors) > 0 || st.RunsFailed > 0 {
		h.fail("scheduler errors after %s: failed %d %q", kind, st.RunsFailed, st.Errors)
	}
	return after
}

// stop stops the scheduler; a Stop that does not return fails.
func (h *fzHarness) stop() {
	h.t.Helper()
	done := make(chan struct{})
	go func() { h.s.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		h.fail("Stop did not return in 20 s")
	}
	if h.s.Running() {
		h.fail("scheduler still running after Stop")
	}
	select {
	case <-h.s.Done():
	default:
		h.fail("Done not closed after Stop")
	}
}

// quiesce waits (real time) for the loop to settle: no run running, none
// due that is not paused, no parent left on an ended child.
func (h *fzHarness) quiesce() {
	h.t.Helper()
	h.s.Wake()
	deadline := time.Now().Add(10 * time.Second)
	for {
		why := ""
		now := h.clk.Now()
		all := h.all()
		for id, r := range all {
			if r.Status == durable.RunRunning {
				why = "run " + id + " running"
			}
			if dl, ok := store.Deadline(r); ok && !dl.After(now) {
				why = "run " + id + " due at " + durable.FormatTime(dl.Time)
			}
			if r.Status == durable.RunWaiting && r.Waiting != nil && r.Waiting.Reason == durable.WaitSubworkflow && !runtime.IsPaused(r) {
				if c := all[runtime.WaitedChild(r)]; c != nil && c.Status.Terminal() {
					why = "parent " + id + " waits on ended child"
				}
			}
		}
		if why == "" {
			// settled; let a drive in flight end before looking
			time.Sleep(time.Millisecond)
			if len(h.all()) == len(all) {
				return
			}
			continue
		}
		if time.Now().After(deadline) {
			h.fail("the scheduler's loop did not settle in 10 s: %s (stats %+v)", why, h.s.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *fzHarness) checkLedger(r *durable.RunState) {
	h.t.Helper()
	recs, err := h.st.LedgerList(h.ctx, &store.LedgerListParams{RunID: r.RunID})
	if err != nil {
		h.fail("ledger of %s: %v", r.RunID, err)
	}
	n := 0
	for _, rec := range recs {
		if runtime.IsTerminalStatusRecord(rec) {
			n++
		}
	}
	if !r.Status.Terminal() {
		if n != 0 {
			h.fail("live run %s (%s) has %d terminal status records", r.RunID, r.Status, n)
		}
		return
	}
	if n != 1 {
		h.fail("ended run %s (%s) has %d terminal status records", r.RunID, r.Status, n)
	}
	resumes := 0
	var payload any
	for _, rec := range recs {
		if rec.Effect != nil && rec.Effect.Type == durable.EffectResume {
			resumes++
			payload = rec.Effect.Payload["payload"]
		}
	}
	if r.Status == durable.RunCompleted {
		want := 1 // a wait answered (an event, a timeout, a reply, a child's end)
		if r.WorkflowID == "fz_until" || r.WorkflowID == "fz_done" {
			want = 0 // a WAIT_UNTIL released writes no resume record
		}
		if resumes != want {
			h.fail("completed %s run %s has %d resume records, want %d", r.WorkflowID, r.RunID, resumes, want)
		}
		if r.WorkflowID == "fz_event" {
			got, _ := r.Output["r"].(map[string]any)
			timedOut := len(got) == 1 && got["timed_out"] == true
			if !timedOut && got["name"] == nil && got["answer"] == nil { // an event, or a Respond
				h.fail("event run %s completed with %v: neither a timeout nor an event", r.RunID, r.Output["r"])
			}
			if pm, _ := payload.(map[string]any); timedOut != (len(pm) == 1 && pm["timed_out"] == true) {
				h.fail("event run %s: output %v but its resume record carries %v", r.RunID, got, payload)
			}
		}
	}
	last := recs[len(recs)-1]
	if !runtime.IsTerminalStatusRecord(last) {
		h.fail("ended run %s (%s): last ledger record is not its terminal status record", r.RunID, r.Status)
	}
	if p, _ := last.Effect.Payload["payload"].(map[string]any); p["text"] != string(r.Status) {
		h.fail("ended run %s is %s but its terminal record says %v", r.RunID, r.Status, p["text"])
	}
}

func (h *fzHarness) pick(b byte) string {
	if len(h.started) == 0 {
		return ""
	}
	return h.started[int(b)%len(h.started)]
}

func (h *fzHarness) record(format string, args ...any) {
	h.results = append(h.results, fmt.Sprintf(format, args...))
}

// step runs one operation.
func (h *fzHarness) step(op fzOp) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
	defer cancel()
	h.trace = append(h.trace, fmt.Sprintf("%v @%s", op, durable.FormatTime(h.clk.Now())))
	before := h.all()
	kind := "host"
	code := op.code % 16
	if h.loop && code >= 4 && code <= 6 {
		code = 200
	}
	switch code {
	case 0, 1: // start a run and tick it
		wf := fzKinds[int(op.a)%len(fzKinds)]
		vars := map[string]any{"d": int(op.b % 64), "k": int(op.b % 3), "t": int(op.b%40) - 8}
		if op.code%16 == 1 {
			// through the Scheduled wrapper
			wfs := fzWorkflows()
			var w *runtime.Workflow
			for _, x := range wfs {
				if x.ID == wf {
					w = x
				}
			}
			id, st, err := h.sch.Run(ctx, w, vars)
			if err != nil {
				h.fail("Scheduled.Run %s: %v", wf, err)
			}
			h.started = append(h.started, id)
			h.record("run %s -> %s", wf, st.Status)
			break
		}
		id, err := h.rt.Start(ctx, runtime.StartParams{WorkflowID: wf, Vars: vars})
		if err != nil {
			h.fail("Start %s: %v", wf, err)
		}
		h.started = append(h.started, id)
		st, err := h.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			h.fail("Tick %s: %v", wf, err)
		}
		h.record("start %s -> %s", wf, st.Status)
	case 2, 3: // move the clock: mostly forward, sometimes back
		d := time.Duration(int8(op.a)) * time.Second
		if op.b%4 == 0 {
			d = time.Duration(op.a) * time.Millisecond * 37
		}
		h.clk.Advance(d)
		h.record("clock %v", d)
	case 200: // loop mode: let the loop do what Pass would
		h.quiesce()
		kind = "pass"
		h.record("settled")
	case 4, 5: // Pass
		n, err := h.s.Pass(ctx)
		if err != nil {
			h.fail("Pass: %v", err)
		}
		h.pending = map[string]bool{}
		kind = "pass"
		h.record("pass %d", n)
	case 6: // PollOnce
		n, err := h.s.PollOnce(ctx)
		if err != nil {
			h.fail("PollOnce: %v", err)
		}
		kind = "poll"
		if n >= h.batch {
			kind = "poll-full" // a full batch may leave due runs behind
		}
		h.record("poll %d", n)
	case 7: // emit an event, driving or not
		ids, err := h.rt.EmitEvent(ctx, runtime.EmitParams{Name: fmt.Sprintf("e%d", op.a%3), Scope: "global",
			Payload: map[string]any{"v": int(op.b)}, NoDrive: op.b%2 == 1})
		if err != nil {
			h.fail("EmitEvent: %v", err)
		}
		if op.b%2 == 1 {
			for _, id := range ids {
				h.pending[id] = true
				// the parent of a listener ended by the resume is resumed
				// by the follow-ups of the next Pass
				if r := before[id]; r != nil && r.ParentRunID != "" {
					h.pending[r.ParentRunID] = true
				}
				h.s.DriveSoon(id)
			}
		}
		h.record("emit %d", len(ids))
	case 8: // respond through the Scheduled wrapper
		id := h.pick(op.a)
		if id == "" {
			return
		}
		r := before[id]
		st, err := h.sch.Respond(ctx, id, map[string]any{"answer": int(op.b)})
		h.checkRespond(r, st, err)
	case 9: // cancel
		id := h.pick(op.a)
		if id == "" {
			return
		}
		st, err := h.rt.Cancel(ctx, id, "fuzz")
		if err != nil {
			h.fail("Cancel %s: %v", id, err)
		}
		if before[id].Status.Terminal() {
			if st.Status != before[id].Status {
				h.fail("Cancel of ended run %s changed it to %s", id, st.Status)
			}
		} else if st.Status != durable.RunCancelled {
			h.fail("Cancel of %s run %s left it %s", before[id].Status, id, st.Status)
		}
		h.record("cancel -> %s", st.Status)
	case 10: // pause
		id := h.pick(op.a)
		if id == "" {
			return
		}
		st, err := h.rt.Pause(ctx, id, "fuzz")
		if err != nil {
			h.fail("Pause %s: %v", id, err)
		}
		h.record("pause -> %s %v", st.Status, runtime.IsPaused(st))
	case 11: // resume a pause
		id := h.pick(op.a)
		if id == "" {
			return
		}
		st, err := h.rt.ResumeRun(ctx, id)
		if err != nil {
			h.fail("ResumeRun %s: %v", id, err)
		}
		h.record("resumerun -> %s %v", st.Status, runtime.IsPaused(st))
	case 12: // restart
		h.restart(ctx)
		kind = "recover"
		h.pending = map[string]bool{}
	case 13: // find waiting runs
		reasons := []durable.WaitReason{"", durable.WaitUntil, durable.WaitEvent, durable.WaitUser, durable.WaitSubworkflow}
		reason := reasons[int(op.a)%len(reasons)]
		got, err := h.sch.FindWaitingRuns(ctx, reason, "", 0)
		if err != nil {
			h.fail("FindWaitingRuns: %v", err)
		}
		want := 0
		for _, r := range before {
			if r.Status == durable.RunWaiting && (reason == "" || r.Waiting != nil && r.Waiting.Reason == reason) {
				want++
			}
		}
		if len(got) != min(want, store.DefaultListLimit) {
			h.fail("FindWaitingRuns(%q) = %d runs, want %d", reason, len(got), want)
		}
		for _, r := range got {
			if r.Status != durable.RunWaiting || reason != "" && r.Waiting.Reason != reason {
				h.fail("FindWaitingRuns(%q) returned %s", reason, fzWaitSig(r))
			}
		}
		h.record("find %d", len(got))
	case 15: // race: the clock passes deadlines while an event is emitted
		h.clk.Advance(time.Duration(op.b) * time.Second)
		var wg sync.WaitGroup
		var perr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h.loop {
				h.s.Wake()
			} else {
				_, perr = h.s.Pass(ctx)
			}
		}()
		ids, err := h.rt.EmitEvent(ctx, runtime.EmitParams{Name: fmt.Sprintf("e%d", op.a%3), Scope: "global",
			Payload: map[string]any{"v": int(op.b)}})
		wg.Wait()
		if perr != nil {
			h.fail("Pass racing an emit: %v", perr)
		}
		if err != nil {
			h.fail("EmitEvent racing a Pass: %v", err)
		}
		if !h.loop {
			if _, err := h.s.Pass(ctx); err != nil {
				h.fail("Pass: %v", err)
			}
			h.pending = map[string]bool{}
		}
		kind = "race"
		_ = ids // which listeners the event reached depends on the race
		h.record("race")
	default: // tick a run directly
		id := h.pick(op.a)
		if id == "" {
			return
		}
		st, err := h.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			h.fail("Tick %s: %v", id, err)
		}
		h.record("tick -> %s", st.Status)
	}
	if ctx.Err() != nil {
		h.fail("step %v hung (context ended: %v)", op, ctx.Err())
	}
	if h.loop {
		h.quiesce()
		if code == 2 || code == 3 {
			kind = "loop" // only the clock moved: what the loop released is judged
		}
	}
	h.check(kind, before)
}

// checkRespond judges Scheduled.Respond's answer on run r (as it was).
func (h *fzHarness) checkRespond(r *durable.RunState, st *durable.RunState, err error) {
	h.t.Helper()
	answerable := r.Status == durable.RunWaiting && r.Waiting != nil && r.Waiting.WaitKey != "" && !runtime.IsPaused(r)
	if err == nil {
		if !answerable {
			h.fail("Respond to %s accepted", fzWaitSig(r))
		}
		if st == nil || st.Status == r.Status && fzWaitSig(st) == fzWaitSig(r) {
			h.fail("Respond to %s did not move the run", fzWaitSig(r))
		}
		h.record("respond -> %s", st.Status)
		return
	}
	msg := err.Error()
	if answerable && r.Waiting.Reason != durable.WaitSubworkflow {
		h.fail("Respond to %s refused: %v", fzWaitSig(r), err)
	}
	if !strings.Contains(msg, r.RunID) && !strings.Contains(msg, "paused") {
		h.fail("Respond error does not name the run %s: %q", r.RunID, msg)
	}
	if r.Status == durable.RunWaiting && r.Waiting != nil && r.Waiting.Reason == durable.WaitUntil && !runtime.IsPaused(r) &&
		!strings.Contains(msg, "waits for a time") {
		h.fail("Respond to a time wait: unclear error %q", msg)
	}
	var stale *runtime.StaleResumeError
	if r.Status.Terminal() && !errors.As(err, &stale) {
		h.fail("Respond to an ended run: %T %v, want StaleResumeError", err, err)
	}
	h.record("respond error")
}

// restart builds a new Runtime and Scheduler over the same store (SQLite:
// the file reopened), checks nothing was lost, and recovers.
func (h *fzHarness) restart(ctx context.Context) {
	h.t.Helper()
	h.stop()
	pre := h.all()
	if h.reopen != nil {
		h.st = h.reopen()
	}
	h.build()
	post := h.all()
	if len(pre) != len(post) {
		h.fail("restart: %d runs before, %d after", len(pre), len(post))
	}
	for id, r := range pre {
		p := post[id]
		if p == nil || fzWaitSig(p) != fzWaitSig(r) || p.Version != r.Version {
			h.fail("restart changed run %s: %s v%d -> %v", id, fzWaitSig(r), r.Version, p)
		}
	}
	if h.loop {
		h.quiesce() // Start recovered
		post = h.all()
		for id, r := range pre {
			if p := post[id]; p == nil || fzWaitSig(p) != fzWaitSig(r) || p.Version != r.Version {
				h.fail("restart's Start changed settled run %s: %s v%d -> %v", id, fzWaitSig(r), r.Version, p)
			}
		}
	} else if err := h.s.Recover(ctx); err != nil {
		h.fail("Recover: %v", err)
	}
	h.record("restart %d", len(post))
}

func fzRun(t testing.TB, data []byte, st store.Store, reopen func() store.Store, loop bool) *fzHarness {
	batch := 100
	if len(data) > 0 && data[0]%4 == 0 {
		batch = 1 + int(data[0]%3) // small batches: Pass must poll again
	}
	h := &fzHarness{t: t, ctx: context.Background(), clk: runtimetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		st: st, reopen: reopen, batch: batch, ended: map[string]*durable.RunState{}, pending: map[string]bool{}, loop: loop}
	h.build()
	defer func() {
		if loop && t.Failed() {
			h.s.Stop() // a failed program leaves no loop behind
		}
	}()
	if len(data) > 0 {
		data = data[1:]
	}
	h.check("host", map[string]*durable.RunState{})
	for _, op := range fzDecode(data) {
		h.step(op)
	}
	// Finally: a Pass far enough ahead releases every timer that is not
	// paused, and a restart loses nothing.
	h.step(fzOp{code: 2, a: 127, b: 1})
	h.step(fzOp{code: 2, a: 127, b: 1})
	h.step(fzOp{code: 4})
	h.step(fzOp{code: 12})
	h.stop()
	return h
}

func fzSeeds(f *testing.F) {
	P := func(ops ...byte) []byte { return append([]byte{1}, ops...) }
	f.Add(P())
	f.Add(P(0, 0, 10, 2, 5, 1, 4, 0, 0))                              // until 10s, clock +5, pass, ...
	f.Add(P(0, 0, 10, 2, 10, 1, 4, 0, 0, 6, 0, 0))                    // until, +10 exactly, pass, poll
	f.Add(P(0, 1, 20, 2, 30, 1, 4, 0, 0))                             // event with timeout 12 → timed out
	f.Add(P(0, 1, 20, 7, 2, 0, 2, 30, 1, 4, 0, 0))                    // event answered before its deadline
	f.Add(P(0, 1, 21, 7, 0, 1, 4, 0, 0))                              // emit NoDrive then pass
	f.Add(P(0, 2, 0, 8, 0, 3, 4, 0, 0))                               // ask, respond
	f.Add(P(0, 3, 5, 2, 6, 1, 4, 0, 0, 12, 0, 0))                     // parent+child, release, restart
	f.Add(P(0, 3, 5, 9, 0, 0, 2, 10, 1, 4, 0, 0))                     // cancel parent
	f.Add(P(0, 0, 5, 10, 0, 0, 2, 10, 1, 4, 0, 0, 11, 0, 0, 4, 0, 0)) // pause, due, resume
	f.Add(P(0, 0, 30, 2, 40, 1, 2, 200, 1, 4, 0, 0))                  // clock back
	f.Add(P(1, 0, 3, 1, 1, 9, 8, 0, 0, 8, 1, 0, 13, 0, 0))            // Scheduled.Run, respond to time wait
	f.Add(P(0, 4, 0, 0, 5, 8, 12, 0, 0, 14, 0, 0))                    // done, find, restart, tick
	f.Add([]byte{0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 2, 1, 0, 2, 30, 1, 4, 0, 0, 6, 0, 0})
	f.Add(P(0, 1, 20, 0, 1, 21, 15, 0, 12, 15, 1, 40))               // deadline and event race
	f.Add(P(0, 3, 0, 10, 0, 0, 2, 2, 1, 4, 0, 0, 11, 0, 0, 4, 0, 0)) // paused parent, child ends
}

// FuzzSchedulerModel runs programs on the in-memory store.
func FuzzSchedulerModel(f *testing.F) {
	fzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fzRun(t, data, memory.New(), nil, false)
	})
}

// FuzzSchedulerModelStores runs each program on the in-memory store and
// on SQLite (reopened at restarts) and compares their step outcomes; a
// program whose first byte has bit 0x40 set runs on PostgreSQL too (a
// schema of its own, reopened at restarts) when TEST_POSTGRES_URL names a
// server.
func FuzzSchedulerModelStores(f *testing.F) {
	fzSeeds(f)
	f.Add([]byte{0x41, 0, 1, 20, 0, 1, 21, 15, 0, 12, 15, 1, 40})                         // deadline and event race
	f.Add([]byte{0x40, 0, 3, 0, 10, 0, 0, 2, 2, 1, 4, 0, 0, 11, 0, 0, 4, 0, 0, 12, 0, 0}) // small batches, restart
	pgURL := os.Getenv("TEST_POSTGRES_URL")
	var schemas atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 46 {
			data = data[:46] // SQLite is slower: keep programs short
		}
		mem := fzRun(t, data, memory.New(), nil, false)
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		var db *sqlite.Store
		open := func() store.Store {
			if db != nil {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			db, err = sqlite.New(context.Background(), sqlite.Config{Path: path, Synchronous: "OFF"})
			if err != nil {
				t.Fatal(err)
			}
			return db
		}
		sql := fzRun(t, data, open(), open, false)
		defer db.Close()
		fzSameOutcomes(t, "sqlite", mem, sql)
		if pgURL == "" || len(data) == 0 || data[0]&0x40 == 0 {
			return
		}
		schema := fmt.Sprintf("agw_fzsched_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemas.Add(1))
		t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), pgURL, schema) })
		var pg *postgres.Store
		openPG := func() store.Store {
			if pg != nil {
				pg.Close()
			}
			var err error
			pg, err = postgres.New(context.Background(), postgres.Config{URL: pgURL, Schema: schema, MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			return pg
		}
		pgh := fzRun(t, data, openPG(), openPG, false)
		defer pg.Close()
		fzSameOutcomes(t, "postgres", mem, pgh)
	})
}

// fzSameOutcomes fails unless a program's run on the named store made the
// same steps, with the same outcomes, as its run on the in-memory store,
// and left every run it started in the same status and wait.
func fzSameOutcomes(t *testing.T, name string, mem, got *fzHarness) {
	t.Helper()
	if len(mem.results) != len(got.results) {
		t.Fatalf("memory made %d steps, %s %d", len(mem.results), name, len(got.results))
	}
	for i := range mem.results {
		if mem.results[i] != got.results[i] {
			t.Fatalf("step %d: memory %q, %s %q\nmemory: %q\n%s: %q", i, mem.results[i], name, got.results[i], mem.results, name, got.results)
		}
	}
	ma, ga := mem.all(), got.all()
	for i, id := range mem.started {
		m, s := ma[id], ga[got.started[i]]
		if m.Status != s.Status || (m.Waiting == nil) != (s.Waiting == nil) ||
			m.Waiting != nil && (m.Waiting.Reason != s.Waiting.Reason || !m.Waiting.Until.Equal(s.Waiting.Until.Time)) {
			t.Fatalf("run #%d: memory %s, %s %s", i, fzWaitSig(m), name, fzWaitSig(s))
		}
	}
}

// FuzzScheduledLoop runs programs with the scheduler's own loop running
// (NewScheduled): each step waits for the loop to settle (a run it never
// releases or leaves running fails after 10 s), the same invariants are
// checked, restarts stop the loop (Stop must return) and start a new one
// over the same store, and no goroutine outlives the program.
func FuzzScheduledLoop(f *testing.F) {
	fzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 46 {
			data = data[:46]
		}
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		fzRun(t, data, memory.New(), nil, true)
	})
}
