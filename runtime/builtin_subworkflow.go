package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

var workspaceKeys = []string{"workspace_root", "workspace_access_mode", "workspace_allowed_paths", "workspace_ignored_paths"}

// START_SUBWORKFLOW: starts a child run. Sync (default) drives the child
// inline and completes with its output (or waits on it when it waits);
// async starts it and completes with its id; async+wait parks the parent
// until the child ends, and the parent is resumed automatically then.
//
// The child's id is derived from the parent, the effect's idempotency key
// and the attempt (childRunID) unless payload.run_id names it, so a replay
// after a crash finds the child it had already created instead of starting
// a second one, while a retry of a failed attempt starts a new child, as
// Python's does. A named child is the only run with its id: a retry finds
// it as it is (created if an earlier attempt failed before creating it,
// continued if it still runs, its end given again if it ended) rather than
// running it again under another id the caller does not know.
func handleStartSubworkflow(ctx context.Context, req *EffectRequest) (Outcome, error) {
	p := req.Effect.Payload
	rt := req.Runtime
	wrap := truthy(p["wrap_as_tool_result"])
	toolName := pyTextOr(firstPresent(p, "tool_name", "toolName"), "start_subworkflow")
	callID := pyTextOr(firstPresent(p, "call_id", "callId"), "subworkflow")
	fail := func(msg string) (Outcome, error) {
		if wrap {
			return Completed(toolResult(callID, toolName, false, nil, msg)), nil
		}
		return Failed(msg), nil
	}
	if !truthy(p["workflow_id"]) {
		return fail("start_subworkflow requires payload.workflow_id")
	}
	// Python's registry is a dict of string ids: a number (5) finds no
	// workflow, not even one registered as "5".
	wfID, isText := p["workflow_id"].(string)
	if _, ok := rt.registry.Get(wfID); !ok || !isText {
		return fail(fmt.Sprintf("Workflow '%s' not found in registry", pyval.Str(p["workflow_id"])))
	}
	vars, _ := p["vars"].(map[string]any)
	childVars := pyjson.CloneObject(vars)
	if childVars == nil {
		childVars = map[string]any{}
	}
	for _, k := range workspaceKeys {
		if _, set := childVars[k]; set {
			continue
		}
		if v := req.Run.Vars[k]; v != nil {
			if s, isStr := v.(string); isStr && pyval.Strip(s) == "" {
				continue // a blank setting is no setting
			}
			// Live vars, not yet checked: a cycle would overflow the copy.
			if err := pyjson.CheckMember(v, "vars."+k, 1); err != nil {
				return Failed("start_subworkflow: " + err.Error()), nil
			}
			childVars[k] = pyjson.Clone(v)
		}
	}
	async, wait := truthy(p["async"]), truthy(p["wait"])
	if async && wait && req.outOfGraph {
		// It would wait on the child, which an effect applied outside the
		// run's graph cannot (ApplyEffect fails it): failed before the
		// child is created, not after, which would leave it running with
		// nothing waiting on its end.
		return Failed(fmt.Sprintf("effect handler for %s asked the run to wait, which an effect applied outside its graph cannot do",
			req.Effect.Type)), nil
	}
	depth := syncDepth(ctx) + 1
	if !async && depth > maxSyncSubworkflowDepth {
		// Checked before the child is created: past the limit no child is
		// made only to be left unticked. Python's RecursionError is caught
		// around the child's tick and fails the effect, never wrapped as a
		// tool result.
		return Failed(fmt.Sprintf("Subworkflow '%s' failed: sync subworkflows nested deeper than the limit of %d levels",
			wfID, maxSyncSubworkflowDepth)), nil
	}
	session := trimmedOr(firstPresent(p, "session_id", "sessionId"), req.Run.SessionID)
	childID := stringOr(p["run_id"], "")
	if childID == "" {
		childID = childRunID(req.Run.RunID, req.IdempotencyKey, req.Attempt)
	}
	if _, err := rt.Start(ctx, StartParams{
		WorkflowID: wfID, Vars: childVars, ActorID: req.Run.ActorID, SessionID: session,
		ParentRunID: req.Run.RunID, RunID: childID,
	}); err != nil {
		var notStored storeFailure
		if errors.As(err, &notStored) || ctx.Err() != nil {
			// Not an answer about this child (a store error, an
			// interrupted caller): the create may have landed with its
			// answer lost. Failed, the attempt would be retried under the
			// next attempt's child id, leaving this one orphaned (or, after
			// a replay, created and run a second time); interrupted, the
			// tick stops at its checkpoint and the replay asks for this
			// child again.
			return Outcome{}, fmt.Errorf("%w: subworkflow '%s' (run %s) not started: %w", errEffectInterrupted, wfID, childID, err)
		}
		// An answer (an identity conflict, vars that are not JSON, an
		// invalid id): the same request fails the same way again.
		return fail(fmt.Sprintf("Subworkflow '%s' failed: %v", wfID, err))
	}
	includeTraces := truthy(p["include_traces"])
	details := map[string]any{"sub_run_id": childID, "sub_workflow_id": wfID, "include_traces": includeTraces}
	if wrap {
		details["wrap_as_tool_result"] = true
		details["tool_name"] = toolName
		details["call_id"] = callID
	}
	waitOn := func(extra map[string]any) Outcome {
		for k, v := range extra {
			details[k] = v
		}
		w := &durable.WaitState{
			Reason: durable.WaitSubworkflow, WaitKey: SubworkflowWaitKey(childID),
			ResultKey: req.Effect.ResultKey, AllowFreeText: true, Details: details,
		}
		req.setResumeTarget(w)
		return Waiting(w)
	}
	if async {
		req.drv.enqueueTick(childID)
		if wait {
			return waitOn(map[string]any{"async": true}), nil
		}
		if wrap {
			return Completed(toolResult(callID, toolName, true, map[string]any{
				"rendered": "Started subworkflow " + childID, "sub_run_id": childID, "async": true,
			}, "")), nil
		}
		return Completed(map[string]any{"sub_run_id": childID, "async": true}), nil
	}

	child, err := driveSyncChild(ctx, req, "subworkflow "+wfID, childID)
	if err != nil {
		return Outcome{}, err
	}
	switch child.Status {
	case durable.RunCompleted:
		// A child ended before this tick (a replay) is read back from the
		// store, whose offloading may have moved its large values out.
		res := map[string]any{"sub_run_id": childID, "output": ChildOutput(child)}
		if includeTraces && !wrap {
			res["node_traces"] = childNodeTraces(child)
		}
		if err := rt.restoreChildValues(ctx, childID, res); err != nil {
			return Outcome{}, fmt.Errorf("%w: subworkflow %s (run %s): %w", errEffectInterrupted, wfID, childID, err)
		}
		if wrap {
			// A completed child is a successful call, whatever its output
			// says (Python reads a failure envelope only on resume).
			return Completed(toolResult(callID, toolName, true, subworkflowToolOutput(childID, res["output"]), "")), nil
		}
		return Completed(res), nil
	case durable.RunFailed:
		return fail(fmt.Sprintf("Subworkflow '%s' failed: %s", wfID, child.Error))
	case durable.RunCancelled:
		// A cancel of a tree this run belongs to ended the child and was
		// stopped (killed) before it reached this run: this run is
		// cancelled as that cancel would have, not failed. A cancel aimed
		// at the child alone fails this run, in Python's words.
		cause, covered, err := rt.cancelCovering(ctx, child, req.Run)
		if err != nil {
			return Outcome{}, fmt.Errorf("%w: subworkflow %s (run %s): %w", errEffectInterrupted, wfID, childID, err)
		}
		if covered {
			return cancelledOutcome(cause), nil
		}
		return Failed("Unexpected subworkflow status: cancelled"), nil
	case durable.RunWaiting:
		// The child may be answered and end before this run's wait on it
		// is committed, when its end finds no parent waiting: look again
		// once it is.
		req.drv.queue = append(req.drv.queue, followUp{kind: followParentResume, runID: childID})
		sub := map[string]any{"reason": string(child.Waiting.Reason), "wait_key": nullable(child.Waiting.WaitKey)}
		return waitOn(map[string]any{"sub_waiting": sub}), nil
	default:
		// The effect fails, wrapped as a tool result or not (as Python's).
		return Failed(fmt.Sprintf("Unexpected subworkflow status: %s", child.Status)), nil
	}
}

