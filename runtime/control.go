package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// hostUpdate is a host's read-modify-save of a run under its mutation
// lock. mutate returns whether it changed anything and the records to
// append; it may be called again on a fresh load (after a conflict), so
// it depends only on the run it is given. touch controls whether
// updated_at moves.
//
// With several runners it claims the run too, waiting a moment for one
// that works on it: a host's commit made beside a tick would make the
// tick's commit conflict and drop what the tick did after its last
// checkpoint, an effect's completion included (the effect would then run
// again when the run continues).
func (r *Runtime) hostUpdate(ctx context.Context, runID string, touch bool,
	mutate func(run *durable.RunState) (bool, []*durable.StepRecord, error)) error {
	return r.hostUpdateThen(ctx, runID, touch, nil, mutate)
}

// hostUpdateThen is hostUpdate calling underLock, when set, before it
// releases the run's lock, whatever the outcome (also when it gave up
// waiting for the lock).
func (r *Runtime) hostUpdateThen(ctx context.Context, runID string, touch bool, underLock func(),
	mutate func(run *durable.RunState) (bool, []*durable.StepRecord, error)) error {
	if r.holdsLock(ctx, runID) {
		if underLock != nil {
			underLock()
		}
		return fmt.Errorf("run %s: %w", runID, ErrOwnRunLocked)
	}
	_, unlock, err := r.lock(ctx, runID)
	if err != nil {
		if underLock != nil {
			underLock()
		}
		return err
	}
	defer unlock()
	if underLock != nil {
		defer underLock()
	}
	held := r.withHeldLock(ctx, runID)
	defer held.release()
	ctx = held
	work, hold, err := r.claimHeld(ctx, runID)
	if err != nil {
		return err
	}
	defer hold.release()
	for attempt := 1; ; attempt++ {
		run, err := r.store.RunGet(work, runID)
		if err != nil {
			return fmt.Errorf("loading run %s: %w", runID, hold.or(err))
		}
		changed, recs, err := mutate(run)
		if err != nil || !changed {
			return err
		}
		if touch {
			touchUpdated(run, r.now())
		}
		if err := hold.lost(); err != nil {
			return err
		}
		err = r.store.RunCommit(work, &store.CommitParams{Run: run, Records: recs})
		if errors.Is(err, store.ErrConflict) && attempt < hostUpdateAttempts {
			// A cancel through another runner took the run and committed
			// first (this runner has not learnt it yet): the update is
			// applied to what the run is now, which may make it a no-op.
			// Another commit of a live run may be the fence of a runner
			// that took the idle run from this one (claimHeld), learnt
			// otherwise only at the next renewal: renew now, so that the
			// update ends with ErrRunClaimed instead of committing over
			// the taker's work.
			if now, gerr := r.store.RunGet(work, runID); gerr == nil && !now.Status.Terminal() {
				hold.renewNow()
			}
			if hold.lost() == nil {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("saving run %s: %w", runID, hold.or(err))
		}
		return nil
	}
}

// claimHeld claims a run another runner may hold, for a resume, an event
// delivery or a host update: it waits a moment for the holder
// (claimWaiting), then takes a run still waiting unchanged (same key,
// same version as read first) from that holder only (not from a runner
// that took it over first), as Cancel takes a run. A runner killed between
// committing a wait and releasing its claim leaves the run held for the
// claim's whole TTL: an event for it meanwhile would be lost, an answer or
// a pause refused, a parent's resume delayed. The taking is fenced
// (claimTaking): a live holder that had not committed in that time has
// its next commit refused before it starts an effect, and one that did
// commit keeps the run. A running run is never taken: its holder may
// be working on it. Nor is a run whose holder changed while it waited:
// another runner took it over first, and may be working on it already
// (its first commit not made yet).
func (r *Runtime) claimHeld(ctx context.Context, runID string) (context.Context, *claimHold, error) {
	work, hold, err := r.claim(ctx, runID)
	first, refused := refusedBy(err, runID)
	if !refused {
		return work, hold, err
	}
	seen, gerr := r.store.RunGet(ctx, runID)
	work, hold, err = r.claimWaiting(ctx, runID)
	holder, refused := refusedBy(err, runID)
	if !refused || gerr != nil || first == "" || holder != first || !r.idleWaiting(ctx, seen) {
		return work, hold, err
	}
	r.logger.InfoContext(ctx, "taking a waiting run from the runner holding it, for a host update", "run_id", runID, "holder", holder)
	return r.claimTaking(ctx, runID, holder, seen.Version)
}

// hostUpdateAttempts bounds hostUpdate's read-modify-commit rounds.
const hostUpdateAttempts = 5

// Pause pauses a run durably: ticks return at once, resumes fail with
// ErrRunPaused, the scheduler and event delivery skip it. A running run
// enters a synthetic wait (reason user, key pause:<run_id>). Pausing a
// terminal run, a paused run, or a run waiting for a person is a no-op.
// A tick in progress stops at its next step boundary.
func (r *Runtime) Pause(ctx context.Context, runID, reason string) (*durable.RunState, error) {
	// The request stops a tick in progress (which holds the run's lock)
	// at its next step boundary. It is withdrawn under the lock, with the
	// pause committed (or found a no-op): a tick that takes the lock
	// later must not stop on it, or a resume right after the pause would
	// leave the run running with nothing to drive it.
	if r.holdsLock(ctx, runID) {
		// Its own node or handler: refused before any request is made,
		// which this very tick would stop on.
		return nil, fmt.Errorf("run %s: %w", runID, ErrOwnRunLocked)
	}
	withdraw := r.requestStop(runID, cancelCause{})
	err := r.hostUpdateThen(ctx, runID, true, withdraw, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		if run.Status.Terminal() || IsPaused(run) {
			return false, nil, nil
		}
		// A person's question is not paused (spec §2.7); a pause wait
		// whose flag another writer dropped is, so it can be lifted.
		if run.Status == durable.RunWaiting && run.Waiting != nil && run.Waiting.Reason == durable.WaitUser && !isPauseWait(run) {
			return false, nil, nil
		}
		ctl := namespace(namespace(run.Vars, "_runtime"), "control")
		ctl["paused"] = true
		ctl["paused_at"] = r.now().String()
		if reason := pyval.Strip(reason); reason != "" {
			ctl["pause_reason"] = reason
		}
		if run.Status == durable.RunRunning {
			run.Status = durable.RunWaiting
			run.Waiting = &durable.WaitState{
				Reason: durable.WaitUser, WaitKey: "pause:" + run.RunID, ResumeToNode: run.CurrentNode,
				Prompt: "Paused", Details: map[string]any{"kind": "pause"},
			}
		}
		return true, nil, nil
	})
	if err != nil {
		return nil, err
	}
	return r.GetState(ctx, runID)
}

