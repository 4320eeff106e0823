package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// StepGate is consulted before each step. Returning ErrStepGateClosed
// stops the tick cleanly at that boundary; another error stops it and is
// returned to the caller. Either way the run is checkpointed first. A run
// the call drives in turn (a child, a listener, a resumed parent) that
// the gate stops is left running at its checkpoint, not asked again in
// that call: a later tick or the scheduler's Recover continues it.
type StepGate func(ctx context.Context, run *durable.RunState, nodeID string) error

// TickOptions tunes one Tick.
type TickOptions struct {
	// MaxSteps caps the node executions of the ticked run in the whole
	// call, the steps it makes when the call resumes it (its async
	// child's end, an event a child emits) included; 0 means the
	// runtime's default (100). Other runs the call drives get the
	// runtime's budget each.
	MaxSteps int
	// StepGate, when set, is consulted at every step boundary.
	StepGate StepGate
}

// Tick advances a run until it waits, ends, or uses MaxSteps, and
// returns its state. A waiting run whose deadline has passed is released
// first. Runs started or resumed by this run's steps (child runs, event
// listeners, a parent waiting on this run) are driven too before Tick
// returns, each with the runtime's step budget (up to 100 ticks of it).
// Resumed by them, the run itself goes on within what is left of
// MaxSteps: once it is used the run is left running at its next node,
// the answer it was resumed with saved, for a later Tick.
func (r *Runtime) Tick(ctx context.Context, runID string, opts TickOptions) (*durable.RunState, error) {
	d := r.newDriver(opts.StepGate).withBudget(runID, r.steps(opts.MaxSteps))
	run, err := d.tick(ctx, runID, r.steps(opts.MaxSteps))
	if claimRefused(err, runID) {
		run, err = d.tickHeldDue(ctx, runID, r.steps(opts.MaxSteps), err)
	}
	if err != nil {
		d.keepQueued(ctx)
		return run, err
	}
	return d.finish(ctx, runID, run)
}

// tickHeldDue ticks a run another runner holds (cause is the refused
// claim) when it waits on a deadline that has passed, as claimHeld
// claims one: it waits a moment for the holder, then takes a run still
// waiting unchanged. A runner killed between committing a wait and
// releasing its claim would otherwise hold a due timer up for the
// claim's whole TTL. A run that changed meanwhile (the holder ticked it,
// the usual case when several schedulers poll one store) is left to it
// as soon as that shows: ErrRunClaimed, as before the wait. A run that
// has ended is returned as stored. Any other run held elsewhere gives
// cause at once.
func (d *driver) tickHeldDue(ctx context.Context, runID string, maxSteps int, cause error) (*durable.RunState, error) {
	seen, err := d.r.store.RunGet(ctx, runID)
	if err == nil && seen.Status.Terminal() {
		// Nothing is left to do on it, and no commit can change it: a
		// runner killed between its terminal commit and its release
		// would otherwise have Ticks refused for the claim's whole TTL.
		return seen, nil
	}
	if err != nil || seen.Status != durable.RunWaiting || seen.Waiting == nil || !seen.Waiting.ReleasedWhenDue() ||
		IsPaused(seen) || d.r.clock().Before(seen.Waiting.Until.Time) {
		return nil, cause
	}
	holder, _ := refusedBy(cause, runID)
	if holder == "" {
		return nil, cause // a store that does not name the holder: no takeover
	}
	for i := 0; ; i++ {
		if !d.r.idleWaiting(ctx, seen) {
			return nil, cause
		}
		if i == len(claimWaits) {
			break
		}
		if err := sleepContext(ctx, claimWaits[i]*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for run %s held by another runner: %w", runID, err)
		}
		run, err := d.tickIfUnchanged(ctx, runID, maxSteps, d.r.claim, seen.Version)
		h, refused := refusedBy(err, runID)
		if !refused {
			return run, err
		}
		if h != holder {
			// Another runner took the run over meanwhile and may be
			// working on it already: it is that runner's now.
			return nil, err
		}
		cause = err
	}
	d.r.logger.InfoContext(ctx, "taking a due run from the runner holding it, to tick it", "run_id", runID, "holder", holder)
	// The taking checks the version itself, and moves it on (its fence).
	return d.tickIfUnchanged(ctx, runID, maxSteps, func(ctx context.Context, runID string) (context.Context, *claimHold, error) {
		return d.r.claimTaking(ctx, runID, holder, seen.Version)
	}, -1)
}

func (r *Runtime) steps(n int) int {
	if n <= 0 {
		return r.maxSteps
	}
	return n
}

// tick runs one locked session over a run.
func (d *driver) tick(ctx context.Context, runID string, maxSteps int) (*durable.RunState, error) {
	return d.tickIfUnchanged(ctx, runID, maxSteps, d.r.claim, -1)
}

