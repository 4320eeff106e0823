package durable

import (
	"fmt"
	"strings"
	"unsafe"

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

	// outputRead keeps an output read that was not an object (Python
	// stores a node's complete_output as given) for a rewrite, while
	// Output stays nil. It is never modified in place nor handed out
	// (JSONValue copies it), so struct copies of r share it; RunFromJSON
	// keeps its caller's value there, StoredCopy and Clone copy it.
	outputRead any

	// emptyNotNull records which of Error, ActorID, SessionID and
	// ParentRunID were read as "" rather than null, so a run Python wrote
	// with actor_id="" is written back as it was (see StepRecord).
	emptyNotNull emptyFields

	// createdText and updatedText keep a created_at/updated_at read as
	// text ParseTime cannot read (Python's stores keep the string as
	// given), written back while CreatedAt/UpdatedAt stay zero; a commit
	// assigns UpdatedAt, which then wins (see timeOrText).
	createdText, updatedText string
}

// HostPaused reports whether a host paused the run
// (vars._runtime.control.paused is true).
func (r *RunState) HostPaused() bool {
	rt, _ := r.Vars["_runtime"].(map[string]any)
	ctl, _ := rt["control"].(map[string]any)
	p, _ := ctl["paused"].(bool)
	return p
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
	c.outputRead = pyjson.Clone(r.outputRead)
	return &c
}

// CreatedAtValue is created_at as the run's JSON has it: the time's
// isoformat text, the text kept as read when it was no ISO time, or nil.
func (r *RunState) CreatedAtValue() any { return timeOrText(r.CreatedAt, r.createdText) }

// UpdatedAtValue is updated_at as the run's JSON has it (see
// CreatedAtValue).
func (r *RunState) UpdatedAtValue() any { return timeOrText(r.UpdatedAt, r.updatedText) }

// JSONValue returns the run as an ordered wire object (Python key order);
// an output kept as read (not an object) is a copy.
func (r *RunState) JSONValue() pyjson.Ordered {
	vars := r.Vars
	if vars == nil {
		vars = map[string]any{}
	}
	var output any
	if r.Output != nil {
		output = r.Output
	} else {
		output = pyjson.Clone(r.outputRead) // see outputRead
	}
	return pyjson.Ordered{
		{Key: "run_id", Value: r.RunID},
		{Key: "workflow_id", Value: r.WorkflowID},
		{Key: "status", Value: string(r.Status)},
		{Key: "current_node", Value: r.CurrentNode},
		{Key: "vars", Value: vars},
		{Key: "waiting", Value: r.Waiting.JSONValue()},
		{Key: "output", Value: output},
		{Key: "error", Value: r.emptyNotNull.str(emptyError, r.Error)},
		{Key: "created_at", Value: timeOrText(r.CreatedAt, r.createdText)},
		{Key: "updated_at", Value: timeOrText(r.UpdatedAt, r.updatedText)},
		{Key: "actor_id", Value: r.emptyNotNull.str(emptyActor, r.ActorID)},
		{Key: "session_id", Value: r.emptyNotNull.str(emptySession, r.SessionID)},
		{Key: "parent_run_id", Value: r.emptyNotNull.str(emptyParent, r.ParentRunID)},
	}
}

// MarshalRun encodes r in the given style. A value in vars or output
// that is not JSON (NaN, a channel, a cycle…) is an error naming its path.
func MarshalRun(r *RunState, st pyjson.Style) ([]byte, error) {
	return AppendRun(nil, r, st)
}

// AppendRun appends the encoding of r to buf, as MarshalRun.
func AppendRun(buf []byte, r *RunState, st pyjson.Style) ([]byte, error) {
	if st == pyjson.Line {
		return appendRunLine(buf, r)
	}
	return pyjson.Append(buf, r.JSONValue(), st, "")
}

// UnmarshalRun decodes a RunState written by this package or by Python.
// Of a repeated key the last value counts, as in Python.
func UnmarshalRun(data []byte) (*RunState, error) {
	r := &RunState{}
	l := lastWins{to: r}
	return r.decoded(l.result(pyjson.DecodeObjectFunc(data, l.member)))
}

// UnmarshalRunString is UnmarshalRun reading a string without copying it
// (the run's strings are slices of it).
func UnmarshalRunString(text string) (*RunState, error) {
	r := &RunState{}
	l := lastWins{to: r}
	return r.decoded(l.result(pyjson.DecodeObjectFuncString(text, l.member)))
}

// decoded finishes a run whose members were read with error err. The
// decoders call the pyjson functions themselves, so that nothing of the
// member callback escapes to the heap.
func (r *RunState) decoded(err error) (*RunState, error) {
	if err != nil {
		return nil, fmt.Errorf("decoding run state: %w", err)
	}
	if err := r.checkDecoded(); err != nil {
		return nil, fmt.Errorf("decoding run state: %w", err)
	}
	r.detachStrings()
	return r, nil
}

