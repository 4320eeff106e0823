package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// execute runs the effect of plan with the retry policy and the ledger
// pattern (STARTED, then COMPLETED / WAITING / FAILED with the same step
// id), reusing a prior completed result (or, on a store without atomic
// commits, a durable wait) on replay, and records the node
// trace. It returns the final outcome (retries that all failed give
// "Effect failed after N attempts: <last error>") and whether that outcome
// came from outside the process: the caller must then make it durable
// together with the transition it causes, so that no checkpoint shows the
// effect completed while the run still stands before it.
func (s *session) execute(ctx context.Context, plan StepPlan) (_ Outcome, external bool, err error) {
	run := s.run
	replaying := s.replayingInFlight
	s.replayingInFlight = false
	eff := plan.Effect
	// At the depth a checkpoint holds it, the deepest place it is
	// written (vars._runtime.effect_in_flight.effect.payload).
	// A payload refused here fails the run before any attempt, as a node
	// error does: through s.fail, so the ledger names the node and why.
	if err := pyjson.CheckMember(eff.Payload, "effect.payload", 5); err != nil {
		return Outcome{}, false, s.fail(ctx, plan.NodeID, fmt.Sprintf("effect of node %q: %v", plan.NodeID, err))
	}
	if eff.Payload != nil && !pyjson.IsNormalizedObject(eff.Payload) {
		// In the types a replay reads back from the store ([]string as
		// []any, ...): the idempotency key and the runtime's tool call ids
		// must not depend on how a node built its payload, or a replay
		// would miss the completed result and run the effect again.
		norm, err := pyjson.NormalizeObject(eff.Payload)
		if err != nil {
			return Outcome{}, false, s.fail(ctx, plan.NodeID, fmt.Sprintf("effect of node %q: %v", plan.NodeID, err))
		}
		e := *eff
		e.Payload = norm
		eff = &e
	}
	h, ok := s.r.handlers[eff.Type]
	if (!ok || !h.Local) && ctx.Err() != nil {
		// Nothing leaves the process for a caller that went away; the run
		// stays before the effect.
		return Outcome{}, false, fmt.Errorf("effect %s of run %s not started: %w", eff.Type, run.RunID, context.Cause(ctx))
	}
	// effect_seq moves past this effect only with its outcome: checkpoints
	// taken while it is in flight (its STARTED record, a failed attempt
	// before a retry, an attempt interrupted with its caller) still hold
	// seq, so a run replayed from one of them computes the same key, finds
	// the completed record, or hands the handler the same key again.
	if eff.Type == durable.EffectToolCalls {
		warnToolCallIDs(run.Vars, plan.NodeID, eff.Payload)
	}
	pythonRun := !hasEffectSeq(run.Vars)
	seq := effectSeq(run.Vars)
	key := EffectKey(run.RunID, plan.NodeID, eff, seq)
	if eff.Type == durable.EffectToolCalls {
		eff = withRuntimeCallIDs(eff, key) // after the key: it leaves the ids out
	}
	defer func() {
		if err == nil {
			setEffectSeq(run.Vars, seq+1)
		}
	}()
	start := time.Now()

	// A run the Python runtime left (no effect_seq yet), or one it took
	// over and left again (the effect_seq we wrote is still there), may
	// have died after appending this effect's completed record and before
	// saving the state: Python's key finds it, whatever the store. On an
	// atomic store only an external effect is looked up for a run of ours
	// (a local one costs nothing to do again).
	if pythonRun {
		// The state is Python's save: its time bounds the Python records
		// it accounts for, whatever our saves do to updated_at from now.
		if _, kept := keptPythonSave(run.Vars, run.UpdatedAt); !kept && !run.UpdatedAt.IsZero() {
			notePythonSave(run.Vars, run.UpdatedAt, run.UpdatedAt)
		}
	}
	if lookPython := pythonRun || !s.r.atomic || !ok || !h.Local; lookPython {
		var prior *durable.StepRecord
		var err error
		pythonRecord := false // prior was found under Python's key
		// On an atomic store a record of ours is found only where a
		// commit that lost to another writer left an attempt's end alone
		// (keepLostAttemptEnd): a replay of the plan in flight.
		lookOwn := !s.r.atomic || replaying
		if lookOwn || pythonRun {
			prior, err = s.r.findCompleted(ctx, run.RunID, key)
		}
		if err == nil && prior == nil && lookOwn && !(ok && h.RerunOnReplay) && eff.Type != durable.EffectStartSubworkflow {
			// A waiting end is the attempt's outcome as a completed one
			// is; a kill may have cut the commit after its record, and
			// calling the handler again would repeat what it did. Only
			// under our own key: Python's has no step count (its record
			// may be an earlier turn of a loop). Not for a RerunOnReplay
			// handler, whose changes to the run the kill lost, nor for
			// START_SUBWORKFLOW: its child may have ended meanwhile, or
			// never been driven, and only the handler (idempotent: the
			// child's id comes from the key) queues what follows.
			var w *durable.WaitState
			if w, err = s.durableWait(ctx, key); err == nil && w != nil {
				out := Waiting(w)
				s.trace(plan.NodeID, key, eff, out, true, start)
				return out, false, nil
			}
		}
		if err == nil && prior == nil {
			prior, err = s.r.findCompleted(ctx, run.RunID, PythonIdempotencyKey(run.RunID, plan.NodeID, plan.Effect))
			if bound := pythonSaveBound(run); prior != nil && !bound.IsZero() && !prior.EndedAt.After(bound.Time) {
				// Python's key has no step count: a record that ended
				// before the state's last Python save (same clock; our
				// own saves keep that time, see pythonSaveKey) is
				// accounted for by the state, an earlier turn of a loop,
				// not this effect's completion left unsaved by a kill.
				prior = nil
			}
			pythonRecord = prior != nil
		}
		if err != nil {
			return Outcome{}, false, err
		}
		if prior != nil && prior.Result != nil {
			if ok && h.RerunOnReplay {
				// Its changes to this run were lost with the state the
				// kill cut off: the handler makes them again (it is
				// idempotent under the key, and told the recorded result
				// for a record Python made under its own key); the
				// recorded result stands, and the ledger gets no second
				// completion.
				if err := s.replayChanges(ctx, h, eff, plan.NodeID, plan.NextNode, key, prior); err != nil {
					return Outcome{}, false, fmt.Errorf("replaying effect %s of run %s: %w", eff.Type, run.RunID, err)
				}
			}
			if pythonRecord {
				// Reused: the state accounts for it from now on, and a
				// later turn of a loop must not reuse it again.
				notePythonSave(run.Vars, prior.EndedAt, run.UpdatedAt)
			}
			out := Completed(pyjson.Clone(prior.Result))
			if eff.Type == durable.EffectStartSubworkflow {
				// An async child the handler started: its first tick was
				// a follow-up of the commit the replay stands in for.
				res, _ := prior.Result.(map[string]any)
				if child, _ := res["sub_run_id"].(string); child != "" && res["async"] == true {
					s.d.enqueueTick(child)
				}
			}
			if eff.Type == durable.EffectEmitEvent {
				// The listeners it resumed: their drive too.
				res, _ := prior.Result.(map[string]any)
				s.driveReplayedListeners(ctx, res["delivered_to"])
			}
			s.trace(plan.NodeID, key, eff, out, true, start)
			noteTokensUsed(run, eff, out)
			storeResult(run, eff, out)
			return out, false, nil
		}
	}

	var made attemptsMade
	if replaying || (!s.r.atomic && (!ok || !h.Local)) {
		// Attempts made before a pause, a shutdown or a kill count
		// against the policy's budget: the retry goes on where they left.
		if made, err = s.attemptsMade(ctx, key); err != nil {
			return Outcome{}, false, err
		}
	}
	if (replaying || !s.r.atomic) && (!ok || !h.Local) {
		if err := s.closeOrphanedAttempts(ctx, key); err != nil {
			return Outcome{}, false, err
		}
	}
	out, err := s.runAttempts(ctx, plan.NodeID, plan.NextNode, eff, key, h, ok, false, made)
	if err != nil {
		return Outcome{}, false, err
	}
	s.trace(plan.NodeID, key, eff, out, false, start)
	noteTokensUsed(run, eff, out)
	storeResult(run, eff, out)
	return out, !ok || !h.Local, nil
}

