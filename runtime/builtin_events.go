package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// maxListeners bounds one event delivery, as in the Python kernel.
const maxListeners = 10000

// EMIT_EVENT: resumes every non-paused run waiting on the event's key (or
// on the scope's wildcard key) with the event envelope. Delivery is
// at-least-once; resumed listeners are driven after the emitter's tick,
// but for those of workflows this runtime does not serve (see deliver).
func handleEmitEvent(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	run := req.Run
	// Python: payload.get("name") or payload.get("event_name"), which
	// must then be a non-blank string (a number name does not fall back).
	rawName := p["name"]
	if !truthy(rawName) {
		rawName = p["event_name"]
	}
	name, _ := rawName.(string)
	if pyval.Strip(name) == "" {
		return Failed("emit_event requires payload.name"), nil
	}
	// As Python: the envelope and result carry the scope and name as
	// given; the key is built from their normalised forms.
	rawScope := eventScope(p["scope"])
	scope := pyval.Lower(pyval.Strip(rawScope))
	// payload.session_id, any non-null value as Python's str(); the
	// session scope defaults to the run's session (or its id).
	var session any
	if v := p["session_id"]; v != nil {
		session = pyval.Str(v)
	} else if scope == "session" {
		session = sessionOr(run)
	}
	sessionText, _ := session.(string)
	sid := pyval.Strip(scopeID(run, scope, sessionText))
	key, err := EventKey(rawScope, name, sid) // the error quotes the scope as given, as Python's
	if err != nil {
		return Failed("emit_event invalid payload: " + err.Error()), nil
	}
	// The scope's wildcard key: built, not cut from key, whose name may
	// hold colons of its own.
	wildcard, _ := EventKey(scope, "*", sid)
	var payload map[string]any
	switch v := p["payload"].(type) {
	case map[string]any:
		payload = v
	default:
		if truthy(v) {
			payload = map[string]any{"value": v}
		} else {
			payload = map[string]any{}
		}
	}
	var eventID any // payload.event_id or None
	if v := p["event_id"]; truthy(v) {
		eventID = v
	}
	envelope := map[string]any{
		"event_id": eventID, "name": name, "scope": rawScope,
		"session_id": session, "payload": payload, "emitted_at": req.Runtime.now().String(),
		"emitter": map[string]any{"run_id": run.RunID, "workflow_id": run.WorkflowID, "node_id": req.NodeID},
	}
	// payload.max_steps: steps each listener takes before its status is
	// recorded (as in Python); 0, the default, leaves it to be driven
	// after this tick.
	maxSteps := max(payloadInt(p["max_steps"], 0), 0)
	if f, ok := AsFloat(p["max_steps"]); ok && math.IsInf(f, 0) {
		maxSteps = 0 // Python's int(inf) raises, and its handler reads 0
	}
	// A listener ticked here is not the emitter's descendant: a cancel of
	// the emitter stops the delivery, never a listener's effect.
	listenerCtx := ctx
	if req.tickCtx != nil {
		listenerCtx = req.tickCtx
	}
	res, err := req.Runtime.deliver(ctx, listenerCtx, req.drv, []string{key, wildcard}, envelope, int(maxSteps))
	if err != nil {
		return Failed("emit_event: " + err.Error()), nil
	}
	if ctx.Err() != nil {
		// Listeners after the interruption were not resumed: the emit is
		// replayed from the checkpoint (those resumed no longer wait).
		return Outcome{}, fmt.Errorf("emit_event interrupted while delivering: %w", context.Cause(ctx))
	}
	result := map[string]any{
		"wait_key": key, "name": name, "scope": rawScope,
		"delivered": int64(len(res.deliveredTo)), "delivered_to": toAny(res.deliveredTo), "resumed": res.resumed,
	}
	if len(res.deliveredTo) == 0 && session != nil {
		// Whatever the scope, as Python: the session's listeners by name.
		if avail := req.Runtime.sessionListeners(ctx, sessionText); len(avail) > 0 {
			result["available_listeners_in_session"] = toAny(avail)
		}
	}
	return Completed(result), nil
}

type delivery struct {
	deliveredTo []string
	resumed     []any
	// failed joins the deliveries that failed other than by a race the
	// listener won (it moved on, or was paused, meanwhile).
	failed error
	// notReached lists the listeners left waiting because ctx ended
	// before their turn (paused ones excluded).
	notReached []string
}

