package e2etest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// The concurrent scenario drives a pool of runs from several goroutines at
// once through every public entry point a host uses (start, tick, resume
// with the right and a wrong key, pause, resume-run, cancel, event
// delivery, scheduler polls), with the schedulers' loops running beside
// them and stopped midway, then brings every run to an end from one
// goroutine and checks what must hold whatever the interleaving was:
//   - no unfinished run is left under a cancelled parent;
//   - every run ends completed or cancelled (nothing fails, nothing is
//     left running or waiting);
//   - a wait is answered at most once: of all the Resume calls racing for
//     one ask, at most one succeeds, and a completed run carries exactly
//     the answer of that call;
//   - each ledger is well formed (the e2e invariants), ends with exactly
//     one terminal status record, matching the run's status, and holds a
//     resume record for every successful Resume and no other;
//   - every effect attempt has one end record, unless a later attempt
//     with its key replays it, and the out-of-process handler ran once
//     per attempt;
//   - a completed parent carries its child's end;
//   - the only errors a caller sees are stale resumes and paused runs
//     (and, with several runners, runs another runner holds).
const (
	concurrentWorkers = 4
	concurrentOps     = 120 // per worker
)

// concurrentKinds are the workflows the workers start, with the share of
// starts each gets.
var concurrentKinds = []string{"ask", "ask", "sleep", "listen", "timedlisten", "parent", "chain", "tool", "emit"}

type pool struct {
	mu       sync.Mutex
	ids      []string
	kind     map[string]string // run id → workflow
	answered map[string]string // run id → the text of its one successful resume
	errs     []string
}

func (p *pool) add(id, kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.kind[id]; ok {
		return
	}
	p.ids = append(p.ids, id)
	p.kind[id] = kind
}

// pick returns a run of the pool: half the time one of the last few
// started, which other workers are most likely working on right now.
func (p *pool) pick(r *rand.Rand) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) == 0 {
		return ""
	}
	if r.IntN(2) == 0 {
		return p.ids[len(p.ids)-1-r.IntN(min(len(p.ids), 3))]
	}
	return p.ids[r.IntN(len(p.ids))]
}

// answer records a successful resume; a second one for the same run (the
// workflows here ask once) is an error.
func (p *pool) answer(id, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.answered[id]; ok {
		p.errs = append(p.errs, fmt.Sprintf("run %s resumed twice: %q then %q", id, prev, text))
		return
	}
	p.answered[id] = text
}

func (p *pool) fail(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}

// expected reports whether err is one a racing caller must be ready for:
// a stale resume, a paused run, and with several runners a run another
// runner holds.
func (e *env) expected(err error) bool {
	var stale *runtime.StaleResumeError
	return err == nil || errors.As(err, &stale) || errors.Is(err, runtime.ErrRunPaused) ||
		len(e.rts) > 1 && errors.Is(err, runtime.ErrRunClaimed)
}

// concurrentRunners is the concurrent scenario with two runners (each a
// runtime and a scheduler, claiming runs) sharing the store, the workers
// calling either.
func concurrentRunners(e *env) {
	if !store.HasClaims(e.st) {
		e.t.Skip("the store has no claims: one runner per store")
	}
	concurrent(newRunners(e.t, e.st, 2))
}

func concurrent(e *env) {
	p := &pool{kind: map[string]string{}, answered: map[string]string{}}
	seed := uint64(time.Now().UnixNano())
	e.t.Logf("seed %d", seed)
	// The schedulers' loops run beside the workers (Recover at start,
	// then polls as deadlines pass on the moving clock).
	for _, sch := range e.schs {
		if err := sch.Start(e.ctx); err != nil {
			e.t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range concurrentWorkers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := range concurrentOps {
				e.randomOp(p, r, fmt.Sprintf("w%d-%d", w, i))
			}
		})
	}
	wg.Wait()
	for _, sch := range e.schs {
		sch.Stop()
	}
	for _, msg := range p.errs {
		e.t.Error(msg)
	}
	if e.t.Failed() {
		return
	}
	e.adoptChildren(p)
	e.checkCancelledTrees(p)
	e.finishAll(p)
	e.checkEnds(p)
	e.logEnds(p)
}

// logEnds logs how the runs ended, by workflow, and the interleavings the
// run exercised, so that a change that stops the scenario from reaching
// them shows in -v output.
func (e *env) logEnds(p *pool) {
	ends := map[string]int{}
	var cancelledAttempts, timedOut int
	for _, id := range p.ids {
		st, _ := e.rt.GetState(e.ctx, id)
		ends[p.kind[id]+" "+string(st.Status)]++
		if evt, _ := st.Output["evt"].(map[string]any); evt["timed_out"] == true {
			timedOut++
		}
		recs, _ := e.st.LedgerList(e.ctx, &store.LedgerListParams{RunID: id})
		for _, r := range recs {
			if r.Status == durable.StepCancelled {
				cancelledAttempts++
			}
		}
	}
	e.t.Logf("%d runs: %v; %d attempts interrupted, %d event waits timed out", len(p.ids), ends, cancelledAttempts, timedOut)
}

