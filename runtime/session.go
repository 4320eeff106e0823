package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// session is one locked pass over a run: the working copy of its state,
// the ledger records not yet committed, and whether the state changed
// since the last checkpoint.
//
// Pure transitions only change the working copy. A checkpoint (flush)
// commits the pending records and the state in one store call at durable
// boundaries: before and after a non-local effect, on a wait, on a
// terminal status and at the end of a tick. A crash in between re-runs
// pure node functions from the last checkpoint, which is safe because
// every side effect goes through an effect handler.
type session struct {
	r       *Runtime
	d       *driver
	lock    *runLock
	claim   *claimHold // nil without claims
	run     *durable.RunState
	wf      *Workflow
	pending []*durable.StepRecord
	dirty   bool
	// detachedFrom and detachedCtx cache detached's last context.
	detachedFrom, detachedCtx context.Context
	rc                        *RunContext   // reused by every step of the session
	nodeCalls                 []nodeCallCtx // unused contexts for node calls (nodeCall)
	// commits counts the session's commits; dropped reports that a
	// conflict discarded uncommitted work (onConflict): a resume whose
	// records were discarded so did not happen.
	commits int
	dropped bool
	// failedCommit is the error of a commit that failed other than by a
	// conflict (or of the look-up a terminal commit depends on). Nothing
	// is committed after it in this session: the store
	// may hold part of it (a non-atomic store appends the records first),
	// so a retry could append them twice; the next tick starts over from
	// what the store holds.
	failedCommit error
	// inFlight is the plan of the node whose effect is being executed
	// (at inFlightNode); a commit meanwhile records it in the run
	// (effectInFlightKey). loadChecked is set once the session's run was
	// checked for a plan recorded so.
	inFlight     StepPlan
	inFlightNode string // "" when no effect is in flight
	loadChecked  bool
	// tail maps the idempotency key of each of the last ledger records of
	// the loaded run to the latest of them carrying it; tailRead is set
	// once it was read (durableWait).
	tail     map[string]*durable.StepRecord
	tailRead bool
	// tailKeyed maps a key to the tail's records under it, in ledger
	// order (closeOrphanedAttempts).
	tailKeyed map[string][]*durable.StepRecord
	// openAttempt is the STARTED record of an attempt committed before
	// its effect left the process, until a commit takes its end along
	// (or the session drops its work): failUnserialisable closes it.
	openAttempt *durable.StepRecord
	// replayingInFlight is set while the step replays the plan its loaded
	// checkpoint held in flight: execute then looks for the attempt's end
	// even on an atomic store, where a commit that lost to another writer
	// may have left it in the ledger alone (keepLostAttemptEnd).
	replayingInFlight bool
	// failing is the error the session is failing the run with.
	failing string
	// stoppedBy says why the session stopped before its step budget at a
	// host's request, if it did.
	stoppedBy stopCause
	// abandoned is set when a node gave up on its cancelled context: the
	// session's uncommitted work is dropped, not committed.
	abandoned bool
	// made counts the node steps the session started (past the gate).
	made int
}

// claimErr returns the lost claim's error in place of err (typically the
// context cancellation it caused), so callers see ErrRunClaimed.
func (s *session) claimErr(err error) error { return s.claim.or(err) }

// errStop ends a tick early without error (pause/cancel requested, or a
// concurrent writer changed the run to a state this tick must respect).
var errStop = errors.New("tick stopped")

// stopCause is why a host stopped a session: the run's status does not
// say yet, as a pause or cancel commits once the session returns.
type stopCause int

const (
	notStopped    stopCause = iota
	stoppedPause            // a pause request
	stoppedCancel           // a cancel request, or an attempt it interrupted
	stoppedGate             // a closed step gate
)

// flush commits pending records and the working state.
func (s *session) flush(ctx context.Context) error {
	if s.failedCommit != nil {
		return s.failedCommit
	}
	if !s.dirty && len(s.pending) == 0 {
		return nil
	}
	if err := s.checkJSON(); err != nil {
		return s.failUnserialisable(ctx, err)
	}
	return s.commit(ctx)
}