// runAttempts makes the attempts of an effect under the retry policy, each
// recorded STARTED, then COMPLETED / WAITING / FAILED / CANCELLED with the
// same step id under key (an external effect's STARTED record committed
// before its handler is called), and returns the final outcome (retries
// that all failed give "Effect failed after N attempts: <last error>").
// ok tells whether h is eff's registered handler. An attempt a cancel
// interrupts (or a back-off it cuts) commits the run cancelled and
// returns errStop; a pause requested between attempts returns errStop
// with the run at the checkpoint of the failed attempt. outOfGraph
// (ApplyEffect) turns a waiting outcome into a failure (there is no node
// to resume) and lets a pause request wait for the attempts to end.
func (s *session) runAttempts(ctx context.Context, nodeID, next string, eff *durable.Effect, key string, h Handler, ok, outOfGraph bool, made attemptsMade) (out Outcome, err error) {
	attempts := max(s.r.policy.MaxAttempts(eff), 1)
	if made.failed >= attempts {
		// Every attempt was made and failed; only the run's failure was
		// lost (a kill before the commit that makes it).
		return Failed(fmt.Sprintf("Effect failed after %d attempts: %s", attempts, made.lastError)), nil
	}
	if made.failed > 0 {
		// The backoff after the last failure holds across the pause or
		// restart that cut it: what is left of it is waited now.
		wait := made.lastEnd.Add(s.r.policy.Backoff(eff, made.failed)).Sub(s.r.now().Time)
		if err := s.retryWait(ctx, eff, max(wait, 0), outOfGraph); err != nil {
			return Outcome{}, err
		}
	}
	for attempt := made.failed + 1; attempt <= attempts; attempt++ {
		started := s.baseRecord(nodeID, durable.StepStarted)
		started.EndedAt = durable.Time{}
		started.Effect = eff.Clone()
		started.Attempt = attempt
		started.IdempotencyKey = key
		s.pending = append(s.pending, started)
		if !ok || !h.Local {
			// The attempt is evidenced durably before anything leaves
			// the process.
			if err := s.flush(ctx); err != nil {
				// It never began: the commit that keeps what the tick
				// did on its way out (steps) must not record it.
				s.pending = slices.DeleteFunc(s.pending, func(r *durable.StepRecord) bool { return r == started })
				return Outcome{}, err
			}
			s.openAttempt = started
		}
		if !ok {
			out = Failed(fmt.Sprintf("No effect handler registered for %s", eff.Type))
		} else {
			var err error
			out, err = s.callHandler(ctx, h, &EffectRequest{
				Run: s.run, Effect: eff, NodeID: nodeID, DefaultNext: next,
				IdempotencyKey: key, StepID: started.StepID, Attempt: attempt, Runtime: s.r, drv: s.d, tickCtx: ctx,
				outOfGraph: outOfGraph,
			})
			if err != nil {
				return Outcome{}, err
			}
			out = checkOutcomeJSON(out, eff.Type)
			if outOfGraph && out.Status == OutcomeWaiting {
				out = Failed(fmt.Sprintf("effect handler for %s asked the run to wait, which an effect applied outside its graph cannot do", eff.Type))
			}
		}
		end := *started
		end.EndedAt = s.r.now()
		end.Seq = 0
		switch out.Status {
		case OutcomeCompleted:
			end.Status = durable.StepCompleted
			// A copy that shares nothing with vars, typed containers
			// included: the record may wait in pending while later
			// nodes change what storeResult put there.
			if r, err := pyjson.Normalize(out.Result); err == nil {
				end.Result = r
			} else {
				end.Result = pyjson.Clone(out.Result)
			}
		case OutcomeWaiting:
			end.Status = durable.StepWaiting
			end.Result = map[string]any{"wait": out.Wait.Map()}
		case outcomeCancelled:
			end.Status = durable.StepCancelled
			end.Error = out.Error
		default:
			if out.Error == "" {
				out.Error = "unknown error" // as Python words a failure without one
			}
			end.Status = durable.StepFailed
			end.Error = out.Error
		}
		end.Effect = started.Effect
		s.pending = append(s.pending, &end)
		if out.Status == outcomeCancelled {
			// The attempt is cancelled: so is the run, in the same commit.
			// The Cancel that cut it would commit that once this tick
			// returns, but it may have given up waiting (its context
			// ended): the run must not stay running at an effect whose
			// attempt is recorded cancelled, to make it again. The Cancel,
			// if still there, then finds the run cancelled.
			s.stoppedBy = stoppedCancel
			cause := s.cutCause(ctx)
			if out.cancel != nil {
				cause = *out.cancel // a sync child's tree cancel that covers this run
			}
			if out.cancel != nil {
				// The Cancel the kill stopped would have ended this run's
				// other unfinished descendants too (an async child waiting
				// on a person): they are cancelled once the run is
				// unlocked, as resumeParent's cancelTree does. Queued
				// before the commit, so that a commit whose answer is lost
				// (made, but reported failed) keeps it for a retry; it does
				// nothing unless the run was committed cancelled.
				s.d.queue = append(s.d.queue, followUp{kind: followCancelTree, runID: s.run.RunID})
			}
			if err := s.commitCancelled(ctx, cause); err != nil && !errors.Is(err, errStop) {
				return Outcome{}, err
			}
			return Outcome{}, errStop
		}
		if out.Status != OutcomeFailed || attempt == attempts {
			break
		}
		if err := s.flush(ctx); err != nil {
			return Outcome{}, err
		}
		if err := s.retryWait(ctx, eff, s.r.policy.Backoff(eff, attempt), outOfGraph); err != nil {
			return Outcome{}, err
		}
	}
	if out.Status == OutcomeFailed {
		out.Error = fmt.Sprintf("Effect failed after %d attempts: %s", attempts, out.Error)
	}
	return out, nil
}