// randomOp is one worker step; tag names it in answers and errors.
func (e *env) randomOp(p *pool, r *rand.Rand, tag string) {
	ctx := e.ctx
	runner := r.IntN(len(e.rts))
	rt, sch := e.rts[runner], e.schs[runner]
	n := r.IntN(100)
	if n < 20 {
		kind := concurrentKinds[r.IntN(len(concurrentKinds))]
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: kind, SessionID: "sess"})
		if err != nil {
			p.fail("%s: start %s: %v", tag, kind, err)
			return
		}
		p.add(id, kind)
		if r.IntN(2) == 0 {
			e.checked(p, tag, "tick", id, func() error { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); return err })
		}
		return
	}
	id := p.pick(r)
	if id == "" {
		return
	}
	switch {
	case n < 35:
		e.checked(p, tag, "tick", id, func() error { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); return err })
	case n < 60:
		e.answerRun(rt, p, tag, id, true)
	case n < 65:
		e.answerRun(rt, p, tag, id, false)
	case n < 73:
		e.checked(p, tag, "pause", id, func() error { _, err := rt.Pause(ctx, id, tag); return err })
	case n < 81:
		e.checked(p, tag, "resume-run", id, func() error { _, err := rt.ResumeRun(ctx, id); return err })
	case n < 85:
		// A cancel takes the run from another runner holding it: it
		// never fails, and ends the run.
		if st, err := rt.Cancel(ctx, id, tag); err != nil || !st.Status.Terminal() {
			p.fail("%s: cancel %s: %v (status %v)", tag, id, err, statusOf(st))
		}
	case n < 93:
		e.checked(p, tag, "emit", "", func() error {
			_, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "sess", Payload: map[string]any{"n": tag}})
			return err
		})
	default:
		e.clk.Advance(40 * time.Second)
		e.checked(p, tag, "poll", "", func() error { _, err := sch.PollOnce(ctx); return err })
	}
}

func statusOf(st *durable.RunState) durable.RunStatus {
	if st == nil {
		return ""
	}
	return st.Status
}

// checked runs op and records an error no caller should see.
func (e *env) checked(p *pool, tag, op, id string, fn func() error) {
	if err := fn(); !e.expected(err) {
		p.fail("%s: %s %s: %v", tag, op, id, err)
	}
}

// answerRun answers the ask the run (or, for a parent, its child) waits
// on, with its key or a wrong one; a wrong key must always be refused.
func (e *env) answerRun(rt *runtime.Runtime, p *pool, tag, id string, rightKey bool) {
	st, err := rt.GetState(e.ctx, id)
	if err != nil {
		p.fail("%s: get %s: %v", tag, id, err)
		return
	}
	if st.Status == durable.RunWaiting && st.Waiting != nil && st.Waiting.Reason == durable.WaitSubworkflow {
		child, _ := st.Waiting.Details["sub_run_id"].(string)
		if child == "" {
			return
		}
		p.add(child, "ask")
		if st, err = rt.GetState(e.ctx, child); err != nil {
			p.fail("%s: get child %s: %v", tag, child, err)
			return
		}
		id = child
	}
	if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitUser || runtime.IsPaused(st) {
		return
	}
	key := st.Waiting.WaitKey
	if !rightKey {
		key = "user:" + id + ":elsewhere"
	}
	_, err = rt.Resume(e.ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"text": tag}})
	switch {
	case err == nil && !rightKey:
		p.fail("%s: resume of %s with wrong key %q succeeded", tag, id, key)
	case err == nil:
		p.answer(id, tag)
	case !e.expected(err):
		p.fail("%s: resume %s: %v", tag, id, err)
	}
}

// adoptChildren adds the child runs the parents started to the pool.
func (e *env) adoptChildren(p *pool) {
	for _, id := range append([]string(nil), p.ids...) {
		if p.kind[id] != "parent" {
			continue
		}
		kids, err := e.st.RunListChildren(e.ctx, id, "")
		if err != nil {
			e.t.Fatal(err)
		}
		for _, k := range kids {
			p.add(k.RunID, "ask")
		}
	}
}