// driveSyncChild ticks a child run inline (one sync nesting level deeper
// than ctx) until it stops, and returns it as its tick left it. An error
// stops the requesting run's tick at its checkpoint (errEffectInterrupted,
// errEffectStopped): the child's tick did not get through, or another
// writer ended it, and the effect asks for the child again when the run
// continues. what names the child in those errors.
// syncChildMaxSteps is a sync child's step budget: Python ticks it with
// tick's default, whatever budget the host ticks its runs with, and a
// child still running after it fails the effect (Unexpected subworkflow
// status: running).
const syncChildMaxSteps = 100

func driveSyncChild(ctx context.Context, req *EffectRequest, what, childID string) (*durable.RunState, error) {
	rt := req.Runtime
	childCtx := context.WithValue(ctx, syncDepthKey{}, syncDepth(ctx)+1)
	var child *durable.RunState
	for {
		var err error
		child, err = req.drv.tick(childCtx, childID, syncChildMaxSteps)
		if err != nil {
			// The child's own failures are its status; an error is the
			// child's tick not getting through (another runner works on
			// it or took it to cancel it, a store error, an
			// interruption). The parent's tick stops at its checkpoint
			// instead of failing, with the child left as its store holds
			// it, and continues when it is ticked again.
			return nil, fmt.Errorf("%w: %s (run %s): %w", errEffectInterrupted, what, childID, err)
		}
		if stop := req.drv.lastStop; child.Status != durable.RunRunning || (stop != stoppedPause && stop != stoppedCancel) {
			break
		}
		// A Pause or Cancel stopped the child to commit its pause wait
		// or its end, which it may fail to do (a store error, its caller
		// giving up on the lock). What it left is read once it is done,
		// as Python's sync tick sees only a persisted pause or cancel:
		// paused, this run waits on the child; cancelled, the child's
		// end is handled as any; still running (nothing landed), the
		// child goes on. A cancel of this run's tree cuts ctx too: the
		// attempt then ends cancelled (callHandler).
		if err := rt.awaitStopRequests(ctx, childID); err != nil {
			return nil, fmt.Errorf("%w: %s (run %s): waiting for the host call that stopped it: %w",
				errEffectInterrupted, what, childID, err)
		}
	}
	if child.Status.Terminal() && req.drv.lastDropped {
		// Another runner ended the child while this one ran it (its
		// commit conflicted): a cancel of this run's tree, which ends the
		// children first, may be on its way to this run and must find it
		// at its checkpoint, not failed. The next tick reads the child's
		// end (a scheduler's Recover ticks it if nothing else does).
		return nil, fmt.Errorf("%w: %s (run %s) was ended by another writer", errEffectInterrupted, what, childID)
	}
	if child.Status == durable.RunRunning && req.drv.lastStop == stoppedGate {
		// A closed step gate stopped the child's tick: this run's tick
		// stops too, at its checkpoint, and calls the child again when
		// it continues.
		return nil, errEffectStopped
	}
	return child, nil
}