// tickIfUnchanged is tick, claiming the run with claim; with a version
// (not -1), a run that is at another version once claimed is not ticked
// but left as ErrRunClaimed (another runner worked on it meanwhile).
func (d *driver) tickIfUnchanged(ctx context.Context, runID string, maxSteps int, claim claimFunc, version int64) (*durable.RunState, error) {
	ctx, s, unlock, err := d.openWith(ctx, runID, claim)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if version >= 0 && s.run.Version != version {
		return nil, fmt.Errorf("run %s was worked on by another runner meanwhile: %w", runID, ErrRunClaimed)
	}
	err = s.tick(ctx, maxSteps)
	d.noteStop(s)
	if err != nil && !errors.Is(err, errStop) {
		return s.run, s.claimErr(err)
	}
	return s.run, nil
}

// claimMode is how open claims a run another runner may hold.
type claimMode int

const (
	claimNow      claimMode = iota // fail at once with ErrRunClaimed
	claimWait                      // wait a moment for the holder (claimWaiting)
	claimForce                     // take it from the holder (a cancel)
	claimTakeover                  // wait, then take a waiting run left unchanged (claimHeld)
)

// claimFunc claims a run for this runtime (see Runtime.claim).
type claimFunc func(ctx context.Context, runID string) (context.Context, *claimHold, error)

// claimFor is the claim function of mode.
func (d *driver) claimFor(mode claimMode) claimFunc {
	switch mode {
	case claimWait:
		return d.r.claimWaiting
	case claimForce:
		return d.r.claimForcing
	case claimTakeover:
		return d.r.claimHeld
	}
	return d.r.claim
}

// openWith locks a run (and claims it with claim, when the runtime
// claims runs) and loads it with its workflow. The returned context is the
// one to work on the run with: it is cancelled if the claim is lost.
func (d *driver) openWith(ctx context.Context, runID string, claim claimFunc) (context.Context, *session, func(), error) {
	return d.openRun(ctx, runID, claim, true)
}

// openRun is openWith; without needWorkflow a live run whose workflow is
// not registered is opened without it (s.wf nil), for work that runs no
// node (a resume committed without a tick).
func (d *driver) openRun(ctx context.Context, runID string, claim claimFunc, needWorkflow bool) (context.Context, *session, func(), error) {
	if d.r.holdsLock(ctx, runID) {
		return ctx, nil, nil, fmt.Errorf("run %s: %w", runID, ErrOwnRunLocked)
	}
	l, unlockRun, err := d.r.lock(ctx, runID)
	if err != nil {
		return ctx, nil, nil, err
	}
	held := d.r.withHeldLock(ctx, runID)
	work, hold, err := claim(held, runID)
	if err != nil {
		held.release()
		unlockRun()
		return ctx, nil, nil, err
	}
	unlock := func() {
		hold.release()
		held.release()
		unlockRun()
	}
	run, err := d.r.store.RunGet(work, runID)
	if err != nil {
		err = hold.or(err) // the claim went while loading: not a failure to load
		unlock()
		return ctx, nil, nil, fmt.Errorf("loading run %s: %w", runID, err)
	}
	d.touch(runID)
	s := &session{r: d.r, d: d, lock: l, claim: hold, run: run}
	held.sess.Store(s) // the run's limit reads see the session's run
	if run.Status.Terminal() {
		return work, s, unlock, nil
	}
	wf, ok := d.r.registry.Get(run.WorkflowID)
	if !ok && needWorkflow {
		unlock()
		return ctx, nil, nil, &RunNotServedError{RunID: runID, WorkflowID: run.WorkflowID}
	}
	s.wf = wf
	return work, s, unlock, nil
}

// tick is the body of Tick on a locked session.
func (s *session) tick(ctx context.Context, maxSteps int) error {
	run := s.run
	if run.Status.Terminal() || IsPaused(run) {
		return nil
	}
	if run.Status == durable.RunWaiting {
		w := run.Waiting
		if w == nil || !w.ReleasedWhenDue() || s.r.clock().Before(w.Until.Time) {
			return nil
		}
	}
	if ended, err := s.endUnderCancelledParent(ctx); ended || err != nil {
		return err
	}
	if run.Status == durable.RunWaiting {
		if err := s.releaseDue(ctx); err != nil {
			return err
		}
	}
	return s.steps(ctx, maxSteps)
}