// ResumeRun lifts a host pause: a run in its pause wait continues where it
// stopped (and is driven by a Tick with the runtime's step budget), other
// waits stay as they are. A run waiting on
// a child that ended during the pause (the child's end skipped it then)
// receives the child's end now. A run whose workflow this runtime does not
// serve (runners sharing a store may each serve some workflows) has the
// lift committed without a tick: it is left running for a runtime that
// serves it (its scheduler's Recover drives it), as EmitEvent and a
// child's end leave such a run.
func (r *Runtime) ResumeRun(ctx context.Context, runID string) (*durable.RunState, error) {
	return r.ResumeRunWith(ctx, runID, ResumeRunOptions{})
}

// ResumeRunOptions are the options of ResumeRunWith.
type ResumeRunOptions struct {
	// MaxSteps caps the tick that drives a run the lift set running: 0
	// means the runtime's budget; a negative value commits the lift
	// without ticking, leaving the run running for the host to drive (a
	// gateway's command loop hands it to its runner, Scheduler.DriveSoon,
	// instead of running its next steps, LLM calls included, itself). A
	// run waiting on a child that ended during the pause then receives
	// the child's end from the runtime's retries (RetryFollowUps, which a
	// scheduler's pass runs), not in the call.
	MaxSteps int
}

// ResumeRunWith is ResumeRun with options.
func (r *Runtime) ResumeRunWith(ctx context.Context, runID string, opts ResumeRunOptions) (*durable.RunState, error) {
	resumed := false
	var child, workflowID string // the child the run waits on, if any; the run's workflow
	err := r.hostUpdate(ctx, runID, true, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		resumed, child, workflowID = false, "", run.WorkflowID
		if run.Status.Terminal() || !IsPaused(run) {
			return false, nil, nil
		}
		child = WaitedChild(run)
		ctl := controlOf(run.Vars)
		delete(ctl, "paused")
		delete(ctl, "pause_reason")
		ctl["resumed_at"] = r.now().String()
		if isPauseWait(run) {
			run.Status = durable.RunRunning
			if run.Waiting.ResumeToNode != "" {
				run.CurrentNode = run.Waiting.ResumeToNode
			}
			run.Waiting = nil
			resumed = true
		} else if run.Status == durable.RunRunning {
			// Paused while running (its vars said so at Start): no tick
			// moved it while paused, nor would a poll now.
			resumed = true
		}
		return true, nil, nil
	})
	if err != nil {
		return nil, err
	}
	if resumed {
		if _, served := r.registry.Get(workflowID); !served {
			// A tick here would fail for want of the workflow, and a
			// follow-up kept for it would fail at every retry for as
			// long as the run lives.
			r.logger.InfoContext(ctx, "pause lifted on a run of a workflow this runtime does not serve; "+
				"left running for a runtime that serves it", "run_id", runID, "workflow_id", workflowID)
			return r.GetState(ctx, runID)
		}
		if opts.MaxSteps < 0 {
			return r.GetState(ctx, runID)
		}
		st, err := r.Tick(ctx, runID, TickOptions{MaxSteps: opts.MaxSteps})
		if err != nil {
			// The lift is saved and the run is running, but undriven: the
			// holder of a refused claim may only have read or updated it
			// (a limits update), and after an interruption or a store
			// error a second ResumeRun finds nothing paused. Keep the
			// drive for RetryFollowUps (the scheduler's loop).
			r.retryLater(ctx, followUp{kind: followTick, runID: runID}, false)
			if errors.Is(err, ErrRunClaimed) {
				return r.GetState(ctx, runID)
			}
		}
		return st, err
	}
	if child != "" && opts.MaxSteps < 0 {
		// The child's end resumes the parent and ticks it: left to the
		// runtime's retries (RetryFollowUps, a scheduler's pass), as a
		// caller that drives nothing asks. A child still running makes
		// that a no-op.
		r.retryLater(ctx, followUp{kind: followParentResume, runID: child}, false)
		return r.GetState(ctx, runID)
	}
	if child != "" {
		// A parent another runner holds is resumed by it or by Recover.
		if err := r.NotifyChildEnded(ctx, child); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, ErrRunClaimed) {
			return nil, fmt.Errorf("resume-run %s: handing it the end of child %s: %w", runID, child, err)
		}
	}
	return r.GetState(ctx, runID)
}