// deliver resumes the waiting event runs whose wait key is one of keys,
// most recently updated first (as Python lists them), each ticked for up
// to maxSteps steps right away when maxSteps > 0, under listenerCtx. It
// stops at the first listener after ctx ends, listing those left in
// notReached.
func (r *Runtime) deliver(ctx, listenerCtx context.Context, d *driver, keys []string, envelope map[string]any, maxSteps int) (delivery, error) {
	var out delivery
	out.resumed = []any{}
	runs, err := r.store.RunList(ctx, &store.RunListParams{
		Status: durable.RunWaiting, WaitReason: durable.WaitEvent, WaitKeys: keys, Limit: maxListeners,
	})
	if err != nil {
		return out, fmt.Errorf("listing event listeners: %w", err)
	}
	for i, l := range runs {
		if ctx.Err() != nil {
			// The caller reports the interruption.
			for _, rest := range runs[i:] {
				if !IsPaused(rest) {
					out.notReached = append(out.notReached, rest.RunID)
				}
			}
			break
		}
		if IsPaused(l) {
			continue
		}
		// A listener of a workflow this runtime does not serve (runners
		// sharing a store may each serve some workflows) gets the resume
		// committed without a tick, which runs none of its code: it is
		// left running for a runtime that serves it (its scheduler's
		// Recover drives it), not skipped with the event lost for it.
		_, served := r.registry.Get(l.WorkflowID)
		rctx, steps := ctx, maxSteps
		if !served {
			steps = 0 // resumeListener: no tick
		} else if maxSteps > 0 {
			rctx = listenerCtx
		}
		st, err := d.resumeListener(rctx, l, envelope, steps)
		var landed *resumeLandedError
		if errors.As(err, &landed) && st != nil {
			// The event is in (the resume committed); the listener's steps
			// after it failed: it is counted delivered, the failure
			// reported, and it is driven again.
			if served {
				d.enqueueTick(l.RunID)
			}
			out.deliveredTo = append(out.deliveredTo, l.RunID)
			out.resumed = append(out.resumed, map[string]any{"run_id": l.RunID, "status": string(st.Status), "error": err.Error()})
			continue
		}
		if err != nil {
			out.resumed = append(out.resumed, map[string]any{"run_id": l.RunID, "status": "error", "error": err.Error()})
			var stale *StaleResumeError
			if !errors.As(err, &stale) && !errors.Is(err, ErrRunPaused) {
				out.failed = errors.Join(out.failed, fmt.Errorf("delivering to run %s: %w", l.RunID, err))
				// The resume may have landed with its answer lost, leaving
				// the listener running: a drive is queued (kept if this
				// call fails); a tick of a listener still waiting does
				// nothing.
				if served {
					d.enqueueTick(l.RunID)
				}
			}
			continue
		}
		if st.Status == durable.RunRunning {
			if served {
				d.enqueueTick(l.RunID)
			} else {
				r.logger.InfoContext(ctx, "event delivered to a run of a workflow this runtime does not serve; "+
					"left running for a runtime that serves it", "run_id", l.RunID, "workflow_id", l.WorkflowID)
			}
		}
		out.deliveredTo = append(out.deliveredTo, l.RunID)
		out.resumed = append(out.resumed, map[string]any{"run_id": l.RunID, "status": string(st.Status)})
	}
	return out, nil
}

// resumeListener resumes one listener with the event (claimTakeover:
// giving up on a listener another runner holds would lose the event for
// it, since nothing keeps an event for a later delivery).
func (d *driver) resumeListener(ctx context.Context, l *durable.RunState, envelope map[string]any, maxSteps int) (*durable.RunState, error) {
	if maxSteps <= 0 {
		maxSteps = -1 // no tick here: driven after the emitter's tick
	}
	return d.resumeClaiming(ctx, ResumeParams{
		RunID: l.RunID, WaitKey: l.Waiting.WaitKey, Payload: pyjson.CloneObject(envelope), MaxSteps: maxSteps, Strict: true,
	}, claimTakeover)
}

// sessionListeners lists the event names runs of a session wait on, for
// the diagnostics of an event nobody received (at most 15).
func (r *Runtime) sessionListeners(ctx context.Context, sessionID string) []string {
	runs, err := r.store.RunList(ctx, &store.RunListParams{
		Status: durable.RunWaiting, WaitReason: durable.WaitEvent, Limit: maxListeners,
	})
	if err != nil {
		return nil
	}
	prefix := "evt:session:" + sessionID + ":"
	var names []string
	for _, l := range runs {
		if l.Waiting == nil || IsPaused(l) || !strings.HasPrefix(l.Waiting.WaitKey, prefix) {
			continue
		}
		n := strings.TrimPrefix(l.Waiting.WaitKey, prefix)
		// An explicit wait key may end at the prefix: Python lists no empty name.
		if n != "" && !slices.Contains(names, n) && len(names) < 15 {
			names = append(names, n)
		}
	}
	return names
}

