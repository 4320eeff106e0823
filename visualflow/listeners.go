package visualflow

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ListenerRunID is the id StartListeners gives the i-th listener (in
// FlowInfo.Listeners order) of run root: deterministic, so that a start
// interrupted and made again finds the listeners it created.
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
// event) is ticked on, since nothing else may drive it. It returns the
// ids of root's listeners, in fi.Listeners order.
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
	var ids []string
	for i, wf := range fi.Listeners {
		if runs := existing[wf]; len(runs) > 0 {
			for _, l := range runs {
				ids = append(ids, l.RunID)
				if l.Status == durable.RunRunning {
					if _, err := rt.Tick(ctx, l.RunID, runtime.TickOptions{MaxSteps: maxSteps}); err != nil {
						return ids, fmt.Errorf("continuing event listener %s (run %s): %w", wf, l.RunID, err)
					}
				}
			}
			continue
		}
		id := ListenerRunID(root, i)
		vars := map[string]any{}
		for _, k := range []string{"_runtime", "_limits"} {
			if v, ok := r.Vars[k]; ok {
				vars[k] = pyjson.Clone(v)
			}
		}
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: id, ParentRunID: root,
			SessionID: session, ActorID: r.ActorID, Vars: vars}); err != nil {
			return ids, fmt.Errorf("starting event listener %s of run %s: %w", wf, root, err)
		}
		ids = append(ids, id)
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: maxSteps}); err != nil {
			return ids, fmt.Errorf("starting event listener %s of run %s: %w", wf, root, err)
		}
	}
	return ids, nil
}

// StopListeners cancels root's listeners that wait for their event, with
// the reason "Session completed", as AbstractFlow's session runner does
// once the root has ended; a listener in the middle of its branch (running,
// or waiting for anything else) is left to finish it.
func (fi *FlowInfo) StopListeners(ctx context.Context, rt *runtime.Runtime, root string) error {
	existing, err := fi.ListenerRuns(ctx, rt, root)
	if err != nil {
		return err
	}
	for _, wf := range fi.Listeners {
		for _, l := range existing[wf] {
			if l.Status != durable.RunWaiting || l.Waiting == nil || l.Waiting.Reason != durable.WaitEvent {
				continue
			}
			if _, err := rt.Cancel(ctx, l.RunID, "Session completed"); err != nil {
				return fmt.Errorf("stopping event listener run %s: %w", l.RunID, err)
			}
		}
	}
	return nil
}