// Cancel cancels a run and its unfinished descendants: the context of any
// effect in flight is cancelled (its attempt is recorded "cancelled" and
// never retried), then each run is saved as cancelled with error reason
// (default "Cancelled") and its terminal status event, descendants before
// their ancestors. Terminal runs are left unchanged. It returns the run's
// state.
//
// A run whose effect the cancel interrupted is committed cancelled by its
// own tick, together with the attempt's cancelled end, as soon as the
// handler returns: an error from a Cancel that gave up waiting for that
// tick (its context ended) does not mean the run was not cancelled; read
// its state. A call from a node or handler of a run in the tree (its
// own, or a descendant cancelling an ancestor) is refused with
// ErrOwnRunLocked before anything is stopped.
//
// With claims, a run another runner holds is taken from it (a forced
// claim) and kept until its cancelled commit: that runner may run its
// effect until its next renewal. A call that fails after taking a run
// leaves its claim to expire (Claims.TTL) rather than releasing it, so
// that no runner, this one included, ticks the run meanwhile; a Cancel
// made again takes it back.
//
// Each run's cancelled commit records the run the call was aimed at and
// the reason (vars._runtime.cancelled_with). A call stopped midway (its
// process killed) leaves a parent in the tree waiting on a cancelled
// child: whoever hands the parent the child's end (NotifyChildEnded, the
// scheduler's Recover, a sync child's replay) cancels the parent instead,
// with the same reason, and so on up to the run the call was aimed at.
// A parent outside the tree receives the child's cancelled end as before.
func (r *Runtime) Cancel(ctx context.Context, runID, reason string) (*durable.RunState, error) {
	return r.CancelWith(ctx, runID, CancelOptions{Reason: reason})
}

// CancelOptions are the options of CancelWith.
type CancelOptions struct {
	// Reason is the cancelled runs' error; "" means "Cancelled".
	Reason string
	// IfUnchanged, when set, makes the cancel conditional: the run is
	// cancelled only if it is still at the version it had when
	// IfUnchanged was read (RunState.Version), and ErrRunChanged is
	// returned, with nothing cancelled, if it is not. The run is decided
	// first, under its lock (and claim) and by its versioned commit, so
	// a change made meanwhile, in this process or another, wins over the
	// cancel: an event that resumed the run, a tick that moved it on. No
	// effect of it is interrupted, since a run with a tick in progress has
	// changed by the time the cancel gets its lock. With claims, a run
	// another runner is working on is ErrRunChanged too (wrapping
	// ErrRunClaimed); one left waiting by a runner that died is taken
	// over, as a resume takes it. Only the run's own changes count: its
	// descendants are cancelled after it, unconditionally, as by Cancel,
	// whatever they did since the read (an event resuming a sync child
	// the run waits on does not change the run until the child ends). An
	// error once the run is cancelled (a descendant that could not be)
	// leaves descendants live under it: they cancel themselves when next
	// ticked, resumed or sent an event, as after a kill inside Cancel.
	IfUnchanged *durable.RunState
}

