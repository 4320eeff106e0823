package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// driver carries the work one API call causes beyond its own run: child
// runs to drive, parents to resume when a child ends, event listeners to
// continue. Follow-ups run one after another after the caller's session is
// committed and unlocked, so no run's lock is held while another run is
// driven (a queue, not recursion: a loop over a thousand subflow calls
// does not grow the stack).
type driver struct {
	r     *Runtime
	gate  StepGate
	queue []followUp
	// touched lists the runs opened by follow-ups, so the caller knows
	// whether its own run changed after its session.
	touched  []string
	draining bool
	// lastStop is why a host stopped the last session tick ran, if it
	// did: a sync child's caller tells a child a pause or cancel is
	// about to commit, or a closed gate stopped, from one that used its
	// step budget.
	lastStop stopCause
	// lastDropped reports that another writer changed the run of the last
	// session tick ran under it (a cancel through another runner): the
	// session's uncommitted work was dropped.
	lastDropped bool
	// gated lists the runs a closed step gate stopped in this call: each
	// is left at its checkpoint, not driven again in the call.
	gated map[string]bool
	// rounds counts the ticks this call gave each run it drives (a
	// follow-up's tick, a resume ticked by a child's end or an event),
	// however the run came back to the queue: past maxFollowRounds it
	// is kept for a later drive (roundsLeft).
	rounds map[string]int
	// budgetRun is the run a Tick or Resume was called on, and budgetLeft
	// the steps its MaxSteps still allows it in this call: the steps it
	// makes when a follow-up resumes it (its child's end, an event) count
	// against the caller's budget, as Python's tick(max_steps) never
	// makes more. Other runs the call drives get their own budgets.
	budgetRun  string
	budgetLeft int
	// passBusy, set by RetryFollowUps (the scheduler's loop), keeps a
	// follow-up whose run this process is working on for a later retry
	// instead of waiting for its lock (passOver): a tick in a retry's
	// back-off or a long effect would hold the whole loop up. A tree
	// cancel's follow-up is not passed over: its stop request makes such
	// a tick return soon, and the cancel must reach the run.
	passBusy bool
}

type followKind int

const (
	followTick         followKind = iota // drive a run (a started child, a resumed listener)
	followParentResume                   // a child ended: resume its waiting parent
	followCancelTree                     // a run a tree cancel ended: cancel its unfinished descendants
)

type followUp struct {
	kind  followKind
	runID string
	retry bool   // driven again by RetryFollowUps after a failure
	gen   uint64 // of a retry: the kept entry's generation (followretry.go)
}

// errRunBusy is why a follow-up was passed over: this process is working
// on its run (passOver). It is kept for a retry, not counted a failure.
var errRunBusy = errors.New("busy in this process")

// passOver returns errRunBusy, naming runID, when d does not wait for this
// process's own work (passBusy) and a tick, resume or host update here
// holds or awaits the run's lock, as the scheduler passes over such a run.
// A cancel never passes over a run (canceller.tree).
func (d *driver) passOver(runID string) error {
	if d.passBusy && d.r.Busy(runID) {
		return fmt.Errorf("run %s: %w", runID, errRunBusy)
	}
	return nil
}

// maxFollowRounds bounds how many ticks (each up to the runtime's step
// budget) one call gives a run it drives, so a workflow that loops forever
// cannot hold its caller; the run is left running, checkpointed, and kept
// for RetryFollowUps to drive on. The ticks of resumes the call makes (a
// child's end, an event) count: a loop over async subworkflows is bounded
// too.
const maxFollowRounds = 100

// maxFollowUps bounds the follow-ups of one call, so a workflow that
// keeps spawning runs cannot trap the caller forever.
const maxFollowUps = 100_000

func (r *Runtime) newDriver(gate StepGate) *driver {
	return &driver{r: r, gate: gate}
}

// withBudget makes maxSteps the step budget of runID for the whole call.
func (d *driver) withBudget(runID string, maxSteps int) *driver {
	d.budgetRun, d.budgetLeft = runID, max(maxSteps, 0)
	return d
}

// allowance is how many of maxSteps steps runID may make now.
func (d *driver) allowance(runID string, maxSteps int) int {
	if d == nil || runID == "" || runID != d.budgetRun {
		return maxSteps
	}
	return min(maxSteps, d.budgetLeft)
}

// spend counts n steps runID made against its call budget.
func (d *driver) spend(runID string, n int) {
	if d != nil && runID != "" && runID == d.budgetRun {
		d.budgetLeft = max(d.budgetLeft-n, 0)
	}
}