// detached returns ctx without its cancellation, made once per context a
// session commits with.
func (s *session) detached(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx // never cancelled
	}
	if s.detachedFrom != ctx {
		s.detachedFrom, s.detachedCtx = ctx, context.WithoutCancel(ctx)
	}
	return s.detachedCtx
}

func (s *session) commit(ctx context.Context) error {
	if err := s.claim.lost(); err != nil {
		// Another runner owns the run now; its version of the run wins.
		return err
	}
	prev := s.run.UpdatedAt
	s.run.UpdatedAt = s.r.now()
	keepPythonSave(s.run.Vars, prev, s.run.UpdatedAt)
	if s.inFlightNode != "" {
		// The store copies or encodes the run within RunCommit.
		setEffectInFlight(s.run.Vars, s.inFlightNode, s.inFlight, s.run.UpdatedAt)
		defer clearEffectInFlight(s.run.Vars)
	}
	// Whether or not the caller has gone away (a shutdown) by now, or
	// goes while the store writes, the work done is kept, an external
	// effect's completion above all, rather than replayed: the commit
	// does not see the caller's cancellation. Stores bound their own
	// writes (PostgreSQL's WriteTimeout, SQLite's busy timeout). A lost
	// claim was refused above.
	ctx = s.detached(ctx)
	err := s.r.store.RunCommit(ctx, &store.CommitParams{Run: s.run, Records: s.pending})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return s.onConflict(ctx, err)
		}
		s.failedCommit = fmt.Errorf("committing run %s: %w", s.run.RunID, err)
		return s.failedCommit
	}
	s.pending = s.pending[:0]
	s.dirty = false
	s.commits++
	s.openAttempt = nil
	return nil
}

// errUnreadableRun marks a working copy that no store could read back.
var errUnreadableRun = errors.New("the run's state could not be read back once stored")

// checkJSON checks that the run can be read back once stored (its status
// and wait reason), vars where the run's JSON holds them (one level down)
// and the output where the completion record does (result.output, two),
// so that the nesting limit is the stores'.
func (s *session) checkJSON() error {
	if err := s.run.CheckReadable(); err != nil {
		// Node and handler calls undo such writes (kernelFields); this
		// is the last guard: a store refuses the run, as it could not
		// read it back.
		return fmt.Errorf("%w: %w", errUnreadableRun, err)
	}
	if err := pyjson.CheckMember(s.run.Vars, "vars", 1); err != nil {
		return err
	}
	if s.run.Output != nil {
		return pyjson.CheckMember(s.run.Output, "output", 2)
	}
	return nil
}

// onConflict handles a commit refused because another writer changed the
// run. A cancel or pause by a host wins: the tick stops and its uncommitted
// progress is discarded (it is re-run from the checkpoint when the run
// continues). Anything else is an error for the caller. The end of an
// external effect's attempt is kept, though (keepLostAttemptEnd).
func (s *session) onConflict(ctx context.Context, cause error) error {
	cur, err := s.r.store.RunGet(ctx, s.run.RunID)
	if err != nil {
		return fmt.Errorf("reloading run %s after a conflict: %w", s.run.RunID, err)
	}
	s.keepLostAttemptEnd(ctx)
	s.run = cur
	s.pending = s.pending[:0]
	s.dirty = false
	s.dropped = true
	s.inFlightNode, s.loadChecked = "", false
	s.tail, s.tailKeyed, s.tailRead = nil, nil, false
	s.openAttempt = nil
	if cur.Status.Terminal() || IsPaused(cur) {
		return errStop
	}
	if s.claim != nil {
		// The writer may be a runner that took the run over (its fence):
		// asking the store now makes the error ErrRunClaimed (claimErr),
		// a run handed on, not a failed tick.
		s.claim.renew()
	}
	return fmt.Errorf("run %s was changed by another writer: %w", cur.RunID, cause)
}