// ErrRunChanged reports a run another writer changed under the call: a
// conditional CancelWith (CancelOptions.IfUnchanged) whose run changed
// since it was read, which cancelled nothing, or an ApplyEffect whose
// run another writer ended or paused during the effect: the result is not
// in the run, but the attempt's end is in the ledger of a run left
// paused, so ApplyEffect again under the same key writes the result
// without running the effect a second time.
var ErrRunChanged = errors.New("run changed since it was read")

// CancelWith is Cancel with options: CancelOptions.IfUnchanged cancels
// a run only if no one changed it since the caller read it (a host
// stopping a listener it saw idle, which an event may have resumed since).
func (r *Runtime) CancelWith(ctx context.Context, runID string, opts CancelOptions) (*durable.RunState, error) {
	reason := opts.Reason
	if r.holdsLock(ctx, runID) {
		// Its own node or handler (or a sync child's, under its parent's
		// tick): refused before any stop request, which would cancel the
		// caller's own effect.
		return nil, fmt.Errorf("run %s: %w", runID, ErrOwnRunLocked)
	}
	if reason == "" {
		reason = "Cancelled"
	}
	c := newCanceller(r.newDriver(nil), cancelCause{reason: reason, root: runID})
	if opts.IfUnchanged != nil {
		v := opts.IfUnchanged.Version
		c.rootAt = &v
	}
	defer c.release()
	if err := c.tree(ctx, runID); err != nil {
		c.d.keepQueued(ctx)
		return nil, err
	}
	// The runs are cancelled: the requests go before the follow-ups, so
	// that a sync parent waiting on them (awaitStopRequests) is not kept
	// waiting on follow-ups that may need its lock.
	c.release()
	c.d.drain(ctx) // a parent outside the cancelled tree learns its child ended
	return r.GetState(ctx, runID)
}

// canceller is one Cancel call, or the part of one a kill left undone
// (cancelTree).
type canceller struct {
	r         *Runtime
	cause     cancelCause
	d         *driver
	seen      map[string]bool // runs taken into the cancel
	walked    map[string]bool // ended runs whose children were listed
	withdraws []func()        // of the stop requests made, run at the end
	// rootAt, when set, is the version the tree's root must still be at:
	// the root is cancelled first, conditionally (cancelRootAt).
	rootAt *int64
}

func newCanceller(d *driver, cause cancelCause) *canceller {
	return &canceller{r: d.r, cause: cause, d: d, seen: map[string]bool{}, walked: map[string]bool{}}
}

// cancelCause is what a cancel commits a run with: its reason, and the
// run the Cancel was aimed at (the root of the tree it cancels), "" when
// not known.
type cancelCause struct {
	reason string
	root   string
}