// spent reports whether runID used the step budget its caller gave it for
// this call: it is left running at its checkpoint, not driven on, as a
// tick that used its MaxSteps leaves it (a later tick continues it).
func (d *driver) spent(runID string) bool {
	return runID != "" && runID == d.budgetRun && d.budgetLeft == 0
}

// roundsLeft reports whether this call may still tick runID
// (maxFollowRounds), counting the tick it is about to give when so.
func (d *driver) roundsLeft(runID string) bool {
	if d.rounds[runID] >= maxFollowRounds {
		return false
	}
	if d.rounds == nil {
		d.rounds = map[string]int{}
	}
	d.rounds[runID]++
	return true
}

// driveLater keeps runID for RetryFollowUps to drive: this call has
// given it its rounds, and it goes on without holding the caller up.
func (d *driver) driveLater(ctx context.Context, runID string) {
	d.r.retryLater(ctx, followUp{kind: followTick, runID: runID}, false)
}

func (d *driver) touch(runID string) {
	if d.draining {
		d.touched = append(d.touched, runID)
	}
}

// noteStop records how the session s just ran stopped (lastStop,
// lastDropped, gated).
func (d *driver) noteStop(s *session) {
	d.lastStop, d.lastDropped = s.stoppedBy, s.dropped
	if s.stoppedBy == stoppedGate {
		if d.gated == nil {
			d.gated = map[string]bool{}
		}
		d.gated[s.run.RunID] = true
	}
}

// enqueueTick asks the driver to drive a run after the current session.
func (d *driver) enqueueTick(runID string) {
	d.queue = append(d.queue, followUp{kind: followTick, runID: runID})
}

// afterTerminal is called once a run's terminal state is committed.
func (d *driver) afterTerminal(run *durable.RunState) {
	if run.ParentRunID != "" {
		d.queue = append(d.queue, followUp{kind: followParentResume, runID: run.RunID})
	}
}

// finish drains the follow-ups, then returns the caller's run state,
// reloaded if a follow-up changed it.
func (d *driver) finish(ctx context.Context, runID string, run *durable.RunState) (*durable.RunState, error) {
	if len(d.queue) == 0 {
		return run, nil
	}
	d.touched, d.draining = nil, true
	d.drain(ctx)
	d.draining = false
	if !slices.Contains(d.touched, runID) {
		return run, nil
	}
	return d.r.GetState(ctx, runID)
}

// keepQueued keeps the follow-ups still queued for RetryFollowUps: the
// call that queued them failed before driving them, after their cause
// (a child started, a listener resumed) was committed.
func (d *driver) keepQueued(ctx context.Context) {
	for _, f := range d.queue {
		d.r.retryLater(ctx, f, false)
	}
	d.queue = nil
}

// keepUndriven is drain for a caller that drives nothing itself (an
// EmitEvent with NoDrive): the ticks of the runs in hostDriven, which the
// caller hands to its own runner, are dropped; every other follow-up (a
// parent's resume, a tick after a failed delivery) is kept for
// RetryFollowUps.
func (d *driver) keepUndriven(ctx context.Context, hostDriven []string) {
	driven := make(map[string]bool, len(hostDriven))
	for _, id := range hostDriven {
		driven[id] = true
	}
	for _, f := range d.queue {
		if f.kind == followTick && driven[f.runID] {
			continue
		}
		d.r.retryLater(ctx, f, false)
	}
	d.queue = nil
}