// finishAll brings every run to an end from one goroutine: pauses lifted,
// asks answered, events sent, deadlines passed, running runs ticked.
func (e *env) finishAll(p *pool) {
	for round := 0; ; round++ {
		open := 0
		for i := 0; i < len(p.ids); i++ { // p.ids grows as children start
			id := p.ids[i]
			st, err := e.rt.GetState(e.ctx, id)
			if err != nil {
				e.t.Fatal(err)
			}
			if st.Status.Terminal() {
				continue
			}
			open++
			if round == 30 {
				msg := ""
				if st.Waiting != nil && st.Waiting.Reason == durable.WaitSubworkflow {
					child, _ := st.Waiting.Details["sub_run_id"].(string)
					cs, err := e.rt.GetState(e.ctx, child)
					if err != nil {
						msg = err.Error()
					} else {
						msg = fmt.Sprintf("child %s %s paused=%v, child ledger %s", child, cs.Status, runtime.IsPaused(cs), e.ledger(child))
					}
				}
				e.t.Fatalf("run %s (%s) still %s after 30 rounds: %+v; paused=%v %v; ledger %s; %s", id, p.kind[id], st.Status, st.Waiting, runtime.IsPaused(st), st.Vars["_runtime"], e.ledger(id), msg)
			}
			switch {
			case runtime.IsPaused(st):
				_, err = e.rt.ResumeRun(e.ctx, id)
			case st.Status == durable.RunRunning:
				_, err = e.rt.Tick(e.ctx, id, runtime.TickOptions{})
			case st.Waiting == nil:
				e.t.Fatalf("run %s waits without a wait state", id)
			case st.Waiting.Reason == durable.WaitUser:
				_, err = e.rt.Resume(e.ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
					Payload: map[string]any{"text": "final-" + id}})
				if err == nil {
					p.answer(id, "final-"+id)
				}
			case st.Waiting.Reason == durable.WaitEvent:
				_, err = e.rt.EmitEvent(e.ctx, runtime.EmitParams{Name: "go", SessionID: "sess", Payload: map[string]any{"n": "final"}})
			case st.Waiting.Reason == durable.WaitUntil:
				e.clk.Advance(2 * time.Minute)
				_, err = e.sch.PollOnce(e.ctx)
			case st.Waiting.Reason == durable.WaitSubworkflow:
				// Left to its child's end; the child may have started after
				// the pool adopted the children.
				child, _ := st.Waiting.Details["sub_run_id"].(string)
				p.add(child, "ask")
			}
			if err != nil {
				e.t.Fatalf("finishing run %s (%s): %v", id, p.kind[id], err)
			}
		}
		if open == 0 {
			break
		}
	}
	for _, msg := range p.errs {
		e.t.Error(msg)
	}
}

