package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/abstractframework/abstractgateway/durable"
)

// NodeFunc is one node of a workflow. It reads the run (vars, current
// node) and returns the plan of the step: an effect to request, the next
// node, or the final output. It may change run.Vars; the change becomes
// durable at the next checkpoint. A returned error fails the run with the
// error recorded in its ledger.
//
// Node functions must be deterministic given the run state: after a crash
// the kernel re-runs them from the last checkpoint, where an effect whose
// completion was durable is not executed again, and one interrupted
// mid-attempt is called again with the same idempotency key (at least
// once).
//
// Values in vars are JSON values: a number a node stored as an int may
// read back as a json.Number or float64 once the run was stored or
// resumed (an effect result, a child's vars, another process), so read
// numbers with AsInt or AsFloat rather than a type assertion.
type NodeFunc func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error)

// StepPlan is what a node returns for one step.
type StepPlan struct {
	// NodeID attributes the step in the ledger; "" means the current node.
	NodeID string
	// Effect, when set, is executed by its handler; its completed result
	// is written at Effect.ResultKey and the run moves to NextNode.
	Effect *durable.Effect
	// NextNode is the cursor after this step, and the default resume
	// target of a wait. An effect with no NextNode completes the run with
	// {"success": true, "result": <result>}.
	NextNode string
	// CompleteOutput, when non-nil, completes the run with this output;
	// it takes precedence over Effect.
	CompleteOutput map[string]any
}

// Next returns a plan that moves to node.
func Next(node string) StepPlan { return StepPlan{NextNode: node} }

// Complete returns a plan that completes the run with output.
func Complete(output map[string]any) StepPlan {
	if output == nil {
		output = map[string]any{}
	}
	return StepPlan{CompleteOutput: output}
}

// Request returns a plan that executes effect and then moves to next.
func Request(effect *durable.Effect, next string) StepPlan {
	return StepPlan{Effect: effect, NextNode: next}
}

// RunContext is what the kernel offers a node besides the run.
type RunContext struct {
	rt  *Runtime
	run *durable.RunState
}

// Now returns the runtime clock's current time.
func (rc *RunContext) Now() durable.Time { return durable.NewTime(rc.rt.clock()) }

// NowISO returns the current time in the wire format.
func (rc *RunContext) NowISO() string { return durable.FormatTime(rc.rt.clock()) }

// Runtime returns the runtime executing the step.
func (rc *RunContext) Runtime() *Runtime { return rc.rt }

// Workflow is a graph of nodes. Workflows are code: only their ID is
// persisted, and the host must register the same workflow again after a
// restart for its runs to continue.
type Workflow struct {
	ID    string
	Entry string
	Nodes map[string]NodeFunc

	boxOnce sync.Once
	box     map[string]any
}

// boxed returns id as an interface value, interned for the workflow's
// node ids so that writing it into vars does not allocate.
func (w *Workflow) boxed(id string) any {
	w.boxOnce.Do(func() {
		w.box = make(map[string]any, len(w.Nodes))
		for n := range w.Nodes {
			w.box[n] = n
		}
	})
	if v, ok := w.box[id]; ok {
		return v
	}
	return id
}

// Validate checks that the workflow can run.
func (w *Workflow) Validate() error {
	if w == nil || w.ID == "" {
		return fmt.Errorf("workflow: id is required")
	}
	if err := checkUTF8("id", w.ID); err != nil {
		return fmt.Errorf("workflow: %w", err)
	}
	if w.Entry == "" {
		return fmt.Errorf("workflow %q: entry node is required", w.ID)
	}
	if _, ok := w.Nodes[w.Entry]; !ok {
		return fmt.Errorf("workflow %q: entry node %q is not one of its nodes", w.ID, w.Entry)
	}
	for id, fn := range w.Nodes {
		if fn == nil {
			return fmt.Errorf("workflow %q: node %q has no function", w.ID, id)
		}
		if err := checkUTF8("node id", id); err != nil {
			return fmt.Errorf("workflow %q: %w", w.ID, err)
		}
	}
	return nil
}

// builtinWorkflows are the workflows of the runs the runtime's own
// effects start (MEMORY_COMPACT's summariser child): Get finds them in
// every registry, so any runner ticks, recovers and resumes such a child
// as it does a host's, while IDs and Registrations list only what a host
// registered. A host workflow registered under the same id wins.
var builtinWorkflows = map[string]*Workflow{
	CompactionLLMWorkflowID: compactionLLMWorkflow(),
}

// Registry maps workflow ids to workflows. It is safe for concurrent use.
type Registry struct {
	mu sync.RWMutex
	m  map[string]*Workflow
	// regs numbers each registration (seq counts them), so that a
	// watcher sees an id unregistered and registered again between two
	// looks (Registrations).
	regs map[string]uint64
	seq  uint64
}

// NewRegistry returns a registry holding the given workflows.
func NewRegistry(workflows ...*Workflow) (*Registry, error) {
	r := &Registry{m: map[string]*Workflow{}}
	for _, w := range workflows {
		if err := r.Register(w); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds a workflow; an id already registered is an error.
func (r *Registry) Register(w *Workflow) error {
	if err := w.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[w.ID]; ok {
		return fmt.Errorf("workflow %q is already registered", w.ID)
	}
	r.add(w)
	return nil
}

// add stores w under a new registration number; r.mu is held.
func (r *Registry) add(w *Workflow) {
	if r.m == nil {
		r.m = map[string]*Workflow{}
	}
	if r.regs == nil {
		r.regs = map[string]uint64{}
	}
	r.seq++
	r.m[w.ID], r.regs[w.ID] = w, r.seq
}

// Put registers w, replacing a workflow with the same id.
func (r *Registry) Put(w *Workflow) error {
	if err := w.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(w)
	return nil
}

// Unregister removes a workflow; an unknown id is an error.
func (r *Registry) Unregister(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[id]; !ok {
		return fmt.Errorf("workflow %q is not registered", id)
	}
	delete(r.m, id)
	delete(r.regs, id)
	return nil
}

// Get returns the workflow registered under id, else the runtime's own
// workflow of that id (builtinWorkflows), which every registry serves.
func (r *Registry) Get(id string) (*Workflow, bool) {
	r.mu.RLock()
	w, ok := r.m[id]
	r.mu.RUnlock()
	if !ok {
		w, ok = builtinWorkflows[id]
	}
	return w, ok
}

// Lookup is Get with an error naming the missing id.
func (r *Registry) Lookup(id string) (*Workflow, error) {
	if w, ok := r.Get(id); ok {
		return w, nil
	}
	return nil, &WorkflowNotFoundError{WorkflowID: id}
}

// Registrations returns each registered id with the number of its
// registration. Every Register or Put takes a new number, so an id
// unregistered and registered again (or replaced) between two calls shows
// a different one although the ids are the same.
func (r *Registry) Registrations() map[string]uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return maps.Clone(r.regs)
}

// IDs returns the registered ids, sorted.
func (r *Registry) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]string, 0, len(r.m))
	for id := range r.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