// keepLostAttemptEnd appends to the ledger, alone, the end of the attempt
// whose STARTED record this session committed (openAttempt) when the
// commit carrying it lost to another writer's: the effect left the
// process, so its end is a fact whatever the run's state. The run stays as
// the other writer left it, but the next tick replaying the effect (a run
// paused during the call, then resumed) or a caller retrying ApplyEffect
// under the same key finds the completion and reuses its result instead
// of running the effect a second time. An end another writer gave the
// attempt meanwhile stands (a Cancel closing it, a replay that took it
// for dead), so the attempt never has two. A waiting end is not kept: a
// replay that reused it would wait for an answer that may have come
// while the commit was lost (a child that ended meanwhile), with nothing
// left to deliver it; the replay calls the handler again, as it did.
func (s *session) keepLostAttemptEnd(ctx context.Context) {
	started := s.openAttempt
	ends := s.keepAttemptEnd(nil, s.pending)
	ends = slices.DeleteFunc(ends, func(r *durable.StepRecord) bool { return r.Status == durable.StepWaiting })
	if len(ends) == 0 {
		return
	}
	ctx = s.detached(ctx)
	since, err := s.r.store.LedgerList(ctx, &store.LedgerListParams{RunID: s.run.RunID, After: started.Seq})
	if err == nil {
		for _, r := range since {
			if r.StepID == started.StepID && r.Status != durable.StepStarted {
				return // ended by another writer
			}
		}
		err = s.r.store.LedgerAppend(ctx, s.run.RunID, ends)
	}
	if err != nil {
		// The attempt stays open in the ledger, as after a kill before
		// its end was written: a replay runs the effect again.
		s.r.logger.WarnContext(ctx, "could not record the end of an effect attempt whose commit lost to another writer",
			"run_id", s.run.RunID, "step_id", started.StepID, "error", err)
	}
}

// failUnserialisable fails the run because a node or handler put a value
// in vars (or the output) that is not JSON, or left the run in a state no
// store could read back (checkJSON). The last checkpoint is kept as
// the base so nothing durable is lost; the error names the key path. The
// failure is recorded against the checkpoint's node, and an attempt whose
// STARTED record that checkpoint holds is closed: its effect ran, but its
// outcome is dropped with the working copy.
func (s *session) failUnserialisable(ctx context.Context, cause error) error {
	cur, err := s.r.store.RunGet(ctx, s.run.RunID)
	if err != nil {
		return fmt.Errorf("reloading run %s: %w", s.run.RunID, err)
	}
	closing := s.closeOpenAttempt(cause)
	s.run = cur
	s.pending = s.pending[:0]
	s.inFlightNode, s.loadChecked = "", false
	s.tail, s.tailKeyed, s.tailRead = nil, nil, false
	if cur.Status.Terminal() || IsPaused(cur) {
		// Another writer ended or paused the run meanwhile: that wins, as
		// in onConflict, and the bad value was never durable anyway.
		s.dirty = false
		s.dropped = true
		s.openAttempt = nil
		return errStop
	}
	// The run ends here: the plan in flight its checkpoint may hold is
	// never replayed.
	clearEffectInFlight(cur.Vars)
	if closing != nil {
		s.pending = append(s.pending, closing)
	}
	s.dirty = true
	msg := cause.Error()
	if s.failing != "" {
		// The run was failing anyway (a node's error): that error is the
		// one to record; the writes that were not JSON are dropped.
		msg = s.failing
	}
	return s.fail(ctx, cur.CurrentNode, msg)
}

// closeOpenAttempt returns the record that ends the committed attempt
// still open (openAttempt), if any, when the session's uncommitted work is
// about to be dropped because of cause: its pending end record if that
// says it failed or was cancelled, else a failed end naming cause, as
// checkOutcomeJSON words a handler's result that is not JSON. The attempt
// stays open until that record is committed (keepAttemptEnd keeps it).
func (s *session) closeOpenAttempt(cause error) *durable.StepRecord {
	started := s.openAttempt
	if started == nil {
		return nil
	}
	for _, r := range s.pending {
		if r.StepID == started.StepID && r != started &&
			(r.Status == durable.StepFailed || r.Status == durable.StepCancelled) {
			return r
		}
	}
	end := *started
	end.EndedAt = s.r.now()
	end.Seq = 0
	end.Status = durable.StepFailed
	end.Result = nil
	var typ durable.EffectType
	if started.Effect != nil {
		typ = started.Effect.Type
	}
	if errors.Is(cause, errUnreadableRun) {
		end.Error = fmt.Sprintf("handler of %s left the run in a state that cannot be stored: %v", typ, cause)
	} else {
		end.Error = fmt.Sprintf("handler of %s wrote a value that is not JSON: %v", typ, cause)
	}
	return &end
}