// retryWait waits d before the next attempt of eff. It returns errStop when
// a cancel cut the wait (the run is committed cancelled) or a pause or
// cancel was requested meanwhile (the run stays at its last checkpoint).
func (s *session) retryWait(ctx context.Context, eff *durable.Effect, d time.Duration, outOfGraph bool) error {
	cut, err := s.backoff(ctx, d, !outOfGraph)
	if err != nil {
		return fmt.Errorf("waiting to retry effect %s of run %s: %w", eff.Type, s.run.RunID, err)
	}
	if cut {
		// A cancel cut the wait: the run is cancelled now, as when it
		// cuts an attempt. Its request may be withdrawn already (a
		// retried tree cancel passing over this busy run), and then
		// no stop would be seen below: the next attempt would run
		// under a cancelled tree.
		s.stoppedBy = stoppedCancel
		if err := s.commitCancelled(ctx, s.cutCause(ctx)); err != nil && !errors.Is(err, errStop) {
			return err
		}
		return errStop
	}
	if !outOfGraph && s.signalled() {
		// A pause or cancel came between two attempts: no new attempt
		// starts; the run stays at the checkpoint just committed. An
		// effect applied outside the graph is not a step a pause stops
		// (the pause waits for it); a cancel stops its next attempt
		// before its handler is called (callHandler).
		return errStop
	}
	return nil
}