// checkEnds checks the end state and ledger of every run.
func (e *env) checkEnds(p *pool) {
	for _, sch := range e.schs {
		if s := sch.Stats(); s.RunsFailed != 0 {
			e.t.Errorf("scheduler ticks failed: %d: %v", s.RunsFailed, s.Errors)
		}
	}
	for _, id := range p.ids {
		st, err := e.rt.GetState(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		kind := p.kind[id]
		if st.Status != durable.RunCompleted && st.Status != durable.RunCancelled {
			e.t.Errorf("run %s (%s) ended %s: %s", id, kind, st.Status, st.Error)
			continue
		}
		e.ledger(id) // the per-record invariants
		recs, err := e.st.LedgerList(e.ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			e.t.Fatal(err)
		}
		e.checkAttempts(id, st, recs)
		statusEvents, resumes := 0, 0
		for _, r := range recs {
			if r.Effect == nil {
				continue
			}
			if r.Effect.Type == durable.EffectEmitEvent && r.Effect.Payload["name"] == "abstract.status" {
				statusEvents++
			}
			if r.Effect.Type == durable.EffectResume && r.NodeID == "ask" {
				resumes++
			}
		}
		last := recs[len(recs)-1]
		if statusEvents != 1 || last.Effect == nil || last.Effect.Payload["name"] != "abstract.status" {
			e.t.Errorf("run %s (%s, %s): %d status records, the last record is %s %v", id, kind, st.Status, statusEvents, last.NodeID, last.Effect)
		} else if text, _ := last.Effect.Payload["payload"].(map[string]any)["text"].(string); text != string(st.Status) {
			e.t.Errorf("run %s is %s but its status record says %q", id, st.Status, text)
		}
		answer, answered := p.answered[id]
		if kind == "ask" && resumes != map[bool]int{true: 1, false: 0}[answered] {
			e.t.Errorf("run %s: %d resume records, answered=%v", id, resumes, answered)
		}
		if st.Status != durable.RunCompleted {
			continue
		}
		switch kind {
		case "ask":
			got, _ := st.Output["answer"].(map[string]any)
			if !answered || got["text"] != answer {
				e.t.Errorf("run %s completed with answer %v; the one successful resume gave %q (answered=%v)", id, got, answer, answered)
			}
		case "parent":
			e.checkParent(p, id, st)
		case "listen":
			evt, _ := st.Output["payload"].(map[string]any)
			if _, ok := evt["n"]; !ok {
				e.t.Errorf("listener %s completed without the event payload: %v", id, st.Output)
			}
		case "timedlisten":
			evt, _ := st.Output["evt"].(map[string]any)
			payload, _ := evt["payload"].(map[string]any)
			if _, ok := payload["n"]; !ok && evt["timed_out"] != true {
				e.t.Errorf("timed listener %s completed with neither the event nor a time-out: %v", id, st.Output)
			}
		case "tool":
			res, _ := st.Output["res"].(map[string]any)
			if res["ok"] != true {
				e.t.Errorf("tool run %s completed with %v", id, st.Output)
			}
		}
	}
}

// checkParent checks that a completed parent carries what its child ended
// with: its answer, or its cancellation.
func (e *env) checkParent(p *pool, id string, st *durable.RunState) {
	child, _ := st.Output["child"].(map[string]any)
	sub, _ := child["sub_run_id"].(string)
	out, _ := child["output"].(map[string]any)
	cs, err := e.rt.GetState(e.ctx, sub)
	if err != nil {
		e.t.Errorf("parent %s completed with %v; its child: %v", id, st.Output, err)
		return
	}
	if cs.Status == durable.RunCancelled {
		if out["status"] != "cancelled" {
			e.t.Errorf("parent %s completed with %v; its child %s was cancelled", id, st.Output, sub)
		}
		return
	}
	ans, _ := out["answer"].(map[string]any)
	if cs.Status != durable.RunCompleted || ans["text"] != p.answered[sub] {
		e.t.Errorf("parent %s completed with %v; its child %s is %s, answered %q", id, st.Output, sub, cs.Status, p.answered[sub])
	}
}

// checkAttempts checks a terminal run's effect attempts: each STARTED
// record has exactly one end record, except an attempt interrupted when
// the schedulers stopped, which a later attempt with the same key
// replays; and the "slow" handler ran once per attempt (no retries are
// configured, so nothing else may run it again), or not at all for an
// attempt a cancel requested before it started ended.
func (e *env) checkAttempts(id string, st *durable.RunState, recs []*durable.StepRecord) {
	ends := map[string]int{}
	cancelledIDs := map[string]bool{}
	var started []*durable.StepRecord
	for _, r := range recs {
		switch {
		case r.Status == durable.StepStarted:
			started = append(started, r)
		case r.Effect != nil && r.Effect.Type != durable.EffectResume:
			ends[r.StepID]++
			if r.Status == durable.StepCancelled {
				cancelledIDs[r.StepID] = true
			}
		}
	}
	attempts := map[string]int{}  // slow attempts by key
	cancelled := map[string]int{} // of which ended cancelled
	for i, s := range started {
		replayed := slices.ContainsFunc(started[i+1:], func(l *durable.StepRecord) bool { return l.IdempotencyKey == s.IdempotencyKey })
		if n := ends[s.StepID]; n > 1 || n == 0 && !replayed {
			e.t.Errorf("run %s (%s): attempt %s of %s has %d end records; ledger: %s", id, st.Status, s.StepID, s.Effect.Type, n, e.ledger(id))
		}
		if s.Effect.Type == "slow" {
			attempts[s.IdempotencyKey]++
			if cancelledIDs[s.StepID] {
				cancelled[s.IdempotencyKey]++
			}
		}
	}
	for key, n := range attempts {
		e.callsMu.Lock()
		calls := e.calls[key]
		e.callsMu.Unlock()
		if calls > n || calls < n-cancelled[key] {
			e.t.Errorf("run %s: the slow handler ran %d times for key %s, in %d attempts; ledger: %s", id, calls, key, n, e.ledger(id))
		}
	}
}

// checkCancelledTrees checks that no run outlives a cancelled parent:
// Cancel ends the run and its unfinished descendants, including a child
// the parent was starting while the cancel came in.
func (e *env) checkCancelledTrees(p *pool) {
	for _, id := range p.ids {
		if p.kind[id] != "parent" {
			continue
		}
		st, err := e.rt.GetState(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if st.Status != durable.RunCancelled {
			continue
		}
		kids, err := e.st.RunListChildren(e.ctx, id, "")
		if err != nil {
			e.t.Fatal(err)
		}
		for _, k := range kids {
			if !k.Status.Terminal() {
				e.t.Errorf("child %s (%s at %s) of cancelled parent %s is %s; child ledger: %s; parent ledger: %s",
					k.RunID, k.WorkflowID, k.CurrentNode, id, k.Status, e.ledger(k.RunID), e.ledger(id))
			}
		}
	}
}