// fail ends the run as failed with msg, recording a failed step (unless
// the caller already queued its own record) and the status event.
func (s *session) fail(ctx context.Context, nodeID, msg string) error {
	s.failing = msg
	if nodeID != "" {
		s.pending = append(s.pending, s.failureRecord(nodeID, msg))
	}
	return s.finish(ctx, durable.RunFailed, msg, nil)
}

// keepAttemptEnd appends to dst the records of pending that end the
// attempt this session committed the STARTED record of (openAttempt) and
// returns dst. A replay that finds the terminal records of a commit a kill
// cut already in the ledger drops what it queued again, but the attempt
// it made itself is new: its STARTED record is durable, and without its
// end the ledger would show it in flight for ever (Python appends the end
// of every attempt it starts). dst may share pending's array: it never
// grows past the record being read.
func (s *session) keepAttemptEnd(dst, pending []*durable.StepRecord) []*durable.StepRecord {
	started := s.openAttempt
	if started == nil {
		return dst
	}
	for _, r := range pending {
		if r != started && r.StepID == started.StepID {
			dst = append(dst, r)
		}
	}
	return dst
}

// finish moves the run to a terminal status and commits it together with
// the terminal records (ledger before state, one commit where the store is
// atomic). On a non-atomic store a replay whose terminal records are
// already in the ledger does not append them twice; it appends only the
// end of the attempt it made itself (keepAttemptEnd).
func (s *session) finish(ctx context.Context, status durable.RunStatus, errMsg string, output map[string]any) error {
	// The run ends here: a plan in flight (a retry's back-off or an
	// attempt a cancel cut) is never replayed, and no terminal state
	// keeps one, nor one its last checkpoint recorded.
	s.inFlightNode = ""
	clearEffectInFlight(s.run.Vars)
	s.run.Status = status
	s.run.Waiting = nil
	s.run.Error = errMsg
	if output != nil {
		s.run.Output = output
	}
	s.pending = append(s.pending, s.statusEvent(status))
	if !s.r.atomic {
		prior, err := s.r.findCompleted(ctx, s.run.RunID, TerminalStatusKey(status))
		if err != nil {
			// Not knowing whether the terminal records are there, commit
			// nothing (as after a failed commit): the next tick starts
			// over from what the store holds.
			s.failedCommit = fmt.Errorf("finishing run %s: %w", s.run.RunID, err)
			return s.failedCommit
		}
		if prior != nil {
			s.pending = s.keepAttemptEnd(s.pending[:0], s.pending)
		}
	}
	s.dirty = true
	err := s.flush(ctx)
	// Queued even when the commit failed: it may have landed with its
	// answer lost, and the failed call keeps the parent's resume. A retry
	// that finds the child not ended in the store does nothing.
	s.d.afterTerminal(s.run)
	if err != nil {
		return err
	}
	return errStop
}

// findCompleted returns the first completed record with key, or nil.
func (r *Runtime) findCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	rec, err := store.FindCompleted(ctx, r.store, runID, key)
	if err != nil {
		return nil, fmt.Errorf("searching the ledger of run %s: %w", runID, err)
	}
	return rec, nil
}

// signalled reports whether a host asked this run to stop at the next
// step boundary (pause or cancel in progress), and records which.
func (s *session) signalled() bool {
	s.lock.sigMu.Lock()
	defer s.lock.sigMu.Unlock()
	switch {
	case s.lock.cancelRequests > 0:
		s.stoppedBy = stoppedCancel
	case s.lock.pauseRequests > 0:
		s.stoppedBy = stoppedPause
	}
	return s.lock.pauseRequests > 0
}
