package runtime

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
)

// kernelFields are the fields of a run the kernel owns, as they were
// before a node ran. A node gets the run itself, so it can write any
// field; one that changes these would have the kernel commit the run's
// state and records under another run's id (without that run's lock or
// claim), crash the tick (nil vars), or make the run unreadable (a status
// or wait reason no decoder knows). Taken and compared at every node
// call, so kept to a few word copies and comparisons, no allocation.
type kernelFields struct {
	runID, workflowID, parentRunID string
	createdAt                      durable.Time
	status                         durable.RunStatus
	waiting                        *durable.WaitState
	vars                           map[string]any
	// effectSeq is vars._runtime.effect_seq (hasSeq: present), which
	// scopes the idempotency keys: a node that replaces the vars (or
	// _runtime) must not take the count back, or its next effects would
	// get the keys of effects made before and reuse their results.
	effectSeq any
	hasSeq    bool
}

func kernelFieldsOf(r *durable.RunState) kernelFields {
	f := kernelFields{
		runID: r.RunID, workflowID: r.WorkflowID, parentRunID: r.ParentRunID,
		createdAt: r.CreatedAt, status: r.Status, waiting: r.Waiting, vars: r.Vars,
	}
	if rt, ok := r.Vars["_runtime"].(map[string]any); ok {
		f.effectSeq, f.hasSeq = rt["effect_seq"]
	}
	return f
}

// keepEffectSeq puts vars._runtime.effect_seq back as it was in f when
// vars no longer hold that count (replaced vars or _runtime, the key
// removed or changed). The kernel alone moves it, after an effect's
// outcome; a node or handler that drops it is not failed for that.
func (f *kernelFields) keepEffectSeq(vars map[string]any) {
	if !f.hasSeq || vars == nil {
		return
	}
	rt, _ := vars["_runtime"].(map[string]any)
	if cur, ok := rt["effect_seq"]; ok {
		a, aok := AsInt(cur)
		b, bok := AsInt(f.effectSeq)
		if aok && bok && a == b {
			return
		}
	}
	if rt := namespace(vars, "_runtime"); rt != nil {
		rt["effect_seq"] = f.effectSeq
	}
}

// restore puts back in r what of f was changed and returns what the
// first change was ("changed the run's run_id from ..."), or "" when
// nothing was. A vars map replaced by another stays (nodes may do that):
// only its removal is undone.
func (f *kernelFields) restore(r *durable.RunState) string {
	var change string
	note := func(msg string) {
		if change == "" {
			change = msg
		}
	}
	if r.RunID != f.runID {
		note(fmt.Sprintf("changed the run's run_id from %q to %q", f.runID, r.RunID))
		r.RunID = f.runID
	}
	if r.WorkflowID != f.workflowID {
		note(fmt.Sprintf("changed the run's workflow_id from %q to %q", f.workflowID, r.WorkflowID))
		r.WorkflowID = f.workflowID
	}
	if r.ParentRunID != f.parentRunID {
		note(fmt.Sprintf("changed the run's parent_run_id from %q to %q", f.parentRunID, r.ParentRunID))
		r.ParentRunID = f.parentRunID
	}
	if !r.CreatedAt.Equal(f.createdAt.Time) {
		note(fmt.Sprintf("changed the run's created_at from %s to %s",
			durable.FormatTime(f.createdAt.Time), durable.FormatTime(r.CreatedAt.Time)))
		r.CreatedAt = f.createdAt
	}
	if r.Vars == nil {
		note("removed the run's vars (set them to nil): vars must stay an object")
		r.Vars = f.vars
		if r.Vars == nil {
			r.Vars = map[string]any{}
		}
	}
	f.keepEffectSeq(r.Vars)
	if !r.Status.Valid() {
		note(fmt.Sprintf("set the run's status to %q, not one of the run statuses", r.Status))
		r.Status = f.status
	}
	if w := r.Waiting; w != nil && !w.Reason.Valid() {
		note(fmt.Sprintf("gave the run a wait with reason %q, not one of the wait reasons", w.Reason))
		r.Waiting = f.waiting
		if r.Waiting != nil && !r.Waiting.Reason.Valid() {
			r.Waiting = nil // changed in place
		}
	}
	return change
}