// replayChanges calls a RerunOnReplay handler for an effect whose
// completed record prior is reused, so that it makes again the changes to
// the run a kill may have cut off with the state; the recorded result
// stands (the handler is told it), and no record is added.
func (s *session) replayChanges(ctx context.Context, h Handler, eff *durable.Effect, nodeID, next, key string, prior *durable.StepRecord) error {
	_, err := s.callHandler(ctx, h, &EffectRequest{
		Run: s.run, Effect: eff, NodeID: nodeID, DefaultNext: next,
		IdempotencyKey: key, StepID: prior.StepID, Attempt: prior.Attempt, Runtime: s.r, drv: s.d, tickCtx: ctx,
		ReplayedResult: pyjson.Clone(prior.Result),
	})
	return err
}

// errEffectInterrupted marks a handler error that says nothing about the
// effect, only that it could not run to its end now (a sync child's tick
// that did not get through): the run stays at its checkpoint.
var errEffectInterrupted = errors.New("effect interrupted")

// errEffectStopped marks a handler that stopped at a host's request (a
// sync child whose tick a pause or a closed step gate stopped): this
// run's tick stops too, without error, at its last checkpoint.
var errEffectStopped = errors.New("effect stopped")

// backoff waits d before a retry. A cancel of the run cuts it short, as
// it cancels an attempt in flight, and reports it (cancelled): its
// request may be withdrawn before the caller looks. With onPause, a pause
// request cuts it short too (no attempt follows a pause); the caller then
// sees the request.
func (s *session) backoff(ctx context.Context, d time.Duration, onPause bool) (cancelled bool, err error) {
	bctx, stop, done := s.cancellable(ctx, onPause)
	defer done()
	stop = stop && onPause // without onPause only a cancel cuts it, through bctx
	if !stop {
		err = s.r.sleep(bctx, d)
	}
	switch cause := context.Cause(bctx); {
	case errors.Is(cause, ErrRunCancelled):
		return true, nil
	case stop || errors.Is(cause, errPauseRequested):
		return false, nil
	}
	return false, err
}