// endUnderCancelledParent cancels a child run with a cancelled ancestor
// instead of letting it work: Cancel ends a run's descendants, but a
// child can come into being after it (started by a parent that another
// runner held and that had not yet learnt the cancel took it), and a kill
// inside a Cancel that decided the root first (CancelWith's IfUnchanged)
// leaves the whole tree under it live. So the chain is walked up to the
// root, through ancestors that are live or ended otherwise, as Cancel's
// own walk goes through ended runs. Only runs about to work pay the
// ancestors' reads.
func (s *session) endUnderCancelledParent(ctx context.Context) (bool, error) {
	pid := s.run.ParentRunID
	seen := map[string]bool{s.run.RunID: true}
	for pid != "" && !seen[pid] && len(seen) <= maxAncestors {
		seen[pid] = true
		anc, err := s.r.store.RunGet(ctx, pid)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("loading ancestor run %s of run %s: %w", pid, s.run.RunID, err)
		}
		if anc.Status == durable.RunCancelled {
			reason := cmp.Or(anc.Error, "Cancelled")
			if err := s.endOpenAttempt(ctx); err != nil {
				return true, err
			}
			if err := s.commitCancelled(ctx, cancelCause{reason: reason}); err != nil && !errors.Is(err, errStop) {
				return true, err
			}
			return true, nil
		}
		pid = anc.ParentRunID
	}
	return false, nil
}

// maxAncestors bounds the ancestor chain endUnderCancelledParent walks (a
// cycle of parent ids another writer made is cut by its seen set).
const maxAncestors = 256

// releaseDue continues a run whose wait deadline has passed: a WAIT_UNTIL
// continues at its resume node without writing its result key (as the
// Python kernel does); a WAIT_EVENT with a deadline resolves with
// {"timed_out": true}.
func (s *session) releaseDue(ctx context.Context) error {
	w := s.run.Waiting
	if w.Reason == durable.WaitUntil {
		s.run.Status = durable.RunRunning
		s.run.Waiting = nil
		if w.ResumeToNode != "" {
			s.run.CurrentNode = w.ResumeToNode
		}
		s.dirty = true
		return nil
	}
	return s.applyResume(ctx, w, map[string]any{"timed_out": true})
}

// steps executes up to maxSteps node steps (fewer when the run is the one
// its call was given a budget for and less of it is left), checkpointing
// at durable boundaries, and always leaves the run committed.
func (s *session) steps(ctx context.Context, maxSteps int) error {
	maxSteps = s.d.allowance(s.run.RunID, maxSteps)
	made := s.made
	defer func() { s.d.spend(s.run.RunID, s.made-made) }()
	for i := 0; i < maxSteps; i++ {
		if s.run.Status != durable.RunRunning {
			break
		}
		if s.signalled() {
			break
		}
		if ctx.Err() != nil {
			// The caller went away: keep what is done, start nothing more.
			if err := s.flush(ctx); err != nil && !errors.Is(err, errStop) {
				return err
			}
			return fmt.Errorf("tick of run %s interrupted: %w", s.run.RunID, context.Cause(ctx))
		}
		if err := s.step(ctx); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			if s.abandoned {
				// A node gave up on its cancelled context: what the session
				// did is not committed, the node's own writes among it; the
				// run replays from its last checkpoint.
				s.pending, s.dirty = s.pending[:0], false
				return err
			}
			if ferr := s.flush(ctx); ferr != nil && !errors.Is(ferr, errStop) && ferr != s.failedCommit {
				return errors.Join(err, ferr)
			}
			return err
		}
	}
	return s.flush(ctx)
}