// maxSyncSubworkflowDepth bounds how deeply sync subworkflows nest within
// one tick. A sync child is ticked inside its parent's effect handler, on
// the same goroutine stack, so a workflow that starts itself with no base
// case that stops would recurse until Go's fatal, unrecoverable stack
// overflow killed the process (and again on every restart). Past the
// limit the effect fails instead, and each parent fails in turn, as
// Python's RecursionError fails the innermost effect. A level takes a few
// KiB of stack (about 6 KiB with the memory store), so 200 levels stay
// around a megabyte, far below Go's 1 GB default maximum; Python's default
// recursion limit of 1000 frames, several per nested tick, stops at a
// similar depth.
const maxSyncSubworkflowDepth = 200

// syncDepthKey is the context key of the number of sync subworkflow ticks
// the current tick is nested in (an int; absent at the top).
type syncDepthKey struct{}

// syncDepth is how many sync subworkflow ticks ctx is nested in.
func syncDepth(ctx context.Context) int {
	d, _ := ctx.Value(syncDepthKey{}).(int)
	return d
}

// childRunID is the id of the child that an attempt of a START_SUBWORKFLOW
// effect starts. The first attempt's depends on the parent and the key
// only (the id children had before retries made new ones, so a run
// replayed from an older checkpoint still finds its child); each retry has
// its own. A run replayed after a crash or an interruption goes on with
// the attempt after the last recorded failed (attemptsMade): an attempt
// interrupted before its end was recorded is made again under its number
// and finds its child, continuing it where it stopped.
func childRunID(parentID, key string, attempt int) string {
	if attempt > 1 {
		key += "\x00attempt " + strconv.Itoa(attempt)
	}
	return derivedID(parentID, key)
}