// errPauseRequested is the cause a pause request cancels a retry's
// backoff with.
var errPauseRequested = errors.New("run pause requested")

// cancellable returns a context that a cancel of the run cancels (cause
// ErrRunCancelled) until done is called, and a pause request too (cause
// errPauseRequested) when onPause is set, and whether a pause or cancel
// was already requested.
func (s *session) cancellable(ctx context.Context, onPause bool) (_ context.Context, stopRequested bool, done func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	outer, _ := ctx.Value(effectCutKey{}).(*effectCut)
	cctx = context.WithValue(cctx, effectCutKey{}, &effectCut{lock: s.lock, outer: outer})
	s.lock.sigMu.Lock()
	s.lock.cancelInflight = cancel
	s.lock.cutCause = cancelCause{}
	if onPause {
		s.lock.pauseWait = cancel
	}
	stopRequested = s.lock.pauseRequests > 0
	if s.lock.cancelRequests > 0 {
		s.lock.cutCause = s.lock.cancelCauses[0]
		cancel(ErrRunCancelled)
	}
	s.lock.sigMu.Unlock()
	return cctx, stopRequested, func() {
		s.lock.sigMu.Lock()
		s.lock.cancelInflight = nil
		s.lock.pauseWait = nil
		s.lock.sigMu.Unlock()
		cancel(nil)
	}
}

// effectCutKey is the context key of the effects in flight up the stack
// (a sync child's tick runs within its parent's effect), innermost first.
type effectCutKey struct{}

type effectCut struct {
	lock  *runLock
	outer *effectCut
}

// cutCause is the cause of the cancel that cut the context cancellable
// made last for this run, or else the context of an effect up the stack
// that ctx comes from (a sync child started after its parent's Cancel
// listed the tree: that cancel reaches it through its parent's effect);
// reason "Cancelled", aimed at no known run, if none is known.
func (s *session) cutCause(ctx context.Context) cancelCause {
	if c := lockedCutCause(s.lock); c.reason != "" {
		return c
	}
	for c, _ := ctx.Value(effectCutKey{}).(*effectCut); c != nil; c = c.outer {
		if cause := lockedCutCause(c.lock); cause.reason != "" {
			return cause
		}
	}
	return cancelCause{reason: "Cancelled"}
}

func lockedCutCause(l *runLock) cancelCause {
	l.sigMu.Lock()
	defer l.sigMu.Unlock()
	return l.cutCause
}

// storeResult writes a completed, non-null result at the effect's result
// key (the Python rule: failures and null results write nothing).
func storeResult(run *durable.RunState, eff *durable.Effect, out Outcome) {
	if out.Status == OutcomeCompleted && eff.ResultKey != "" && out.Result != nil {
		SetPath(run.Vars, eff.ResultKey, out.Result)
	}
}

// outcomeCancelled is the internal outcome of an attempt interrupted by
// Cancel; it is recorded and never retried.
const outcomeCancelled OutcomeStatus = "cancelled"

