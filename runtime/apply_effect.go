package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// ApplyEffectParams is the input of ApplyEffect.
type ApplyEffectParams struct {
	RunID string
	// NodeID names the effect's ledger records (the gateway's
	// "compact_memory", "auto_compact"); required. It need not be a node
	// of the run's workflow.
	NodeID string
	// Effect is the effect to run; its result, when completed and not
	// null, is written at its ResultKey in the run's vars.
	Effect *durable.Effect
	// IdempotencyKey is the records' key (the gateway's
	// "command:compact_memory:<command id>"); required. A completed record
	// under it is reused: the effect applied again (a command delivered
	// twice) does not run twice.
	IdempotencyKey string
}

// ErrRunEnded is the error of ApplyEffect on a run that has ended.
var ErrRunEnded = errors.New("run has ended")

// ApplyEffect runs one effect on an existing run outside its graph, as a
// host does for a command that acts on a run without moving it (the
// gateway's compact_memory command and its auto-compaction, gateway-api
// §4.4 and §8.7; Python calls the runtime's effect execution on a loaded
// run, then saves it). The run's status, node and wait are left as they
// are. The effect's attempts follow the retry policy and are recorded as
// in a tick (STARTED, then COMPLETED or FAILED with the same step id,
// under NodeID and IdempotencyKey; an external effect's STARTED record is
// committed before its handler is called); the result is written at the
// effect's result key; the run is committed with them. The run's effect
// sequence is not used (the key is the caller's), so the keys of the
// run's own effects do not move.
//
// It works under the run's lock and claim, as a host update does: it
// waits for a tick in progress, and takes over a waiting run that a dead
// runner left claimed. A paused run is allowed (the pause is kept). A
// Cancel of the run interrupts the effect: the attempt is recorded
// cancelled, the run is committed cancelled, and the error wraps
// ErrRunCancelled. A handler that asks the run to wait fails the attempt
// (there is no node to resume).
//
// A failed effect is not an error: the Outcome says so (status failed,
// "Effect failed after N attempts: …"), with its records committed.
// Errors: a missing node id, effect or key, or one that is not UTF-8;
// ErrRunEnded; an effect type without a handler, or a payload that is not
// JSON (nothing recorded);
// ErrOwnRunLocked from within the run's own tick; ErrRunClaimed when
// another runner works on the run; a store error.
func (r *Runtime) ApplyEffect(ctx context.Context, p ApplyEffectParams) (Outcome, error) {
	switch {
	case p.NodeID == "":
		return Outcome{}, fmt.Errorf("apply effect to run %s: the node id is empty", p.RunID)
	case p.Effect == nil || p.Effect.Type == "":
		return Outcome{}, fmt.Errorf("apply effect to run %s: no effect type", p.RunID)
	case p.IdempotencyKey == "":
		return Outcome{}, fmt.Errorf("apply effect to run %s: the idempotency key is empty", p.RunID)
	}
	// The records and the run are written as JSON text, where bytes that
	// are not UTF-8 become U+FFFD: a completed record under such a key
	// would never be found by it again (the effect would run again on every
	// call), and a result key so written collides, on the next call, with
	// the key read back. Refused, as Start and EmitEvent refuse such ids.
	if err := checkUTF8("node id", p.NodeID, "idempotency key", p.IdempotencyKey, "result key", p.Effect.ResultKey); err != nil {
		return Outcome{}, fmt.Errorf("apply effect to run %s: %w", p.RunID, err)
	}
	h, ok := r.handlers[p.Effect.Type]
	if !ok {
		return Outcome{}, fmt.Errorf("apply effect to run %s: no effect handler registered for %s", p.RunID, p.Effect.Type)
	}
	eff := p.Effect.Clone()
	// At the depth its STARTED record holds it (effect.payload).
	if err := pyjson.CheckMember(eff.Payload, "effect.payload", 2); err != nil {
		return Outcome{}, fmt.Errorf("apply effect to run %s: %w", p.RunID, err)
	}
	if eff.Payload != nil {
		norm, err := pyjson.NormalizeObject(eff.Payload)
		if err != nil {
			return Outcome{}, fmt.Errorf("apply effect to run %s: %w", p.RunID, err)
		}
		eff.Payload = norm
	}
	if eff.Type == durable.EffectToolCalls {
		eff = withRuntimeCallIDs(eff, p.IdempotencyKey)
	}

	d := r.newDriver(nil)
	out, err := d.applyEffect(ctx, p.RunID, p.NodeID, eff, p.IdempotencyKey, h)
	if err != nil {
		if errors.Is(err, ErrRunCancelled) || errors.Is(err, ErrRunChanged) {
			// The run ended during the call: its parent learns it now, as
			// after a tick that ended it.
			d.drain(ctx)
		} else {
			d.keepQueued(ctx)
		}
		return Outcome{}, fmt.Errorf("apply effect %s to run %s: %w", eff.Type, p.RunID, err)
	}
	// What the effect set in motion (a summariser child's end, a cancel
	// tree) is driven once the run is unlocked.
	d.drain(ctx)
	return out, nil
}

