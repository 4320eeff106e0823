package durable

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// RunState is the durable checkpoint of a run.
type RunState struct {
	RunID       string
	WorkflowID  string
	Status      RunStatus
	CurrentNode string
	Vars        map[string]any // all workflow state; never nil once created
	Waiting     *WaitState     // non-nil iff Status is waiting
	Output      map[string]any // final output; nil is null
	Error       string         // failure or cancellation reason; "" is null
	CreatedAt   Time
	UpdatedAt   Time
	ActorID     string
	SessionID   string
	ParentRunID string

	// Version is the store's optimistic-concurrency token: 0 before the
	// run is first saved, then incremented by every commit. It is not
	// part of the JSON.
	Version int64
}

// Clone returns a deep copy of r.
func (r *RunState) Clone() *RunState {
	if r == nil {
		return nil
	}
	c := *r
	c.Vars = pyjson.CloneObject(r.Vars)
	c.Waiting = r.Waiting.Clone()
	c.Output = pyjson.CloneObject(r.Output)
	return &c
}

// JSONValue returns the run as an ordered wire object (Python key order).
func (r *RunState) JSONValue() pyjson.Ordered {
	vars := r.Vars
	if vars == nil {
		vars = map[string]any{}
	}
	var output any
	if r.Output != nil {
		output = r.Output
	}
	return pyjson.Ordered{
		{Key: "run_id", Value: r.RunID},
		{Key: "workflow_id", Value: r.WorkflowID},
		{Key: "status", Value: string(r.Status)},
		{Key: "current_node", Value: r.CurrentNode},
		{Key: "vars", Value: vars},
		{Key: "waiting", Value: r.Waiting.JSONValue()},
		{Key: "output", Value: output},
		{Key: "error", Value: nullString(r.Error)},
		{Key: "created_at", Value: r.CreatedAt.jsonValue()},
		{Key: "updated_at", Value: r.UpdatedAt.jsonValue()},
		{Key: "actor_id", Value: nullString(r.ActorID)},
		{Key: "session_id", Value: nullString(r.SessionID)},
		{Key: "parent_run_id", Value: nullString(r.ParentRunID)},
	}
}

// MarshalRun encodes r in the given style. A value in vars or output
// that is not JSON (NaN, a channel, a cycle…) is an error naming its path.
func MarshalRun(r *RunState, st pyjson.Style) ([]byte, error) {
	return pyjson.Append(nil, r.JSONValue(), st, "")
}

// UnmarshalRun decodes a RunState written by this package or by Python.
func UnmarshalRun(data []byte) (*RunState, error) {
	m, err := pyjson.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decoding run state: %w", err)
	}
	r, err := RunFromJSON(m)
	if err != nil {
		return nil, fmt.Errorf("decoding run state: %w", err)
	}
	return r, nil
}

// RunFromJSON builds a RunState from a decoded JSON object.
func RunFromJSON(m map[string]any) (*RunState, error) {
	var r RunState
	var err error
	if r.RunID, err = getString(m, "run_id"); err != nil {
		return nil, err
	}
	if r.RunID == "" {
		return nil, fmt.Errorf("field \"run_id\" is missing")
	}
	if r.WorkflowID, err = getString(m, "workflow_id"); err != nil {
		return nil, err
	}
	st, err := getString(m, "status")
	if err != nil {
		return nil, err
	}
	r.Status = RunStatus(st)
	if !r.Status.Valid() {
		return nil, fmt.Errorf("field \"status\": unknown run status %q", st)
	}
	if r.CurrentNode, err = getString(m, "current_node"); err != nil {
		return nil, err
	}
	if r.Vars, err = getObject(m, "vars"); err != nil {
		return nil, err
	}
	if r.Vars == nil {
		r.Vars = map[string]any{}
	}
	if r.Waiting, err = DecodeWaitState(m["waiting"]); err != nil {
		return nil, err
	}
	if r.Output, err = getObject(m, "output"); err != nil {
		return nil, err
	}
	if r.Error, err = getString(m, "error"); err != nil {
		return nil, err
	}
	if r.CreatedAt, err = getTime(m, "created_at"); err != nil {
		return nil, err
	}
	if r.UpdatedAt, err = getTime(m, "updated_at"); err != nil {
		return nil, err
	}
	if r.ActorID, err = getString(m, "actor_id"); err != nil {
		return nil, err
	}
	if r.SessionID, err = getString(m, "session_id"); err != nil {
		return nil, err
	}
	if r.ParentRunID, err = getString(m, "parent_run_id"); err != nil {
		return nil, err
	}
	return &r, nil
}