// cancelledOutcome is the outcome of a built-in handler that finds its
// run covered by a tree cancel (a sync child's, cancelCovering): the
// attempt ends cancelled and the run is committed cancelled with cause.
func cancelledOutcome(cause cancelCause) Outcome {
	return Outcome{Status: outcomeCancelled, Error: "cancelled", cancel: &cause}
}

// callHandler runs one attempt with a context that Cancel can interrupt.
func (s *session) callHandler(ctx context.Context, h Handler, req *EffectRequest) (out Outcome, err error) {
	effCtx, _, done := s.cancellable(ctx, false)
	defer done()
	if errors.Is(context.Cause(effCtx), ErrRunCancelled) {
		// Cancelled before it started (during the node or the STARTED
		// checkpoint): the attempt is recorded cancelled, never run.
		return Outcome{Status: outcomeCancelled, Error: "cancelled"}, nil
	}
	// Handlers get the run too: what one did to the fields the kernel
	// owns is undone (after a panic too, so deferred first), and fails
	// the attempt as a bad outcome does.
	before := kernelFieldsOf(req.Run)
	defer func() {
		if changed := before.restore(req.Run); changed != "" && err == nil && out.Status != outcomeCancelled {
			out = Failed(fmt.Sprintf("effect handler for %s %s", req.Effect.Type, changed))
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			// Judged as a returned error is: a panic of a handler whose
			// context was cut (it did not expect its call to fail so)
			// says as little about the run as its error would.
			out, err = Outcome{}, nil
			switch {
			case errors.Is(context.Cause(effCtx), ErrRunCancelled):
				out = Outcome{Status: outcomeCancelled, Error: "cancelled"}
			case ctx.Err() != nil:
				err = fmt.Errorf("effect %s of run %s interrupted (%w): handler panicked: %v",
					req.Effect.Type, req.Run.RunID, context.Cause(ctx), p)
			default:
				out = Failed(fmt.Sprintf("Effect handler raised exception: panic: %v", p))
			}
		}
	}()
	out, herr := h.Func(effCtx, req)
	if errors.Is(context.Cause(effCtx), ErrRunCancelled) {
		return Outcome{Status: outcomeCancelled, Error: "cancelled"}, nil
	}
	if errors.Is(herr, errEffectStopped) {
		// Stopped as the sync child was (a closed step gate): so is this
		// tick, and its own caller, a sync parent, learns why.
		s.stoppedBy = stoppedGate
		return Outcome{}, errStop
	}
	if errors.Is(herr, ErrRunClaimed) || errors.Is(herr, errEffectInterrupted) {
		// A run the effect drives (a sync child) is another runner's, or
		// its tick did not get through: this tick stops at its
		// checkpoint, the run is not failed.
		return Outcome{}, fmt.Errorf("effect %s of run %s interrupted: %w", req.Effect.Type, req.Run.RunID, herr)
	}
	if ctx.Err() != nil && (herr != nil || out.Status == OutcomeFailed) {
		// The caller went away (a shutdown, a lost claim) while the effect
		// ran: its failure says nothing about the run, which stays at its
		// last checkpoint and replays the attempt when it continues.
		if herr == nil {
			herr = errors.New(out.Error)
		}
		return Outcome{}, fmt.Errorf("effect %s of run %s interrupted (%w): %w", req.Effect.Type, req.Run.RunID, context.Cause(ctx), herr)
	}
	if herr != nil {
		return Failed(fmt.Sprintf("Effect handler raised exception: %v", herr)), nil
	}
	switch out.Status {
	case OutcomeCompleted, OutcomeFailed:
	case outcomeCancelled:
		if out.cancel == nil {
			return Failed(fmt.Sprintf("effect handler for %s returned an unknown outcome %q", req.Effect.Type, out.Status)), nil
		}
	case OutcomeWaiting:
		if out.Wait == nil {
			return Failed(fmt.Sprintf("effect handler for %s returned a waiting outcome without a wait", req.Effect.Type)), nil
		}
		if !out.Wait.Reason.Valid() {
			// Stored, it would make the run unreadable: every decoder
			// refuses a wait reason it does not know.
			return Failed(fmt.Sprintf("effect handler for %s returned a wait with reason %q, not one of the wait reasons",
				req.Effect.Type, out.Wait.Reason)), nil
		}
	default:
		return Failed(fmt.Sprintf("effect handler for %s returned an unknown outcome %q", req.Effect.Type, out.Status)), nil
	}
	return out, nil
}