func (d *driver) applyEffect(ctx context.Context, runID, nodeID string, eff *durable.Effect, key string, h Handler) (Outcome, error) {
	// No tick: the run's workflow need not be registered here.
	ctx, s, unlock, err := d.openRun(ctx, runID, d.claimFor(claimTakeover), false)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	if s.run.Status.Terminal() {
		return Outcome{}, fmt.Errorf("%w (status %s)", ErrRunEnded, s.run.Status)
	}
	s.holdEffectInFlight()
	prior, err := d.r.findCompleted(ctx, runID, key)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	if prior != nil {
		if h.RerunOnReplay {
			// Its changes to the run may have been lost with a commit a
			// kill cut off (a store without atomic commits): the handler
			// makes them again, idempotent under the key; the recorded
			// result stands.
			if err := s.replayChanges(ctx, h, eff, nodeID, "", key, prior); err != nil {
				return Outcome{}, s.claimErr(err)
			}
		}
		out = Completed(pyjson.Clone(prior.Result))
	} else {
		if !h.Local && ctx.Err() != nil {
			// Nothing leaves the process for a caller that went away.
			return Outcome{}, fmt.Errorf("not started: %w", context.Cause(ctx))
		}
		if !h.Local {
			// A call interrupted before its effect returned (a caller
			// gone, a process killed) left its attempt open: it ends here.
			if err := s.closeOrphanedAttempts(ctx, key); err != nil {
				return Outcome{}, s.claimErr(err)
			}
		}
		out, err = s.runAttempts(ctx, nodeID, "", eff, key, h, true, true, attemptsMade{})
		if errors.Is(err, errStop) {
			if s.run.Status == durable.RunCancelled {
				return Outcome{}, fmt.Errorf("the run was cancelled during the effect: %w", ErrRunCancelled)
			}
			// Another writer ended or paused the run (a commit between
			// attempts conflicted): its write wins.
			return Outcome{}, fmt.Errorf("the run was ended or paused by another writer during the effect: %w", ErrRunChanged)
		}
		if err != nil {
			return Outcome{}, s.claimErr(err)
		}
	}
	noteTokensUsed(s.run, eff, out)
	storeResult(s.run, eff, out)
	if bad := s.checkJSON(); bad != nil {
		return Outcome{}, s.dropUnserialisable(ctx, key, bad)
	}
	s.dirty = true
	if err := s.flush(ctx); err != nil {
		if errors.Is(err, errStop) {
			// Another writer ended or paused the run meanwhile (the commit
			// conflicted): its write wins, and with it the run's state
			// before the effect. The attempt's end was kept in the ledger
			// of a run that has not ended (keepLostAttemptEnd): a retry
			// under the same key reuses it.
			return Outcome{}, fmt.Errorf("the run was ended or paused by another writer during the effect: %w", ErrRunChanged)
		}
		return Outcome{}, s.claimErr(err)
	}
	return out, nil
}

// holdEffectInFlight takes out of the run's vars the plan in flight its
// checkpoint holds (a tick interrupted during an external effect, a pause
// during a retry's back-off), which no handler may see, and has the
// session's commits write it back with their own time, as a tick's do, so
// that the next tick still replays that effect instead of running its node
// again.
func (s *session) holdEffectInFlight() {
	rt, _ := s.run.Vars["_runtime"].(map[string]any)
	if _, ok := rt[effectInFlightKey]; !ok {
		return
	}
	node := s.run.CurrentNode
	if plan, ok := takeEffectInFlight(s.run.Vars, node, s.run.UpdatedAt); ok {
		s.inFlightNode, s.inFlight = node, plan
	}
}

// dropUnserialisable handles a handler that left a value in the run's
// vars that is not JSON (or a run no store could read back): the working
// copy is dropped for the stored run, the effect's completion is recorded
// failed, naming the value, and committed with the run left as stored.
func (s *session) dropUnserialisable(ctx context.Context, key string, bad error) error {
	cur, err := s.r.store.RunGet(ctx, s.run.RunID)
	if err != nil {
		return fmt.Errorf("reloading run %s after its handler left it unserialisable (%v): %w", s.run.RunID, bad, err)
	}
	s.run = cur
	msg := fmt.Sprintf("the effect handler left the run unserialisable: %v", bad)
	for _, rec := range s.pending {
		if rec.IdempotencyKey == key && rec.Status == durable.StepCompleted {
			rec.Status, rec.Error, rec.Result = durable.StepFailed, msg, nil
		}
	}
	s.dirty = true
	if err := s.flush(ctx); err != nil {
		return s.claimErr(err)
	}
	return errors.New(msg)
}
