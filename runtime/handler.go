package runtime

import (
	"context"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// OutcomeStatus is how an effect attempt ended.
type OutcomeStatus string

// Outcome statuses.
const (
	OutcomeCompleted OutcomeStatus = "completed"
	OutcomeWaiting   OutcomeStatus = "waiting"
	OutcomeFailed    OutcomeStatus = "failed"
)

// Outcome is the result of one effect attempt.
type Outcome struct {
	Status OutcomeStatus
	Result any                // completed: the JSON result (may be nil)
	Wait   *durable.WaitState // waiting
	Error  string             // failed
	// cancel, on an internal cancelled outcome, is the tree cancel that
	// ends the run with the attempt (cancelledOutcome).
	cancel *cancelCause
}

// Completed returns a completed outcome.
func Completed(result any) Outcome { return Outcome{Status: OutcomeCompleted, Result: result} }

// Waiting returns a waiting outcome.
func Waiting(w *durable.WaitState) Outcome { return Outcome{Status: OutcomeWaiting, Wait: w} }

// Failed returns a failed outcome.
func Failed(msg string) Outcome { return Outcome{Status: OutcomeFailed, Error: msg} }

// EffectRequest is what a handler receives.
type EffectRequest struct {
	// Run is the run requesting the effect. Handlers may change Run.Vars
	// (memory handlers do); the change is persisted with the step.
	Run    *durable.RunState
	Effect *durable.Effect
	NodeID string
	// DefaultNext is the plan's next node: the default resume target of
	// a wait.
	DefaultNext    string
	IdempotencyKey string
	StepID         string
	// Attempt is the 1-based number of this attempt of the effect under
	// the runtime's EffectPolicy: 1, then 2, … for each retry of a failed
	// attempt. A run replayed after a pause, a crash or an interruption
	// goes on after the last failed attempt recorded; an interrupted
	// attempt is made again under its number. A RerunOnReplay call (ReplayedResult set)
	// gets the attempt of the completed record it replays.
	Attempt int
	Runtime *Runtime
	// ReplayedResult is set only when a RerunOnReplay handler is called
	// again for a completed record a replay reuses: the result that record
	// holds. A record Python wrote was made under its own key, not
	// IdempotencyKey: what the handler derives from the key (the id of
	// something it stored) must then be taken from this result instead.
	ReplayedResult any

	drv *driver
	// tickCtx is the context of the tick that runs the effect, without
	// the layer a cancel of this run cancels: what runs the handler
	// drives that is not this run's (a listener resumed and ticked by
	// EMIT_EVENT) must not be cancelled with it.
	tickCtx context.Context
	// outOfGraph marks an effect ApplyEffect runs outside the run's
	// graph, where a wait is turned into a failure: a handler that knows
	// it will wait fails before doing anything (a child started only to
	// be orphaned).
	outOfGraph bool
}

// ResumeTarget returns payload.resume_to_node when it is a non-empty
// string, else DefaultNext. The built-in waiting handlers use
// setResumeTarget, which keeps a non-string target as Python does.
func (r *EffectRequest) ResumeTarget() string {
	if s, ok := r.Effect.Payload["resume_to_node"].(string); ok && s != "" {
		return s
	}
	return r.DefaultNext
}

// setResumeTarget sets w's resume target as Python's wait handlers do,
// payload.get("resume_to_node") or next_node: a truthy value as given (a
// non-string one is stored for the wire but names no node, see
// durable.WaitState.SetResumeToValue), else DefaultNext.
func (r *EffectRequest) setResumeTarget(w *durable.WaitState) {
	if v := r.Effect.Payload["resume_to_node"]; truthy(v) {
		w.SetResumeToValue(v)
		return
	}
	w.ResumeToNode = r.DefaultNext
}

// HandlerFunc executes one effect attempt. ctx is cancelled (with cause
// ErrRunCancelled) when the run is cancelled. A returned error becomes a
// failed outcome, except ErrRunClaimed (a run the handler drives is
// another runner's): the tick then stops at its checkpoint and the
// attempt is made again when the run is next ticked.
type HandlerFunc func(ctx context.Context, req *EffectRequest) (Outcome, error)

// Handler is a registered effect handler.
type Handler struct {
	Func HandlerFunc
	// Local marks handlers that act only inside this process and this
	// run (asking a user, computing a deadline): their STARTED record is
	// committed together with the outcome. Other handlers (LLM calls,
	// tools, starting runs, delivering events) get their STARTED record
	// made durable before they run, and their outcome right after.
	Local bool
	// RerunOnReplay marks handlers that change the requesting run beyond
	// their result (a memory note's span index, a rehydrate's messages).
	// A replay that finds the effect's completed record without the state
	// that followed it (a kill between the two writes of a non-atomic
	// store, or a run Python left) reuses the recorded result, and calls
	// the handler again only to make those changes again (its outcome is
	// dropped, no record is added, EffectRequest.ReplayedResult holds the
	// recorded result); such a handler must be idempotent under its
	// idempotency key, and under the recorded result when the record is
	// Python's, and must then change only the requesting run: its writes
	// to other runs were committed before the record.
	RerunOnReplay bool
}

// EffectPolicy decides retries.
type EffectPolicy interface {
	// MaxAttempts is how many times an effect may be attempted (≥ 1).
	MaxAttempts(e *durable.Effect) int
	// Backoff is the pause after failed attempt n (1-based).
	Backoff(e *durable.Effect, attempt int) time.Duration
}

// RetryPolicy retries failed effects with exponential backoff:
// min(Base·2^(n-1), Max). The zero value is the Python DefaultEffectPolicy:
// one attempt, no retry.
type RetryPolicy struct {
	DefaultAttempts int                        // 0 means 1
	Attempts        map[durable.EffectType]int // per effect type overrides
	// Base is the first wait between attempts, doubled after each: 0
	// means 1s; negative means no wait (Python's backoff_base=0.0, which a
	// zero here cannot say since it means the default).
	Base time.Duration
	Max  time.Duration // the longest wait; 0 means 60s
}

// NoRetry executes every effect once.
var NoRetry = RetryPolicy{DefaultAttempts: 1}

// LLMRetry is Python's RetryPolicy(): LLM calls 3 attempts, tool calls 2,
// backoff 1s doubling up to 30s.
var LLMRetry = RetryPolicy{
	DefaultAttempts: 1,
	Attempts:        map[durable.EffectType]int{durable.EffectLLMCall: 3, durable.EffectToolCalls: 2},
	Base:            time.Second,
	Max:             30 * time.Second,
}

// MaxAttempts implements EffectPolicy.
func (p RetryPolicy) MaxAttempts(e *durable.Effect) int {
	if n, ok := p.Attempts[e.Type]; ok && n > 0 {
		return n
	}
	return max(p.DefaultAttempts, 1)
}

// Backoff implements EffectPolicy.
func (p RetryPolicy) Backoff(e *durable.Effect, attempt int) time.Duration {
	base, maxD := p.Base, p.Max
	if base < 0 {
		return 0
	}
	if base == 0 {
		base = time.Second
	}
	if maxD <= 0 {
		maxD = 60 * time.Second
	}
	d := base
	for i := 1; i < attempt && d < maxD; i++ {
		if d > maxD/2 {
			return maxD // doubling would pass the cap, or overflow
		}
		d *= 2
	}
	return min(d, maxD)
}