// trace appends the node trace entry of an effect outcome.
func (s *session) trace(nodeID, key string, eff *durable.Effect, out Outcome, reused bool, start time.Time) {
	now := s.r.now().String()
	entry := map[string]any{
		"ts":                  now,
		"node_id":             nodeID,
		"status":              string(out.Status),
		"idempotency_key":     key,
		"reused_prior_result": reused,
		"effect":              eff.Map(),
		"duration_ms":         float64(time.Since(start).Microseconds()) / 1000,
	}
	switch out.Status {
	case OutcomeCompleted:
		entry["result"] = pyjson.Clone(out.Result)
	case OutcomeWaiting:
		entry["wait"] = out.Wait.Map()
	default:
		entry["error"] = out.Error
	}
	appendTrace(s.run.Vars, nodeID, entry, now)
}

// checkOutcomeJSON fails an outcome whose result or wait details are not
// JSON, before anything copies them: a value that contains itself would
// otherwise overflow the stack of the first deep copy. Depths are where a
// step record holds them (result, result.wait.details); deeper limits are
// enforced when the run's vars are checked at its commit.
func checkOutcomeJSON(out Outcome, t durable.EffectType) Outcome {
	var err error
	switch {
	case out.Status == OutcomeCompleted:
		err = pyjson.CheckMember(out.Result, "result", 1)
	case out.Status == OutcomeWaiting && out.Wait != nil:
		err = pyjson.CheckMember(out.Wait.Details, "wait.details", 3)
	}
	if err != nil {
		return Failed(fmt.Sprintf("handler of %s returned a value that is not JSON: %v", t, err))
	}
	return out
}

// orphanedAttemptError is the error of the end closeOrphanedAttempts
// gives an attempt that never got one.
const orphanedAttemptError = "interrupted: the attempt's end was never recorded (its tick was stopped or its process died); the effect is attempted again"

// closeOrphanedAttempts queues a failed end for each attempt under key
// whose STARTED record is among the ledger's last records without an end:
// an attempt its tick's caller interrupted (a shutdown, a lost claim), or
// whose process died, before the effect returned, or a STARTED record a
// kill left without its state on a store that appends records first. The
// effect is now attempted again, and the ledger would otherwise show the
// old attempt in flight for ever (Python appends the end of every attempt
// it starts). A failed end is what a replay assumes anyway: nothing
// reuses it, and the effect is attempted again under the same key (spec
// §2.11). Such a STARTED record is among the last of the ledger, which
// the session's tail holds (readTail).
func (s *session) closeOrphanedAttempts(ctx context.Context, key string) error {
	if err := s.readTail(ctx); err != nil {
		return err
	}
	for _, started := range openAttempts(s.tailKeyed[key]) {
		s.pending = append(s.pending, attemptEnd(started, durable.StepFailed, orphanedAttemptError, s.r.now()))
	}
	delete(s.tailKeyed, key) // ended now: not again
	return nil
}

// attemptsMade tells how many attempts of an effect failed under its key
// before its run's checkpoint was replayed, and the last one's error.
type attemptsMade struct {
	failed    int
	lastError string
	lastEnd   time.Time
}

// attemptsMade reads the attempts a pause between attempts, a shutdown or
// a kill left behind under key, so that the policy's budget holds across
// them: the next attempt is the one after the last that failed. An
// interrupted attempt (still open, or ended by closeOrphanedAttempts)
// spends nothing, and is made again under its own number: the effect never
// told it failed, a shutdown must not use up a run's only attempt, and an
// effect whose handler derives something from the number (a child's run
// id) finds again what the interrupted attempt made.
func (s *session) attemptsMade(ctx context.Context, key string) (attemptsMade, error) {
	if err := s.readTail(ctx); err != nil {
		return attemptsMade{}, err
	}
	var made attemptsMade
	for _, rec := range s.tailKeyed[key] {
		if rec.Status == durable.StepFailed && rec.Error != orphanedAttemptError && rec.Attempt > made.failed {
			made = attemptsMade{failed: rec.Attempt, lastError: rec.Error, lastEnd: rec.EndedAt.Time}
		}
	}
	return made, nil
}

