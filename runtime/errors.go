package runtime

import (
	"errors"
	"fmt"
)

// Errors callers test with errors.Is.
var (
	// ErrRunPaused: the run is paused by its host; resume it first.
	ErrRunPaused = errors.New("run is paused")
	// ErrRunCancelled is the cause given to the context of an effect
	// interrupted by Cancel.
	ErrRunCancelled = errors.New("run cancelled")

	// ErrOwnRunLocked is the error of a call that needs a run's lock
	// (UpdateLimits, Pause, Cancel, Resume, Tick, ...) made from within
	// that run's own tick or host update (a node, an effect handler, a
	// step gate), which holds the lock: it would wait for itself. Make the
	// call from outside the tick, or return a plan that does the work.
	ErrOwnRunLocked = errors.New("called from within the run's own tick, which holds its lock")
	// ErrStepGateClosed may be returned by a StepGate to stop a tick at a
	// step boundary without error.
	ErrStepGateClosed = errors.New("step gate closed")
)

// WorkflowNotFoundError reports a workflow id missing from the registry.
type WorkflowNotFoundError struct{ WorkflowID string }

func (e *WorkflowNotFoundError) Error() string {
	return fmt.Sprintf("workflow %q is not registered", e.WorkflowID)
}

// RunNotServedError reports a live run whose workflow the registry lacks:
// the run was opened to work on it and left as it was. It unwraps to the
// WorkflowNotFoundError.
type RunNotServedError struct {
	RunID      string
	WorkflowID string
}

func (e *RunNotServedError) Error() string {
	return "run " + e.RunID + ": " + e.Unwrap().Error()
}

// Unwrap returns the registry's error.
func (e *RunNotServedError) Unwrap() error { return &WorkflowNotFoundError{WorkflowID: e.WorkflowID} }

// StaleResumeError reports a resume of a run that no longer waits on the
// given key: it was resumed already, waits for something else, or ended.
// A wait is resumed at most once.
type StaleResumeError struct {
	RunID    string
	Status   string
	Expected string // the stored wait key ("" when not waiting)
	Got      string
	// NoWait: the run's status is waiting but it holds no wait (another
	// writer may store one so: the wait is nullable), so there is nothing
	// to answer and Expected means nothing.
	NoWait bool
}

func (e *StaleResumeError) Error() string {
	if e.NoWait {
		return fmt.Sprintf("stale resume of run %s: run is not waiting (status %s but no wait stored)", e.RunID, e.Status)
	}
	if e.Status != "waiting" {
		return fmt.Sprintf("stale resume of run %s: run is not waiting (status %s)", e.RunID, e.Status)
	}
	return fmt.Sprintf("stale resume of run %s: wait_key mismatch: expected '%s', got '%s'", e.RunID, e.Expected, e.Got)
}

// IdentityConflictError reports a Start with an explicit run id that
// exists with a different identity (workflow, session, parent or vars).
type IdentityConflictError struct {
	RunID  string
	Field  string
	Stored string
	Given  string
}

// ReasonCode is the stable code of this error.
func (e *IdentityConflictError) ReasonCode() string { return "identity_conflict" }

func (e *IdentityConflictError) Error() string {
	return fmt.Sprintf("run %s exists with a different identity: %s is %q, start asked for %q",
		e.RunID, e.Field, e.Stored, e.Given)
}