func (d *driver) drain(ctx context.Context) {
	for n := 0; len(d.queue) > 0 && n < maxFollowUps; n++ {
		if ctx.Err() != nil {
			break // the rest is kept for a retry, below
		}
		f := d.queue[0]
		d.queue = d.queue[1:]
		var err error
		switch f.kind {
		case followTick:
			// A refused claim is kept for a retry (settleFollowUp): the
			// holder may be a runner that only read or updated the run (a
			// stale resume, a limits update) and will not drive it. Not
			// waiting for the holder here keeps a fan-out to runs that
			// live runners drive from stalling its caller.
			if d.spent(f.runID) {
				break // its caller's budget is used: left for a later tick
			}
			if err = d.passOver(f.runID); err != nil {
				break
			}
			if !d.roundsLeft(f.runID) {
				d.driveLater(ctx, f.runID)
				break
			}
			var run *durable.RunState
			run, err = d.tick(ctx, f.runID, d.r.maxSteps)
			// A run the caller's step gate stopped is left at its
			// checkpoint: asking the closed gate again would not open it.
			// One a cancel request stopped is about to be committed
			// cancelled by that Cancel: a tick now would stop again, at
			// once, as long as the request stands. It is kept for a
			// later drive, should the Cancel give up. A paused one is
			// settled: no tick moves it while paused, and ResumeRun ticks
			// it once the pause is lifted.
			if err == nil && run != nil && run.Status == durable.RunRunning && d.lastStop == stoppedCancel {
				d.driveLater(ctx, f.runID)
			} else if err == nil && run != nil && run.Status == durable.RunRunning && !IsPaused(run) &&
				d.lastStop != stoppedGate && !d.spent(f.runID) {
				// It used its step budget: give it another turn after the
				// others (kept for later once its rounds are used).
				d.queue = append(d.queue, followUp{kind: followTick, runID: f.runID})
			}
			if err == nil && run != nil && run.Status.Terminal() && run.ParentRunID != "" {
				// The child may have ended before its parent's wait was
				// committed; check the parent now.
				d.queue = append(d.queue, followUp{kind: followParentResume, runID: run.RunID})
			}
		case followParentResume:
			err = d.resumeParent(ctx, f.runID, f.retry)
		case followCancelTree:
			err = d.cancelDescendants(ctx, f.runID)
		}
		switch {
		case errors.Is(err, errRunBusy):
			// Whoever works on the run may leave nothing for it to do;
			// it is retried after the same back-off, not a longer one.
			d.r.logger.LogAttrs(ctx, slog.LevelDebug, "follow-up passed over: run busy in this process; it will be retried",
				slog.String("run_id", f.runID))
			d.r.retryLater(ctx, f, false)
			continue
		case errors.Is(err, ErrRunClaimed):
			d.r.logger.LogAttrs(ctx, slog.LevelDebug, "follow-up refused: run claimed elsewhere; it will be retried",
				slog.String("run_id", f.runID))
		case err != nil:
			d.r.logger.LogAttrs(ctx, slog.LevelWarn, "follow-up failed; it will be retried",
				slog.String("run_id", f.runID), slog.String("error", err.Error()))
		}
		d.r.settleFollowUp(ctx, f, err)
	}
	if len(d.queue) > 0 {
		d.r.logger.LogAttrs(ctx, slog.LevelWarn, "follow-ups left undone; they will be retried",
			slog.Int("count", len(d.queue)))
		d.keepQueued(ctx)
	}
}

// WaitedChild returns the id of the child a run waits on (a subworkflow
// wait: details.sub_run_id, else its wait key), or "".
func WaitedChild(run *durable.RunState) string {
	w := run.Waiting
	if run.Status != durable.RunWaiting || w == nil || w.Reason != durable.WaitSubworkflow {
		return ""
	}
	if child, _ := w.Details["sub_run_id"].(string); child != "" {
		return child
	}
	child, _ := strings.CutPrefix(w.WaitKey, SubworkflowWaitKey(""))
	return child
}

// SubworkflowWaitKey is the wait key of a parent waiting on a child.
func SubworkflowWaitKey(childRunID string) string { return "subworkflow:" + childRunID }