// tailWindow is how many of the last ledger records durableWait reads. A
// waiting end record left without its state is the last effect record of
// the commit a kill cut (a wait ends the stretch of work a commit holds),
// and the session that replays it reads the ledger before its own first
// commit: only status events of that commit and the few records others
// append in between can follow it. (The JSON-file store numbers a run's
// records from 1, so the window is the last tailWindow records.)
const tailWindow = 64

// durableWait returns the wait an attempt of the effect with key ended in
// when the latest record under key in the ledger's tail is its waiting
// end, or nil. On a store without atomic commits a kill between the
// ledger append and the state write leaves that record durable with the
// run still before the effect; the wait is its outcome, and calling the
// handler again would repeat what it did (a job submitted twice). A
// failed end is not reused: a failed attempt is retried under the same
// key by contract, and a replay attempts the effect again (spec §2.11).
// The tail is read once per loaded run: the records the session appends
// later are under keys it has passed.
func (s *session) durableWait(ctx context.Context, key string) (*durable.WaitState, error) {
	if err := s.readTail(ctx); err != nil {
		return nil, err
	}
	rec := s.tail[key]
	if rec == nil || rec.Status != durable.StepWaiting {
		return nil, nil
	}
	wm, err := s.recordWait(ctx, rec)
	if err != nil {
		return nil, err
	}
	w, err := durable.DecodeWaitState(wm)
	if err != nil || w == nil {
		// Unreadable: the attempt is made again, as before records
		// were looked up.
		return nil, nil
	}
	return w, nil
}

// readTail reads the ledger's last tailWindow records once per loaded run
// (durableWait, closeOrphanedAttempts): the records the session appends
// later are under keys it has passed.
func (s *session) readTail(ctx context.Context) error {
	if s.tailRead {
		return nil
	}
	runID := s.run.RunID
	n, err := s.r.store.LedgerCount(ctx, runID)
	if err != nil {
		return fmt.Errorf("counting the ledger of run %s: %w", runID, err)
	}
	recs, err := s.r.store.LedgerList(ctx, &store.LedgerListParams{RunID: runID, After: max(n-tailWindow, 0)})
	if err != nil {
		return fmt.Errorf("reading the ledger of run %s: %w", runID, err)
	}
	s.tail = make(map[string]*durable.StepRecord, len(recs))
	s.tailKeyed = make(map[string][]*durable.StepRecord, len(recs))
	for _, r := range recs {
		if key := r.IdempotencyKey; key != "" {
			s.tail[key] = r
			s.tailKeyed[key] = append(s.tailKeyed[key], r)
		}
	}
	s.tailRead = true
	return nil
}

// driveReplayedListeners queues what followed the delivery of an
// EMIT_EVENT whose recorded result a replay reuses, the follow-ups of the
// commit the replay stands in for: the drive of each listener it names
// (delivered_to) still running, not paused, of a workflow this runtime
// serves (one it does not serve is left to a runtime that does, as the
// delivery leaves it), and the resume of the waiting parent of one the
// event ended. A listener that cannot be read is queued, its tick
// telling.
func (s *session) driveReplayedListeners(ctx context.Context, delivered any) {
	ids, _ := delivered.([]any)
	for _, v := range ids {
		id, _ := v.(string)
		if id == "" || id == s.run.RunID {
			continue
		}
		l, err := s.r.store.RunGet(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err == nil && l.Status.Terminal() {
			s.d.afterTerminal(l)
			continue
		}
		if err == nil {
			if _, served := s.r.registry.Get(l.WorkflowID); l.Status != durable.RunRunning || IsPaused(l) || !served {
				continue
			}
		}
		s.d.enqueueTick(id)
	}
}
