package visualflow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ListenerRunID is the id StartListeners gives the i-th listener (in
// FlowInfo.Listeners order) of run root: deterministic, so that a start
// interrupted and made again finds the listeners it created. When another
// listener of root already holds that id (the flow gained a listener ahead
// of it), StartListeners suffixes it with a digest of the listener's
// workflow id.
func ListenerRunID(root string, i int) string { return root + "-listener-" + strconv.Itoa(i) }

// ListenerRuns returns the listener runs of run root, by listener
// workflow id (every id of fi.Listeners is a key): root's children whose
// workflow is one of fi's listeners, whichever host started them
// (StartListeners under ListenerRunID, Python's gateway under ids of its
// own), oldest first.
func (fi *FlowInfo) ListenerRuns(ctx context.Context, rt *runtime.Runtime, root string) (map[string][]*durable.RunState, error) {
	runs := make(map[string][]*durable.RunState, len(fi.Listeners))
	for _, wf := range fi.Listeners {
		runs[wf] = nil
	}
	if len(fi.Listeners) == 0 {
		return runs, nil
	}
	kids, err := rt.Store().RunListChildren(ctx, root, "")
	if err != nil {
		return nil, fmt.Errorf("listing the event listeners of run %s: %w", root, err)
	}
	for _, k := range kids {
		if list, ok := runs[k.WorkflowID]; ok {
			runs[k.WorkflowID] = append(list, k)
		}
	}
	return runs, nil
}

// StartListeners starts the flow's "On Event" listeners for run root, as
// a gateway does once it has created a run (gateway-api §8.5 step 8,
// visualflow.md §5.7): each a child of root in root's session (root's id
// when it has none: the session its session-scoped events name), its
// vars copies of root's _runtime and _limits, ticked up to maxSteps (0:
// the runtime's budget) so that it reaches its wait for the event. A
// listener root already has is kept, so that each on_event node has one
// listener and an event runs its branch once; one still running (a kill
// between its start and its first wait, or during its handling of an
// event) is ticked on, since nothing else may drive it. Every listener is
// created before any is ticked, and a tick refused because another runner
// holds the listener (runtime.ErrRunClaimed: that runner drives it) is
// not an error: one listener's trouble does not keep the others from
// starting. A root that has ended starts none. It returns the ids of
// root's listeners, in fi.Listeners order, and the errors met, joined.
func (fi *FlowInfo) StartListeners(ctx context.Context, rt *runtime.Runtime, root string, maxSteps int) ([]string, error) {
	if len(fi.Listeners) == 0 {
		return nil, nil
	}
	r, err := rt.GetState(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("starting the event listeners of run %s: %w", root, err)
	}
	existing, err := fi.ListenerRuns(ctx, rt, root)
	if err != nil {
		return nil, err
	}
	session := cmp.Or(r.SessionID, r.RunID)
	// Run ids root's listeners hold: a listener the flow gained ahead of
	// others (re-published under the same version) has an index whose
	// ListenerRunID an existing listener of another workflow may hold.
	taken := map[string]bool{}
	for _, runs := range existing {
		for _, l := range runs {
			taken[l.RunID] = true
		}
	}
	var ids []string
	var errs []error
	var toTick []*durable.RunState // running listeners, new ones included
	for i, wf := range fi.Listeners {
		if runs := existing[wf]; len(runs) > 0 {
			for _, l := range runs {
				ids = append(ids, l.RunID)
				if l.Status == durable.RunRunning {
					toTick = append(toTick, l)
				}
			}
			continue
		}
		if r.Status.Terminal() {
			continue // nothing would ever stop a listener of an ended root
		}
		id := ListenerRunID(root, i)
		if taken[id] {
			// Deterministic, so that a start made again finds it (by its
			// workflow, as every listener).
			sum := sha256.Sum256([]byte(wf))
			id += "-" + hex.EncodeToString(sum[:4])
		}
		l, err := startListener(ctx, rt, r, wf, id, session)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, l.RunID)
		if l.Status == durable.RunRunning {
			toTick = append(toTick, l)
		}
	}
	for _, l := range toTick {
		if _, err := rt.Tick(ctx, l.RunID, runtime.TickOptions{MaxSteps: maxSteps}); err != nil && !errors.Is(err, runtime.ErrRunClaimed) {
			errs = append(errs, fmt.Errorf("driving event listener %s of run %s (run %s): %w", l.WorkflowID, root, l.RunID, err))
		}
	}
	return ids, errors.Join(errs...)
}

// startListener creates listener workflow wf of root r under id, or
// takes the run another call created under it meanwhile (the same
// listener, its vars copied from another state of the root).
func startListener(ctx context.Context, rt *runtime.Runtime, r *durable.RunState, wf, id, session string) (*durable.RunState, error) {
	vars := map[string]any{}
	for _, k := range []string{"_runtime", "_limits"} {
		if v, ok := r.Vars[k]; ok {
			vars[k] = pyjson.Clone(v)
		}
	}
	_, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: id, ParentRunID: r.RunID,
		SessionID: session, ActorID: r.ActorID, Vars: vars})
	var conflict *runtime.IdentityConflictError
	if err != nil && !errors.As(err, &conflict) {
		return nil, fmt.Errorf("starting event listener %s of run %s: %w", wf, r.RunID, err)
	}
	l, gerr := rt.GetState(ctx, id)
	if gerr != nil {
		return nil, fmt.Errorf("starting event listener %s of run %s: %w", wf, r.RunID, errors.Join(err, gerr))
	}
	if err != nil && (l.WorkflowID != wf || l.ParentRunID != r.RunID) {
		return nil, fmt.Errorf("starting event listener %s of run %s: %w", wf, r.RunID, err)
	}
	return l, nil
}

// StopListeners cancels root's listeners that are idle: waiting for their
// event at their entry (the on_event node), with the reason "Session
// completed", as AbstractFlow's session runner does once the root has
// ended. A listener in the middle of its branch (running, or waiting at
// another node, an event wait of the branch included) is left to finish
// it. The cancel is conditional (runtime.CancelOptions.IfUnchanged): a
// listener an event resumed after it was read idle, in this process or
// another, is left to its branch, so no delivered event is lost (Python
// reads and cancels separately, and loses an event delivered between).
func (fi *FlowInfo) StopListeners(ctx context.Context, rt *runtime.Runtime, root string) error {
	existing, err := fi.ListenerRuns(ctx, rt, root)
	if err != nil {
		return err
	}
	idle := func(l *durable.RunState) bool {
		wf, ok := rt.Registry().Get(l.WorkflowID)
		return ok && l.Status == durable.RunWaiting && l.Waiting != nil && l.Waiting.Reason == durable.WaitEvent &&
			l.CurrentNode == wf.Entry
	}
	for _, wf := range fi.Listeners {
		for _, l := range existing[wf] {
			if !idle(l) {
				continue
			}
			_, err := rt.CancelWith(ctx, l.RunID, runtime.CancelOptions{Reason: "Session completed", IfUnchanged: l})
			if err != nil && !errors.Is(err, runtime.ErrRunChanged) {
				return fmt.Errorf("stopping event listener run %s: %w", l.RunID, err)
			}
		}
	}
	return nil
}