// resumeParent resumes the parent of an ended child if the parent waits on
// it, with {"sub_run_id", "output"}; a failed or cancelled child gives
// output {"success": false, "error": …}. A child cancelled by a cancel of
// a tree the parent belongs to (one a kill stopped before it reached the
// parent) has the parent cancelled instead, paused or not, with its
// unfinished descendants. A parent whose workflow this runtime does not
// serve is resumed without a tick and left running at its resume node,
// for a runtime that serves it to drive (its scheduler's Recover). A
// retry (an earlier attempt failed) that finds the parent no longer
// waiting drives the parent (an ended one, or one this runtime serves):
// the failed attempt may have resumed it and committed its end or its
// tick budget with the answer lost, so that nothing resumed the
// grandparent or continued the parent. A first attempt drives a parent
// it serves that another runtime has just resumed with this child's end
// (driveResumedElsewhere).
func (d *driver) resumeParent(ctx context.Context, childID string, retry bool) error {
	child, err := d.r.store.RunGet(ctx, childID)
	if err != nil {
		return err
	}
	if !child.Status.Terminal() || child.ParentRunID == "" {
		return nil
	}
	parent, err := d.r.store.RunGet(ctx, child.ParentRunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	key := SubworkflowWaitKey(childID)
	waits := parent.Status == durable.RunWaiting && parent.Waiting != nil && parent.Waiting.WaitKey == key
	if waits {
		cause, covered, err := d.r.cancelCovering(ctx, child, parent)
		if err != nil {
			return fmt.Errorf("handing run %s the end of its child %s: %w", parent.RunID, childID, err)
		}
		if covered {
			return d.cancelTree(ctx, parent.RunID, cause)
		}
	}
	// Runners sharing a store may each serve some workflows: a parent
	// whose workflow this runtime does not serve is not ticked here (that
	// tick would fail for want of the workflow, retried for as long as
	// the parent waited) but left running for a runtime that serves it.
	_, served := d.r.registry.Get(parent.WorkflowID)
	if !waits || IsPaused(parent) {
		// An ended parent is driven without its workflow (its end is
		// handed to its own parent); a running one only where served.
		if retry && parent.Status != durable.RunWaiting && (served || parent.Status.Terminal()) {
			d.queue = append(d.queue, followUp{kind: followTick, runID: parent.RunID})
			return nil
		}
		return d.driveResumedElsewhere(ctx, parent, childID, served)
	}
	if err := d.passOver(parent.RunID); err != nil {
		return err
	}
	steps := 0 // a tick with the runtime's budget
	later := false
	switch {
	case !served:
		steps = -1 // the resume committed without a tick, which runs none of its code
	case !d.roundsLeft(parent.RunID):
		// This call has given the parent its rounds (it loops over async
		// subworkflows): the answer is committed without a tick, and the
		// parent kept for a later drive.
		steps, later = -1, true
	}
	payload := map[string]any{"sub_run_id": childID, "output": ChildOutput(child)}
	if truthy(parent.Waiting.Details["include_traces"]) {
		payload["node_traces"] = childNodeTraces(child)
	}
	if err := d.r.restoreChildValues(ctx, childID, payload); err != nil {
		return fmt.Errorf("resuming the parent of run %s: %w", childID, err)
	}
	st, err := d.resume(ctx, ResumeParams{RunID: parent.RunID, WaitKey: key, Payload: payload, MaxSteps: steps, Strict: true})
	var notJSON *pyjson.Error
	if errors.As(err, &notJSON) {
		// The child's output fits the child but not the parent's wait
		// (nested deeper there): every retry would be refused the same
		// way, so the parent gets the child's failure instead.
		payload = map[string]any{"sub_run_id": childID, "output": map[string]any{
			"success": false, "status": string(child.Status),
			"error": fmt.Sprintf("the output of run %s cannot be stored in its parent: %v", childID, notJSON),
		}}
		st, err = d.resume(ctx, ResumeParams{RunID: parent.RunID, WaitKey: key, Payload: payload, MaxSteps: steps, Strict: true})
	}
	var stale *StaleResumeError
	if errors.As(err, &stale) {
		// Resumed by someone else meanwhile: by a runtime that does not
		// serve the parent (its NotifyChildEnded or Recover), it is left
		// running for one that does, and this one would not drive it
		// before its next Recover (never, without claims): drive it here.
		if served && st != nil && st.Status == durable.RunRunning && !IsPaused(st) && !d.spent(parent.RunID) {
			d.enqueueTick(parent.RunID)
		}
		return nil
	}
	if !served {
		if err == nil && st != nil && st.Status == durable.RunRunning {
			d.r.logger.InfoContext(ctx, "child ended; its parent, of a workflow this runtime does not serve, "+
				"is resumed and left running for a runtime that serves it",
				"run_id", parent.RunID, "workflow_id", parent.WorkflowID, "child_run_id", childID)
		}
		return err
	}
	if later {
		if err == nil && st != nil && st.Status == durable.RunRunning && !d.spent(parent.RunID) && !d.gated[parent.RunID] {
			d.driveLater(ctx, parent.RunID)
		}
		return err
	}
	if err == nil && st != nil && st.Status == durable.RunRunning && d.lastStop != stoppedGate && !d.spent(parent.RunID) {
		// The resume's tick used its step budget: drive the parent on, as
		// any follow-up that ran out of ticks is (nothing else would). A
		// parent the caller's step gate stopped, or the run the caller
		// ticked once it used the caller's MaxSteps, is left at its
		// checkpoint.
		d.enqueueTick(parent.RunID)
	}
	return err
}

// driveResumedElsewhere drives a parent another runtime resumed with the
// end of child childID before this one read it (that runtime's
// NotifyChildEnded or Recover, which leaves a parent it does not serve
// running for one that does): otherwise nothing would drive it before
// this runtime's next Recover (never, without claims). Only a parent
// this runtime serves, running, not paused, whose caller's budget is not
// used, that the caller's step gate did not stop in this call, and whose
// last ledger record is the resume for this child's wait key (no step
// since: running at its resume node, as that runtime left it). A parent
// left running after steps of its own (a caller's step gate or MaxSteps
// stopped it, a sync child's tick among them) is left at its checkpoint,
// as its caller asked.
func (d *driver) driveResumedElsewhere(ctx context.Context, parent *durable.RunState, childID string, served bool) error {
	if !served || parent.Status != durable.RunRunning || IsPaused(parent) || d.spent(parent.RunID) || d.gated[parent.RunID] {
		return nil
	}
	resumed, err := d.r.lastResumedWith(ctx, parent.RunID, SubworkflowWaitKey(childID))
	if err != nil {
		return fmt.Errorf("handing run %s the end of its child %s: %w", parent.RunID, childID, err)
	}
	if resumed {
		d.enqueueTick(parent.RunID)
	}
	return nil
}

// lastResumedWith reports whether the last record of run runID's ledger
// is the resume of its wait on waitKey. Seq is a record's 1-based
// position in its run's ledger: the last one is read alone. A store's
// offloading may have replaced the record's effect payload by a ref (its
// members each under the threshold, together over it), or the wait key
// itself: those are read back from the run's ledger-offload artifacts.
func (r *Runtime) lastResumedWith(ctx context.Context, runID, waitKey string) (bool, error) {
	n, err := r.store.LedgerCount(ctx, runID)
	if err != nil || n == 0 {
		return false, err
	}
	recs, err := r.store.LedgerList(ctx, &store.LedgerListParams{RunID: runID, After: n - 1, Limit: 1})
	if err != nil || len(recs) == 0 {
		return false, err
	}
	eff := recs[0].Effect
	if eff == nil || eff.Type != durable.EffectResume {
		return false, nil
	}
	wk := eff.Payload["wait_key"]
	if _, isRef := artifact.RefID(eff.Payload); isRef && r.arts != nil {
		p, err := artifact.Restore(ctx, r.arts, pyjson.CloneObject(eff.Payload), ledgerOffloadOf(runID))
		if err != nil {
			return false, fmt.Errorf("reading the offloaded resume record of run %s: %w", runID, err)
		}
		m, _ := p.(map[string]any)
		wk = m["wait_key"]
	} else if _, isRef := artifact.RefID(wk); isRef && r.arts != nil {
		if wk, err = artifact.Restore(ctx, r.arts, pyjson.Clone(wk), ledgerOffloadOf(runID)); err != nil {
			return false, fmt.Errorf("reading the offloaded wait key of run %s: %w", runID, err)
		}
	}
	return wk == waitKey, nil
}

// restoreChildValues puts back into payload (the child's output and
// traces, copies) the values a store's offloading moved out of the ended
// child's stored state: a parent gets its child's values whether it is
// resumed from the state the child's tick just made or from the store.
func (r *Runtime) restoreChildValues(ctx context.Context, childID string, payload map[string]any) error {
	if r.arts == nil {
		return nil
	}
	_, err := artifact.Restore(ctx, r.arts, payload, func(m *artifact.Metadata) bool {
		src := m.Tags["source"]
		return m.RunID == childID && (src == artifact.SourceRunOutput || src == artifact.SourceRunVars)
	})
	return err
}

// childNodeTraces returns a copy of the child's node traces, an object
// even when it has none (Python's get_node_traces).
func childNodeTraces(child *durable.RunState) map[string]any {
	if rt, ok := child.Vars["_runtime"].(map[string]any); ok {
		if t, ok := rt["node_traces"].(map[string]any); ok {
			return pyjson.CloneObject(t)
		}
	}
	return map[string]any{}
}

// ChildOutput is what a parent receives from an ended child: its output
// when completed, else {"success": false, "error": …, "status": …}.
func ChildOutput(child *durable.RunState) any {
	if child.Status == durable.RunCompleted {
		if child.Output == nil {
			return nil
		}
		return pyjson.CloneObject(child.Output)
	}
	msg := child.Error
	if msg == "" {
		msg = "Subworkflow " + string(child.Status)
	}
	return map[string]any{"success": false, "error": msg, "status": string(child.Status)}
}

// NotifyChildEnded resumes the parent of an ended child run if the parent
// still waits on it (the kernel does this by itself when the child ends in
// this process; hosts call it for children finished elsewhere). A parent
// whose workflow this runtime does not serve is resumed without a tick,
// left running for a runtime that serves it.
func (r *Runtime) NotifyChildEnded(ctx context.Context, childRunID string) error {
	d := r.newDriver(nil)
	if err := d.resumeParent(ctx, childRunID, false); err != nil {
		// The caller may not call again (ResumeRun's second call finds
		// nothing paused): the parent's resume is kept for a retry.
		if !errors.Is(err, store.ErrNotFound) {
			r.retryLater(ctx, followUp{kind: followParentResume, runID: childRunID}, true)
		}
		d.keepQueued(ctx)
		return err
	}
	d.drain(ctx)
	return nil
}