// detachStrings gives the run's own fields (its identity, node, error and
// wait) memory of their own, in one allocation. A decoded string is a
// slice of the whole document (internal/pyjson), and these are the strings
// that outlive a decoded state: ledger records, index entries and cache
// keys copy them, and each would keep the whole run document alive. The
// statuses and wait reasons become the package's constants.
func (r *RunState) detachStrings() {
	r.Status = canonicalStatus(r.Status)
	var fields [13]*string
	f := append(fields[:0], &r.RunID, &r.WorkflowID, &r.CurrentNode, &r.Error, &r.ActorID, &r.SessionID, &r.ParentRunID,
		&r.createdText, &r.updatedText)
	if w := r.Waiting; w != nil {
		w.Reason = canonicalReason(w.Reason)
		f = append(f, &w.WaitKey, &w.ResumeToNode, &w.ResultKey, &w.Prompt)
	}
	n := 0
	for _, s := range f {
		n += len(*s)
	}
	if n == 0 {
		return
	}
	buf := make([]byte, 0, n)
	for _, s := range f {
		buf = append(buf, *s...)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	for _, s := range f {
		l := len(*s)
		*s, all = all[:l], all[l:]
	}
}

// canonicalStatus returns the package's constant for a known status.
func canonicalStatus(s RunStatus) RunStatus {
	switch s {
	case RunRunning:
		return RunRunning
	case RunWaiting:
		return RunWaiting
	case RunCompleted:
		return RunCompleted
	case RunFailed:
		return RunFailed
	case RunCancelled:
		return RunCancelled
	}
	return s
}

// canonicalReason returns the package's constant for a known reason.
func canonicalReason(r WaitReason) WaitReason {
	switch r {
	case WaitEvent:
		return WaitEvent
	case WaitUntil:
		return WaitUntil
	case WaitUser:
		return WaitUser
	case WaitJob:
		return WaitJob
	case WaitSubworkflow:
		return WaitSubworkflow
	}
	return r
}

// RunFromJSON builds a RunState from a decoded JSON object.
func RunFromJSON(m map[string]any) (*RunState, error) {
	r := &RunState{}
	for k, v := range m {
		if err := r.set(k, v); err != nil {
			return nil, err
		}
	}
	if err := r.checkDecoded(); err != nil {
		return nil, err
	}
	return r, nil
}

// checkDecoded applies the rules of the Python stores once every member
// is read: run_id is required, status must be known, vars default to {}.
func (r *RunState) checkDecoded() error {
	if r.RunID == "" {
		return fmt.Errorf("field \"run_id\" is missing")
	}
	if !r.Status.Valid() {
		return fmt.Errorf("field \"status\": unknown run status %q", r.Status)
	}
	if r.Vars == nil {
		r.Vars = map[string]any{}
	}
	return nil
}

// CheckReadable returns why this package's decoders (and Python's
// RunState.from_dict) would refuse r once written, or nil: a run needs an
// id, a known status, and a known reason for its wait if it has one. A
// store checks it before writing, so that it never writes a run it could
// not read back: such a run would be lost (not loadable, resumable nor
// cancellable).
func (r *RunState) CheckReadable() error {
	if r.RunID == "" {
		return fmt.Errorf("the run has no id")
	}
	if !r.Status.Valid() {
		return fmt.Errorf("run status %q is not one of %s", r.Status, oneOf(RunStatuses()))
	}
	if r.Waiting != nil && !r.Waiting.Reason.Valid() {
		return fmt.Errorf("wait reason %q is not one of %s", r.Waiting.Reason, oneOf(WaitReasons()))
	}
	return nil
}

// oneOf spells the values as a list in an error: "a, b or c".
func oneOf[T ~string](values []T) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == len(values)-1 && i > 0:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// set assigns one member of the wire object, replacing what an earlier
// occurrence of the key set; unknown keys are ignored.
func (r *RunState) set(key string, v any) error {
	var err error
	switch key {
	case "run_id":
		r.RunID, err = asString(key, v)
	case "workflow_id":
		r.WorkflowID, err = asString(key, v)
	case "status":
		var st string
		st, err = asString(key, v)
		r.Status = RunStatus(st)
	case "current_node":
		r.CurrentNode, err = asString(key, v)
	case "vars":
		r.Vars, err = asObject(key, v)
	case "waiting":
		r.Waiting, err = DecodeWaitState(v)
		if _, obj := v.(map[string]any); err != nil && obj {
			// A member's error names the member alone ("reason"): say
			// whose it is.
			err = fmt.Errorf("waiting: %w", err)
		}
	case "output":
		r.outputRead = nil
		if r.Output, err = asObject(key, v); err != nil {
			r.Output, r.outputRead, err = nil, v, nil
		}
	case "error":
		r.Error, err = asString(key, v)
		r.emptyNotNull.note(emptyError, v)
	case "created_at":
		r.CreatedAt, r.createdText, err = asTimeOrText(key, v)
	case "updated_at":
		r.UpdatedAt, r.updatedText, err = asTimeOrText(key, v)
	case "actor_id":
		r.ActorID, err = asString(key, v)
		r.emptyNotNull.note(emptyActor, v)
	case "session_id":
		r.SessionID, err = asString(key, v)
		r.emptyNotNull.note(emptySession, v)
	case "parent_run_id":
		r.ParentRunID, err = asString(key, v)
		r.emptyNotNull.note(emptyParent, v)
	}
	return err
}