// EmitParams is the input of EmitEvent (an event from outside any run).
type EmitParams struct {
	Name      string
	Scope     string // session (default), workflow, run, global
	SessionID string // required for session scope
	// WorkflowID / RunID give the scope id of the workflow / run scopes.
	WorkflowID string
	RunID      string
	Payload    map[string]any
	EventID    string
	// EmittedAt is the envelope's emitted_at: nil means the runtime's
	// clock; any other JSON value (a client's own time, as a gateway's
	// emit_event command carries it) is delivered as given.
	EmittedAt any
	// Emitter is the envelope's emitter object; nil means
	// {"source": "external"}. A gateway adds the command's client_id.
	Emitter map[string]any
	// NoDrive commits each listener's resume without ticking it: the
	// listeners resumed (the ids returned) are left running for the host
	// to drive, as a gateway's command loop leaves them to its runner
	// (Scheduler.DriveSoon) instead of running their steps itself. What
	// else the delivery sets in motion is kept for the runtime's retries
	// (RetryFollowUps, which a scheduler's pass runs): a listener the
	// event ended hands its end to its waiting parent, a listener whose
	// delivery failed after its resume may have landed is driven.
	NoDrive bool
}

// EmitEvent delivers an external event to every run waiting on its exact
// key, drives the listeners, and returns their ids. A listener whose
// workflow this runtime does not serve is resumed without being driven:
// it is left running for a runtime that serves its workflow (its
// scheduler's Recover drives it: every RecoverInterval when runtimes
// claim runs, otherwise only at that scheduler's next start, so runners
// sharing a store that serve different workflows need claims). Listeners it could not resume (another
// runner holding one busy, a store error, ctx ending before their turn)
// are reported in the error, beside the ids of those it did; a listener
// that moved on or was paused meanwhile is not an error.
func (r *Runtime) EmitEvent(ctx context.Context, p EmitParams) ([]string, error) {
	// Only an empty Scope means the default: a blank one is refused as
	// unknown by EventKey, as Python's emit_event and a listener's
	// WAIT_EVENT refuse it (str(scope or "session") keeps " ").
	given := p.Scope
	if given == "" {
		given = "session"
	}
	scope := eventScopeName(given)
	var sid string
	switch scope {
	case "session":
		sid = p.SessionID
	case "workflow":
		sid = p.WorkflowID
	case "run":
		sid = p.RunID
	}
	key, err := EventKey(given, p.Name, sid)
	if err != nil {
		return nil, fmt.Errorf("emit event: %w", err)
	}
	payload := p.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	// At the depth a listener's resume record holds it
	// (effect.payload.payload.payload), before any copy of it is made.
	if err := pyjson.CheckMember(payload, "payload", 4); err != nil {
		return nil, fmt.Errorf("emit event %q: %w", p.Name, err)
	}
	emittedAt := p.EmittedAt
	if emittedAt == nil {
		emittedAt = r.now().String()
	} else if err := pyjson.CheckMember(emittedAt, "emitted_at", 3); err != nil {
		return nil, fmt.Errorf("emit event %q: %w", p.Name, err)
	}
	var emitter any = map[string]any{"source": "external"}
	if p.Emitter != nil {
		if err := pyjson.CheckMember(p.Emitter, "emitter", 3); err != nil {
			return nil, fmt.Errorf("emit event %q: %w", p.Name, err)
		}
		emitter = p.Emitter
	}
	envelope := map[string]any{
		"event_id": nullable(p.EventID), "name": pyval.Strip(p.Name), "scope": scope,
		"session_id": nullable(p.SessionID), "payload": payload, "emitted_at": emittedAt,
		"emitter": emitter,
	}
	d := r.newDriver(nil)
	res, err := r.deliver(ctx, ctx, d, []string{key}, envelope, 0)
	if err != nil {
		return nil, err
	}
	if p.NoDrive {
		d.keepUndriven(ctx, res.deliveredTo)
	} else {
		d.drain(ctx)
	}
	failed := res.failed
	if len(res.notReached) > 0 {
		// Nothing keeps the event for them: the host must know the emit
		// did not reach them (and may emit again: delivery is
		// at-least-once, those resumed no longer wait).
		ids := res.notReached
		more := ""
		if len(ids) > 10 { // the count says the rest
			ids, more = ids[:10], " ..."
		}
		failed = errors.Join(failed, fmt.Errorf("delivery interrupted, %d listener(s) not reached (%s%s): %w",
			len(res.notReached), strings.Join(ids, ", "), more, context.Cause(ctx)))
	}
	if failed != nil {
		return res.deliveredTo, fmt.Errorf("emit event %s: %w", key, failed)
	}
	return res.deliveredTo, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