// step executes one node.
func (s *session) step(ctx context.Context) error {
	run := s.run
	nodeID := run.CurrentNode
	// The gate first: a closed one stops the tick before anything of the
	// step happens, failing the run at an unknown node included.
	if gate := s.d.gate; gate != nil {
		if err := gate(ctx, run, nodeID); err != nil {
			if errors.Is(err, ErrStepGateClosed) {
				s.stoppedBy = stoppedGate
				return errStopAfterFlush(s, ctx)
			}
			return err
		}
	}
	s.made++
	node, ok := s.wf.Nodes[nodeID]
	if !ok {
		return s.fail(ctx, nodeID, fmt.Sprintf("unknown node %q in workflow %q", nodeID, s.wf.ID))
	}
	if s.rc == nil {
		s.rc = &RunContext{rt: s.r}
	}
	s.rc.run = run
	var plan StepPlan
	replay := false
	if !s.loadChecked {
		// Only a loaded run can hold a plan in flight.
		s.loadChecked = true
		plan, replay = takeEffectInFlight(run.Vars, nodeID, run.UpdatedAt)
	}
	if !replay {
		var err error
		before := kernelFieldsOf(run)
		nc := s.nodeCall(ctx)
		plan, err = callNode(nc, node, run, s.rc)
		nc.ended.Store(true)
		// Whatever the node did to the fields the kernel owns is undone
		// first: the session commits, locks and reports under them.
		changed := before.restore(run)
		if err != nil && ctx.Err() != nil {
			// Interrupted with its caller, not failed: the run stays at its
			// last checkpoint.
			s.abandoned = true
			return fmt.Errorf("node %q of run %s interrupted (%w): %w", nodeID, run.RunID, context.Cause(ctx), err)
		}
		if err != nil {
			return s.fail(ctx, nodeID, fmt.Sprintf("node %q failed: %v", nodeID, err))
		}
		if changed != "" {
			return s.fail(ctx, nodeID, fmt.Sprintf("node %q %s", nodeID, changed))
		}
	}
	if plan.NodeID == "" {
		plan.NodeID = nodeID
	}
	s.dirty = true
	switch {
	case plan.CompleteOutput != nil:
		s.pending = append(s.pending, s.completionRecord(plan.NodeID, plan.CompleteOutput))
		return s.finish(ctx, durable.RunCompleted, "", plan.CompleteOutput)
	case plan.Effect == nil:
		if plan.NextNode == "" {
			return s.fail(ctx, plan.NodeID, fmt.Sprintf(
				"node %q returned no next node, effect or output", plan.NodeID))
		}
		recordTransition(run.Vars, s.wf, plan.NodeID, plan.NextNode)
		run.CurrentNode = plan.NextNode
		return nil
	default:
		s.replayingInFlight = replay
		return s.effectStep(ctx, plan)
	}
}

func errStopAfterFlush(s *session, ctx context.Context) error {
	if err := s.flush(ctx); err != nil {
		return err
	}
	return errStop
}

// callNode runs a node function, turning a panic into an error so a bad
// node fails its run instead of the process.
// nodeCallCtx is the context a node function runs with. ended is set when
// the node returns: a goroutine the node left running then reads its run
// from the store (heldRun), not the working copy the next nodes change.
// Only Value is overridden, so the context's Done/Err contract is the
// tick's.
type nodeCallCtx struct {
	context.Context
	ended atomic.Bool
	lock  *heldLock    // the innermost lock held when the node was called
	outer *nodeCallCtx // the node call this one was made in, if any
}

type nodeCallKey struct{}

func (c *nodeCallCtx) Value(key any) any {
	if key == (nodeCallKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// nodeCall returns a fresh nodeCallCtx over ctx. They are carved from
// blocks of 16, so a chain of pure nodes costs one allocation per 16
// steps; a block stays alive while a goroutine holds one of its contexts.
func (s *session) nodeCall(ctx context.Context) *nodeCallCtx {
	if len(s.nodeCalls) == 0 {
		s.nodeCalls = make([]nodeCallCtx, 16)
	}
	nc := &s.nodeCalls[0]
	s.nodeCalls = s.nodeCalls[1:]
	nc.Context = ctx
	nc.lock, _ = ctx.Value(heldKey{}).(*heldLock)
	nc.outer, _ = ctx.Value(nodeCallKey{}).(*nodeCallCtx)
	return nc
}

func callNode(ctx context.Context, fn NodeFunc, run *durable.RunState, rc *RunContext) (plan StepPlan, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(ctx, run, rc)
}

// effectStep executes the effect of a plan and applies its outcome.
func (s *session) effectStep(ctx context.Context, plan StepPlan) error {
	run := s.run
	eff := plan.Effect
	if eff.Payload == nil {
		eff.Payload = map[string]any{}
	}
	s.inFlight, s.inFlightNode = plan, run.CurrentNode
	outcome, external, err := s.execute(ctx, plan)
	if err != nil {
		return err // a checkpoint on the way out records the plan in flight
	}
	s.inFlightNode = ""
	// execute may have checkpointed (external effects); what follows
	// changes the run again and must reach the next checkpoint.
	s.dirty = true
	switch outcome.Status {
	case OutcomeFailed:
		return s.finish(ctx, durable.RunFailed, outcome.Error, nil)
	case OutcomeWaiting:
		recordTransition(run.Vars, s.wf, plan.NodeID, plan.NextNode)
		run.Status = durable.RunWaiting
		run.Waiting = outcome.Wait
		if err := s.flush(ctx); err != nil {
			return err
		}
		return errStop
	}
	if plan.NextNode == "" {
		return s.finish(ctx, durable.RunCompleted, "", map[string]any{"success": true, "result": outcome.Result})
	}
	recordTransition(run.Vars, s.wf, plan.NodeID, plan.NextNode)
	run.CurrentNode = plan.NextNode
	if external && outcome.Status == OutcomeCompleted {
		// The completion of an effect that left the process becomes
		// durable at once and together with the move past its node: a
		// run replayed from this checkpoint never executes it again.
		return s.flush(ctx)
	}
	return nil
}