// derivedID is a stable UUID-shaped id for a child created by an effect.
func derivedID(parentID, key string) string {
	sum := sha256.Sum256([]byte(parentID + "\x00" + key))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// toolResult is the tool-style envelope {"mode":"executed","results":[…]}.
func toolResult(callID, name string, success bool, output any, errMsg string) map[string]any {
	return map[string]any{"mode": "executed", "results": []any{map[string]any{
		"call_id": callID, "name": name, "success": success, "output": output, "error": nullable(errMsg),
	}}}
}

// firstPresent returns the value of the first key of p that is present and
// not null (an empty string stops the search, as Python's "is None" does).
func firstPresent(p map[string]any, keys ...string) any {
	for _, k := range keys {
		if v := p[k]; v != nil {
			return v
		}
	}
	return nil
}

// pyTextOr is Python's str(v or def).strip() or def: v's text (a number
// too), trimmed, or def when v is falsy or blank.
func pyTextOr(v any, def string) string {
	if !truthy(v) {
		return def
	}
	if s := pyval.Strip(pyval.Str(v)); s != "" {
		return s
	}
	return def
}

// subworkflowToolOutput is the output of a subworkflow call wrapped as a
// tool result (Python's _tool_output_for_subworkflow): the child output's
// answer, else its text or JSON, and its report when short.
func subworkflowToolOutput(subRunID string, output any) map[string]any {
	answer, report := "", ""
	if o, ok := output.(map[string]any); ok {
		if a, ok := o["answer"].(string); ok {
			answer = pyval.Strip(a)
		}
		if r, ok := o["report"].(string); ok {
			report = pyval.Strip(r)
		}
	}
	if answer == "" {
		if s, ok := output.(string); ok && pyval.Strip(s) != "" {
			answer = pyval.Strip(s)
		} else {
			b, _ := pyjson.Marshal(output, pyjson.Line) // json.dumps, null included
			answer = string(b)
		}
	}
	out := map[string]any{"rendered": answer, "answer": answer, "sub_run_id": subRunID}
	if report != "" && utf8.RuneCountInString(report) <= 4000 {
		out["report"] = report
	}
	return out
}

// trimmedOr returns v trimmed when it is a non-blank string, else def.
func trimmedOr(v any, def string) string {
	if s, ok := v.(string); ok {
		if s = pyval.Strip(s); s != "" {
			return s
		}
	}
	return def
}