// tree cancels root and its unfinished descendants. The effects in flight
// in the whole tree are interrupted first, so that the ticks holding the
// runs return; then the runs are cancelled deepest first, so that a crash
// midway never leaves a live run under a cancelled one. Each commit
// records the run the cancel was aimed at (cancelledWithKey): a parent
// left waiting on (or replaying) a cancelled child is cancelled in turn
// by whoever hands it the child's end, rather than going on with it. A
// cancelled run starts no more children, but its tick may have started one
// after the listing (it held the run meanwhile): such a child is cancelled
// too, with its own descendants. A conditional cancel (rootAt) decides
// the root first, then cancels the rest: a crash midway there leaves live
// runs under a cancelled root, which cancel themselves when next ticked,
// resumed or sent an event.
func (c *canceller) tree(ctx context.Context, root string) error {
	c.seen[root] = true
	ids := []string{root} // parents before their children
	for i := 0; i < len(ids); i++ {
		kids, err := c.newChildren(ctx, ids[i])
		if err != nil {
			return err
		}
		ids = append(ids, kids...)
	}
	for _, id := range ids {
		if c.r.holdsLock(ctx, id) {
			// A node or handler of a run in the tree (an agent's "stop"
			// tool cancelling its session from a child): refused before
			// any stop request, as Cancel refuses its own run; one would
			// cancel the caller's own effect, and the refusal on its run
			// below would leave that run running with its attempt ended
			// "cancelled".
			return fmt.Errorf("run %s (in the tree of run %s): %w", id, root, ErrOwnRunLocked)
		}
	}
	stop := ids // the runs to stop and cancel (parents first, cancelled deepest first)
	if c.rootAt != nil && root == c.cause.root {
		// The root decides whether there is a cancel at all: it goes
		// first, without a stop request, which would interrupt the
		// effect of a tick that has just changed it.
		if err := c.r.cancelRootAt(ctx, c.d, root, c.cause, *c.rootAt); err != nil {
			return err
		}
		stop = ids[1:]
	}
	for _, id := range stop {
		c.withdraws = append(c.withdraws, c.r.requestStop(id, c.cause))
	}
	// A run busy in this process is waited for, not passed over, even by
	// RetryFollowUps: the request above cuts its effect in flight (or its
	// wait before a retry) or stops its tick at the next step boundary,
	// so the wait is short. A request withdrawn before a node still
	// running returns would let the tick start that node's effect under
	// a cancelled tree.
	for i := len(stop) - 1; i >= 0; i-- {
		if err := c.r.cancelOne(ctx, c.d, stop[i], c.cause); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	for _, id := range ids {
		late, err := c.newChildren(ctx, id)
		if err != nil {
			return err
		}
		for _, k := range late {
			if err := c.tree(ctx, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// newChildren returns the unfinished descendants of id, under its
// unfinished children and its ended ones alike (an async child started by
// a child that has since completed still belongs to the tree), not yet
// taken into the cancel, and takes them; ended runs are walked, not taken.
func (c *canceller) newChildren(ctx context.Context, id string) ([]string, error) {
	var out []string
	walk := []string{id}
	for len(walk) > 0 {
		parent := walk[len(walk)-1]
		walk = walk[:len(walk)-1]
		kids, err := c.r.store.RunListChildren(ctx, parent, "")
		if err != nil {
			return nil, fmt.Errorf("listing children of run %s: %w", parent, err)
		}
		for _, k := range kids {
			switch {
			case !k.Status.Terminal() && !c.seen[k.RunID]:
				c.seen[k.RunID] = true
				out = append(out, k.RunID)
			case k.Status.Terminal() && !c.walked[k.RunID]:
				c.walked[k.RunID] = true
				walk = append(walk, k.RunID)
			}
		}
	}
	return out, nil
}

// release withdraws the cancel's stop requests (once: a second call does
// nothing).
func (c *canceller) release() {
	for _, withdraw := range c.withdraws {
		withdraw()
	}
	c.withdraws = nil
}

// requestStop asks a tick of the run in this process to stop at its next
// step boundary (ending a wait before a retry at once) and, for a cancel
// (cancel.reason set; the zero cause is a pause), cancels the context of
// its effect in flight: the attempt ends "cancelled", and the tick commits
// the run cancelled with that cause in the same commit. The returned
// function withdraws the request.
func (r *Runtime) requestStop(runID string, cancel cancelCause) (withdraw func()) {
	cancelEffect := cancel.reason != ""
	l := r.ref(runID)
	l.sigMu.Lock()
	l.pauseRequests++
	if cancelEffect {
		l.cancelCauses = append(l.cancelCauses, cancel)
		l.cancelRequests++
		if l.cancelInflight != nil {
			if l.cutCause.reason == "" {
				l.cutCause = l.cancelCauses[0]
			}
			l.cancelInflight(ErrRunCancelled)
		}
	} else if l.pauseWait != nil {
		l.pauseWait(errPauseRequested)
	}
	l.sigMu.Unlock()
	return func() {
		l.sigMu.Lock()
		l.pauseRequests--
		if cancelEffect {
			l.cancelRequests--
			// Its own reason goes: a withdrawn cancel's reason must not
			// name the run's end another cancel makes.
			if i := slices.Index(l.cancelCauses, cancel); i >= 0 {
				l.cancelCauses = slices.Delete(l.cancelCauses, i, i+1)
			}
		}
		if l.pauseRequests == 0 && l.stopsSettled != nil {
			close(l.stopsSettled)
			l.stopsSettled = nil
		}
		l.sigMu.Unlock()
		r.unref(runID, l)
	}
}

// awaitStopRequests waits until no pause or cancel request stands for
// runID in this process: each is withdrawn once its call committed (or
// found nothing to do) or gave up. A sync parent whose child such a
// request stopped waits so to read what the call left in the store, as
// Python's sync tick sees only a persisted pause or cancel. It returns
// the context's cause if ctx ends first.
func (r *Runtime) awaitStopRequests(ctx context.Context, runID string) error {
	l := r.ref(runID)
	defer r.unref(runID, l)
	for {
		l.sigMu.Lock()
		if l.pauseRequests == 0 {
			l.sigMu.Unlock()
			return nil
		}
		if l.stopsSettled == nil {
			l.stopsSettled = make(chan struct{})
		}
		settled := l.stopsSettled
		l.sigMu.Unlock()
		select {
		case <-settled:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// cancelAttempts bounds a cancel's commits: one conflicts only when the
// runner a forced claim took the run from committed first, before it
// learnt it lost the run, or paused it through that runner; and its
// claims: one is lost only when a cancel through another runner took the
// run in turn (the next claim finds it cancelled).
const cancelAttempts = 5

// cancelOne cancels one run, taking it from another runner that holds it.
func (r *Runtime) cancelOne(ctx context.Context, d *driver, runID string, cause cancelCause) error {
	for attempt := 1; ; attempt++ {
		err := r.cancelOnce(ctx, d, runID, cause)
		if !errors.Is(err, ErrRunClaimed) || attempt == cancelAttempts {
			return err
		}
	}
}

// cancelOnce cancels one run under one claim, forced from the runner that
// holds it. A commit that conflicts is made again on the reloaded run
// under the same claim: releasing it in between would leave the run
// claimed by nobody while the runner it was taken from may still run its
// effect (it learns it lost the run only at its next renewal), and a
// third runner could claim it and run that effect again beside it.
//
// A cancel that fails once it took the run from another runner (its
// context ended, a store error, its attempts used up) keeps the claim
// until it expires, for the same reason (claimHold.keepOnRelease).
func (r *Runtime) cancelOnce(ctx context.Context, d *driver, runID string, cause cancelCause) (err error) {
	// Without its workflow (not registered in this runner): a cancel runs
	// no node, and the run can still be cancelled under the forced claim.
	ctx, s, unlock, err := d.openRun(ctx, runID, d.claimFor(claimForce), false)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.claim.keepOnRelease()
		}
		unlock()
	}()
	for attempt := 1; ; attempt++ {
		if s.run.Status.Terminal() {
			return nil
		}
		if err := s.endOpenAttempt(ctx); err != nil {
			return s.claimErr(err)
		}
		cerr := s.commitCancelled(ctx, cause)
		if cerr != nil && !errors.Is(cerr, errStop) && !errors.Is(cerr, store.ErrConflict) {
			return s.claimErr(cerr)
		}
		if s.run.Status.Terminal() {
			return nil
		}
		// The commit conflicted (the session reloaded the run): with the
		// runner the claim was taken from, which committed first, or a
		// pause made through it that left the run live.
		if attempt == cancelAttempts {
			return fmt.Errorf("run %s changed while being cancelled: %w", runID, store.ErrConflict)
		}
	}
}

// cancelRootAt cancels runID only if it is still at version, under its
// lock and a claim taken as a host update takes one (claimTakeover: a
// run left waiting by a runner that died holding it is taken from it, a
// run its holder is working on is not: ErrRunChanged, wrapping
// ErrRunClaimed). A run at another version, or a commit that conflicts
// (another process changed it since it was loaded), is ErrRunChanged; a
// run that had ended at that version is left as it is.
func (r *Runtime) cancelRootAt(ctx context.Context, d *driver, runID string, cause cancelCause, version int64) (err error) {
	ctx, s, unlock, err := d.openRun(ctx, runID, d.claimFor(claimTakeover), false)
	if errors.Is(err, ErrRunClaimed) {
		// Another runner is working on it: it is changing.
		return fmt.Errorf("run %s: %w", runID, errors.Join(ErrRunChanged, err))
	}
	if err != nil {
		return err
	}
	defer unlock()
	want := version
	if s.claim != nil && s.claim.fencedAt == version && version > 0 {
		// This call's own takeover committed the run unchanged (its
		// fence) at the version read: nothing else changed it.
		want = version + 1
	}
	if s.run.Version != want {
		return fmt.Errorf("run %s is at version %d, not %d: %w", runID, s.run.Version, want, ErrRunChanged)
	}
	if s.run.Status.Terminal() {
		return nil // ended when read: its descendants are cancelled, as by Cancel
	}
	if err := s.endOpenAttempt(ctx); err != nil {
		return s.claimErr(err)
	}
	err = s.commitCancelled(ctx, cause)
	switch {
	case errors.Is(err, errStop) && !s.dropped && s.run.Status == durable.RunCancelled:
		return nil // this call's commit
	case err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, errStop):
		// Changed by another writer (ended, paused, moved on) since it
		// was loaded: that write wins, and no descendant is cancelled.
		return fmt.Errorf("run %s changed while being cancelled: %w", runID, ErrRunChanged)
	}
	return s.claimErr(err)
}

// endOpenAttempt queues the end of an attempt left open by a runner the
// run was taken from (or that died), as an interrupted local one ends. A
// run paused since (its pause wait) or waiting may hold one too: a pause
// does not end the attempt it interrupted.
func (s *session) endOpenAttempt(ctx context.Context) error {
	ends, err := s.openAttemptEnds(ctx)
	if err != nil {
		return err
	}
	s.pending = append(s.pending, ends...)
	return nil
}

// openAttemptEnds returns a "cancelled" end record for each effect attempt
// whose STARTED record the run's ledger holds without an end: an attempt
// in flight in another runner, or in one that died (a ledger written
// before attempts were closed on replay may hold several).
func (s *session) openAttemptEnds(ctx context.Context) ([]*durable.StepRecord, error) {
	recs, err := s.r.store.LedgerList(ctx, &store.LedgerListParams{RunID: s.run.RunID})
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of run %s: %w", s.run.RunID, err)
	}
	open := openAttempts(recs)
	ends := make([]*durable.StepRecord, 0, len(open))
	for _, rec := range open {
		ends = append(ends, attemptEnd(rec, durable.StepCancelled, "cancelled", s.r.now()))
	}
	return ends, nil
}

// openAttempts returns the STARTED records of recs (a ledger, or its
// last records) that no later record of the same step ends.
func openAttempts(recs []*durable.StepRecord) []*durable.StepRecord {
	var open []*durable.StepRecord
	for _, rec := range recs {
		if rec.Status == durable.StepStarted {
			open = append(open, rec)
		} else if len(open) > 0 {
			open = slices.DeleteFunc(open, func(o *durable.StepRecord) bool { return o.StepID == rec.StepID })
		}
	}
	return open
}

// attemptEnd is the end record, of status and error msg at now, of the
// attempt whose STARTED record is started, read back from the ledger.
func attemptEnd(started *durable.StepRecord, status durable.StepStatus, msg string, now durable.Time) *durable.StepRecord {
	end := started.Derived()
	end.Seq = 0
	end.Status = status
	end.Error = msg
	end.EndedAt = now
	return &end
}

// commitCancelled ends the session's run as cancelled with cause and
// commits it with the records queued (an attempt's cancelled end among
// them) and its terminal status event: Cancel's commit, which a tick
// whose effect a cancel interrupted makes itself, as does a child ticked
// or resumed under a cancelled parent. Like finish, it returns errStop
// once committed.
func (s *session) commitCancelled(ctx context.Context, cause cancelCause) error {
	markCancelled(s.run, cause)
	return s.finish(ctx, durable.RunCancelled, cause.reason, nil)
}

func markCancelled(run *durable.RunState, cause cancelCause) {
	run.Status = durable.RunCancelled
	run.Error = cause.reason
	run.Waiting = nil
	clearEffectInFlight(run.Vars) // never replayed: a terminal state keeps no plan in flight
	rt := namespace(run.Vars, "_runtime")
	// The control namespace is created if missing, as Python's setdefault does.
	delete(namespace(rt, "control"), "paused")
	if cause.root != "" {
		rt[cancelledWithKey] = map[string]any{"run_id": cause.root, "reason": cause.reason}
	} else {
		delete(rt, cancelledWithKey) // one copied from another run's vars is not this cancel's
	}
}

// cancelledWithKey, under vars._runtime of a run a Cancel ended, names the
// run that Cancel was aimed at and its reason ({"run_id", "reason"}),
// written in the commit that cancels the run. A tree is cancelled one run
// at a time, deepest first: a kill midway leaves a parent waiting on a
// cancelled child, and the key tells whoever hands the parent the child's
// end (resumeParent, a sync child's replay) that the cancel covered the
// parent too (cancelCovering), which must then be cancelled rather than
// continue. Python ignores the key.
const cancelledWithKey = "cancelled_with"

// cancelMarker reads the marker a tree cancel left on run
// (cancelledWithKey): the run the Cancel was aimed at and its reason.
func cancelMarker(run *durable.RunState) (root, reason string) {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	return markerFields(rt[cancelledWithKey])
}

// markerFields reads a cancel marker's run id and reason.
func markerFields(v any) (root, reason string) {
	with, _ := v.(map[string]any)
	root, _ = with["run_id"].(string)
	reason, _ = with["reason"].(string)
	return root, reason
}

// storedCancelMarker is cancelMarker for a run read from the store: the
// marker, or its reason, may be an artifact ref there, written by an
// offloading store from before it kept the marker inline (a long reason).
// Such refs are restored through the runtime's artifact store, when it has
// one.
func (r *Runtime) storedCancelMarker(ctx context.Context, run *durable.RunState) (root, reason string, err error) {
	root, reason = cancelMarker(run)
	if r.arts == nil || (root != "" && reason == run.Error) {
		return root, reason, nil
	}
	rt, _ := run.Vars["_runtime"].(map[string]any)
	with, err := r.restoreStoredVars(ctx, run, rt[cancelledWithKey], false)
	if err != nil {
		return "", "", fmt.Errorf("restoring the cancel marker of run %s: %w", run.RunID, err)
	}
	root, reason = markerFields(with)
	return root, reason, nil
}

// restoreStoredVars returns a copy of v, a value read from run's stored
// vars, with the refs an offloading store left there restored through the
// runtime's artifact store. Only artifacts of run's own vars offload
// (artifact.SourceRunVars) are read: a ref the workflow itself put in its
// vars, or one of another run's artifacts, stays a ref. Readable leaves
// the ref of damaged content as it is (artifact.RestoreReadable) rather
// than failing. Without an artifact store v is returned as is.
func (r *Runtime) restoreStoredVars(ctx context.Context, run *durable.RunState, v any, readable bool) (any, error) {
	if r.arts == nil || v == nil {
		return v, nil
	}
	restore := artifact.Restore
	if readable {
		restore = artifact.RestoreReadable
	}
	return restore(ctx, r.arts, pyjson.Clone(v), func(m *artifact.Metadata) bool {
		return m.RunID == run.RunID && m.Tags["source"] == artifact.SourceRunVars
	})
}

// cancelCovering returns the cancel that ended child, when it was aimed at
// parent (the child's parent) or one of parent's ancestors: a tree cancel
// that a kill (or a race with another runner) stopped before it reached
// parent. A cancel aimed at the child alone, or any other end, gives false:
// the parent continues with the child's end.
func (r *Runtime) cancelCovering(ctx context.Context, child, parent *durable.RunState) (cancelCause, bool, error) {
	if child.Status != durable.RunCancelled {
		return cancelCause{}, false, nil
	}
	root, reason, err := r.storedCancelMarker(ctx, child)
	if err != nil {
		return cancelCause{}, false, err
	}
	// The reason is the run's own: a key that is not this cancel's (copied
	// along with another run's vars) is not trusted.
	if root == "" || root == child.RunID || reason != child.Error {
		return cancelCause{}, false, nil
	}
	seen := map[string]bool{}
	for run := parent; run.RunID != root; {
		seen[run.RunID] = true
		if run.ParentRunID == "" || seen[run.ParentRunID] {
			return cancelCause{}, false, nil
		}
		up, err := r.store.RunGet(ctx, run.ParentRunID)
		if errors.Is(err, store.ErrNotFound) {
			return cancelCause{}, false, nil
		}
		if err != nil {
			return cancelCause{}, false, fmt.Errorf("loading run %s, an ancestor of run %s: %w", run.ParentRunID, parent.RunID, err)
		}
		run = up
	}
	return cancelCause{reason: reason, root: root}, true, nil
}

// cancelTree cancels run and its unfinished descendants as part of the
// tree cancel cause was made by, as that Cancel would have had it not
// been stopped before reaching the run; the follow-ups (a parent resumed
// or cancelled in turn) are queued on d.
func (d *driver) cancelTree(ctx context.Context, runID string, cause cancelCause) error {
	c := newCanceller(d, cause)
	defer c.release()
	return c.tree(ctx, runID)
}

// cancelDescendants cancels the unfinished descendants of a run a tree
// cancel ended (a sync child's replay found the cancel covered it), with
// the cause its commit recorded, as that Cancel would have. It reads the
// cause from the run, so a retry of the follow-up needs nothing else. A
// run not cancelled is left alone.
func (d *driver) cancelDescendants(ctx context.Context, runID string) error {
	run, err := d.r.store.RunGet(ctx, runID)
	if err != nil {
		return err
	}
	if run.Status != durable.RunCancelled {
		return nil
	}
	cause := cancelCause{reason: cmp.Or(run.Error, "Cancelled")}
	root, reason, err := d.r.storedCancelMarker(ctx, run)
	if err != nil {
		return err
	}
	if root != "" && reason == run.Error {
		cause.root = root
	}
	c := newCanceller(d, cause)
	defer c.release()
	c.seen[runID] = true // ended: only walked, never cancelled again
	kids, err := c.newChildren(ctx, runID)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := c.tree(ctx, k); err != nil {
			return err
		}
	}
	return nil
}
