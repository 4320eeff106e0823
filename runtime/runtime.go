package runtime

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// Config configures a Runtime. The zero value of each field means its
// default.
type Config struct {
	// Store persists runs, ledgers and commands. Required.
	Store store.Store
	// Registry resolves workflow ids; a new empty one when nil.
	Registry *Registry
	// Artifacts stores large or binary values; the memory effects need
	// it. Optional.
	Artifacts artifact.Store
	// Handlers are merged over the built-in handlers (a host may replace a
	// built-in, e.g. to wire LLM_CALL or TOOL_CALLS).
	Handlers map[durable.EffectType]Handler
	// Policy decides retries; RetryPolicy{} (one attempt) when nil.
	Policy EffectPolicy
	// Limits seeds vars._limits of new runs.
	Limits LimitsConfig
	// MaxSteps is the step budget of one Tick when TickOptions gives
	// none. Default 100.
	MaxSteps int
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// NewID returns fresh run and step ids; random UUID4s when nil.
	NewID func() string
	// Logger receives operational logs; discarded when nil.
	Logger *slog.Logger
	// Claims, when set, makes the runtime claim each run before working
	// on it: set it when runners in several processes share one store.
	Claims *Claims
	// Sleep waits between retry attempts; a context-aware timer when nil.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Runtime executes workflows as durable state machines over a Store.
// It is safe for concurrent use; calls on one run are serialised by a
// per-run mutation lock.
type Runtime struct {
	store       store.Store
	atomic      bool
	registry    *Registry
	arts        artifact.Store
	handlers    map[durable.EffectType]Handler
	policy      EffectPolicy
	limits      LimitsConfig
	limitsV     map[string]any // vars._limits of new runs, computed once
	maxSteps    int
	clock       func() time.Time
	customClock bool // Config.Clock was set: claims use it instead of the store's clock
	newID       func() string
	randomIDs   bool // newID is NewUUID: its ids are new to any store
	logger      *slog.Logger
	sleep       func(ctx context.Context, d time.Duration) error

	claims *claimer // nil: no claims

	followRetries followRetries // follow-ups to drive again (followretry.go)

	locksMu sync.Mutex
	locks   map[string]*runLock
}

// New returns a Runtime.
func New(cfg Config) (*Runtime, error) {
	if cfg.Store == nil {
		return nil, errors.New("runtime: Config.Store is required")
	}
	r := &Runtime{
		store:       cfg.Store,
		atomic:      store.IsAtomic(cfg.Store),
		registry:    cfg.Registry,
		arts:        cfg.Artifacts,
		policy:      cfg.Policy,
		limits:      cfg.Limits,
		maxSteps:    cmp.Or(cfg.MaxSteps, 100),
		clock:       cfg.Clock,
		customClock: cfg.Clock != nil,
		newID:       cfg.NewID,
		logger:      cfg.Logger,
		sleep:       cfg.Sleep,
		locks:       map[string]*runLock{},
	}
	if r.registry == nil {
		r.registry = &Registry{}
	}
	if r.policy == nil {
		r.policy = RetryPolicy{}
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.newID == nil {
		r.newID = NewUUID
		r.randomIDs = true
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	if r.sleep == nil {
		r.sleep = sleepContext
	}
	var err error
	if r.claims, err = newClaimer(cfg.Store, cfg.Claims); err != nil {
		return nil, err
	}
	// In the decoder's types (json.Number), as every store reads them back:
	// a new run's limits then look the same before and after a checkpoint,
	// and a store's copy of them costs nothing to normalise.
	if r.limitsV, err = pyjson.NormalizeObject(r.limits.limitsDict()); err != nil {
		return nil, fmt.Errorf("runtime: limits: %w", err)
	}
	r.handlers = builtinHandlers()
	maps.Copy(r.handlers, cfg.Handlers)
	return r, nil
}

// Registry returns the workflow registry.
func (r *Runtime) Registry() *Registry { return r.registry }

// Artifacts returns the artifact store, or nil.
func (r *Runtime) Artifacts() artifact.Store { return r.arts }

// Store returns the store.
func (r *Runtime) Store() store.Store { return r.store }

// Now returns the current time by the runtime's clock (Config.Clock), the
// time its ticks judge deadlines by.
func (r *Runtime) Now() time.Time { return r.clock() }

// SetHandler registers (or replaces) the handler of an effect type.
// Call it before the runtime is used concurrently.
func (r *Runtime) SetHandler(t durable.EffectType, h Handler) { r.handlers[t] = h }

// Handler returns the handler registered for t, if any.
func (r *Runtime) Handler(t durable.EffectType) (Handler, bool) {
	h, ok := r.handlers[t]
	return h, ok
}

func (r *Runtime) now() durable.Time { return durable.NewTime(r.clock()) }

// NewUUID returns a random RFC 4122 version 4 UUID string.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// runLock is the per-run mutation lock plus the in-process control
// signals a host uses to reach a tick that holds it.
type runLock struct {
	// The mutation lock: held, and the waiters to hand it to in turn.
	// A waiter can give up (its caller's context ends), which a
	// sync.Mutex would not let it do.
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
	refs    int

	sigMu sync.Mutex
	// pauseRequests counts the stop requests under way (pauses and
	// cancels): a count, so that one host call withdrawing its request
	// (done, or given up) leaves the others standing.
	pauseRequests int
	// cancelRequests counts the cancels under way: an effect about to
	// start gets an already cancelled context (cancelInflight reaches only
	// an effect that runs).
	cancelRequests int
	cancelInflight context.CancelCauseFunc
	// cancelCauses are the causes (reason, run aimed at) of the cancels
	// under way, oldest first (one per cancel request); cutCause is the
	// cause of the cancel that cut the context made last by cancellable,
	// the zero cause if none did. The tick that records an attempt
	// cancelled commits its run cancelled with it: the Cancel may have
	// given up waiting for that tick by then.
	cancelCauses []cancelCause
	cutCause     cancelCause
	// pauseWait cuts short the wait before a retry (backoff): a pause
	// request ends it too, where it lets an attempt in flight finish.
	pauseWait context.CancelCauseFunc
	// stopsSettled, when set, is closed (and cleared) once no stop
	// request stands (pauseRequests back to 0): a sync parent waits on it
	// for the Pause or Cancel that stopped its child to commit or give
	// up (awaitStopRequests).
	stopsSettled chan struct{}
	// memoryHeld is set while a memory effect of another run holds the
	// lock to write into this run (lockOwner): a writer that finds it
	// held by one waits for it, not only for a tick.
	memoryHeld bool
}

// tryAcquire takes the lock if it is free.
func (l *runLock) tryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return false
	}
	l.held = true
	return true
}

// acquire takes the lock, waiting for it until ctx ends; waiters get it
// in the order they came. It costs no allocation when the lock is free.
func (l *runLock) acquire(ctx context.Context) error {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return nil
	}
	turn := make(chan struct{}, 1)
	l.waiters = append(l.waiters, turn)
	l.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if i := slices.Index(l.waiters, turn); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		l.mu.Unlock()
		return context.Cause(ctx)
	}
	l.mu.Unlock()
	// The lock was handed over as ctx ended: pass it on, untouched.
	l.release()
	return context.Cause(ctx)
}

// release frees the lock, handing it to the first waiter if any.
func (l *runLock) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiters) == 0 {
		l.held = false
		return
	}
	next := l.waiters[0]
	l.waiters = slices.Delete(l.waiters, 0, 1)
	next <- struct{}{} // buffered: it never blocks
}

// lock acquires the mutation lock of a run, waiting for the tick or
// update holding it until ctx ends: then it returns ctx's error, and the
// caller must do nothing to the run. The returned function releases it.
func (r *Runtime) lock(ctx context.Context, runID string) (*runLock, func(), error) {
	l := r.ref(runID)
	if err := l.acquire(ctx); err != nil {
		r.unref(runID, l)
		return nil, nil, fmt.Errorf("run %s: gave up waiting for the tick or update holding it in this process: %w", runID, err)
	}
	return l, func() {
		l.release()
		r.unref(runID, l)
	}, nil
}

// heldKey is the context key of the run locks the calls up the stack
// hold (heldLock).
type heldKey struct{}

// heldLock is the context a tick or host update hands to nodes, handlers
// and step gates while it holds a run's lock (the context itself, so that
// marking costs one allocation): a call of theirs needing the same lock
// fails at once (ErrOwnRunLocked) instead of waiting for itself for ever.
// held is cleared at unlock, since contexts outlive the hold.
type heldLock struct {
	context.Context
	rt    *Runtime // locks are per Runtime
	runID string
	held  atomic.Bool
	outer *heldLock
	// sess is the session of a tick holding the lock (nil for a host
	// update): its working copy of the run is what the run's own nodes
	// and handlers read through heldRun.
	sess atomic.Pointer[session]
}

// Value returns the innermost heldLock for heldKey, else ctx's value.
func (h *heldLock) Value(key any) any {
	if key == (heldKey{}) {
		return h
	}
	return h.Context.Value(key)
}

// release clears the mark: the lock is no longer held.
func (h *heldLock) release() { h.held.Store(false) }

// withHeldLock returns ctx marked as holding runID's lock.
func (r *Runtime) withHeldLock(ctx context.Context, runID string) *heldLock {
	outer, _ := ctx.Value(heldKey{}).(*heldLock)
	h := &heldLock{Context: ctx, rt: r, runID: runID, outer: outer}
	h.held.Store(true)
	return h
}

// holdsLock reports whether ctx comes from a call that holds runID's lock
// in r.
func (r *Runtime) holdsLock(ctx context.Context, runID string) bool {
	for h, _ := ctx.Value(heldKey{}).(*heldLock); h != nil; h = h.outer {
		if h.rt == r && h.runID == runID && h.held.Load() {
			return true
		}
	}
	return false
}

// heldRun returns the working copy of runID's state that a tick up ctx's
// call stack holds (the run its nodes are given), or nil when no tick of
// runID holds its lock there. Only the tick's own goroutine (its nodes
// and handlers) may read it.
func (r *Runtime) heldRun(ctx context.Context, runID string) *durable.RunState {
	if ctx.Err() != nil {
		// A handler's context ends when it returns: a goroutine it left
		// running with it reads the store, not a run the tick goes on
		// changing.
		return nil
	}
	// Likewise a goroutine a node left running: the node's context does
	// not end with it, so it is marked. A node call made under lock h
	// sits between h and the locks inside it (a tick the node started):
	// once it has returned, h's working copy and those of the locks
	// outside h go on changing under its goroutines, while the ticks
	// started inside it still serve their own nodes and handlers.
	nc, _ := ctx.Value(nodeCallKey{}).(*nodeCallCtx)
	ended := false
	for h, _ := ctx.Value(heldKey{}).(*heldLock); h != nil; h = h.outer {
		for ; nc != nil && nc.lock == h; nc = nc.outer {
			ended = ended || nc.ended.Load()
		}
		if h.rt == r && h.runID == runID && h.held.Load() {
			if s := h.sess.Load(); s != nil && !ended {
				return s.run
			}
			return nil
		}
	}
	return nil
}

// Busy reports whether this runtime is working on the run right now (a
// tick, a resume or a host update holds or awaits its lock in this
// process, or a Pause or Cancel has a stop request pending on it). A
// scheduler does not wait for such a run, as that would hold its other
// runs up: it drives the run later, once it is free.
func (r *Runtime) Busy(runID string) bool {
	r.locksMu.Lock()
	defer r.locksMu.Unlock()
	l := r.locks[runID]
	return l != nil && l.refs > 0
}

// ref returns the lock of a run without acquiring it (for signals).
func (r *Runtime) ref(runID string) *runLock {
	r.locksMu.Lock()
	l := r.locks[runID]
	if l == nil {
		l = &runLock{}
		r.locks[runID] = l
	}
	l.refs++
	r.locksMu.Unlock()
	return l
}

func (r *Runtime) unref(runID string, l *runLock) {
	r.locksMu.Lock()
	l.refs--
	if l.refs == 0 {
		delete(r.locks, runID)
	}
	r.locksMu.Unlock()
}

// GetState returns the persisted state of a run. Called by a node or
// handler of the run (ctx is the one its tick handed it), it returns a
// copy of the run as that tick holds it, its uncommitted steps included,
// as Python's get_state reads the run saved after every step: the stored
// run may be several steps behind (pure transitions are committed only at
// checkpoints).
func (r *Runtime) GetState(ctx context.Context, runID string) (*durable.RunState, error) {
	if run := r.heldRun(ctx, runID); run != nil {
		return run.Clone(), nil
	}
	run, err := r.store.RunGet(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("loading run %s: %w", runID, err)
	}
	return run, nil
}

// GetNodeTraces returns the run's node traces (vars._runtime.node_traces,
// §1.12) by node id; a run without any gives an empty map. The run is read
// as GetState reads it (from a node of the run, with the traces of its
// uncommitted steps), so the traces are the caller's own copy.
func (r *Runtime) GetNodeTraces(ctx context.Context, runID string) (map[string]any, error) {
	run, err := r.GetState(ctx, runID)
	if err != nil {
		return nil, err
	}
	rt, _ := run.Vars["_runtime"].(map[string]any)
	traces, _ := rt["node_traces"].(map[string]any)
	if traces == nil {
		traces = map[string]any{}
	}
	return traces, nil
}

// GetNodeTrace returns one node's trace, or {"node_id": nodeID, "steps": []}
// when the node has none.
func (r *Runtime) GetNodeTrace(ctx context.Context, runID, nodeID string) (map[string]any, error) {
	traces, err := r.GetNodeTraces(ctx, runID)
	if err != nil {
		return nil, err
	}
	if t, ok := traces[nodeID].(map[string]any); ok {
		return t, nil
	}
	return map[string]any{"node_id": nodeID, "steps": []any{}}, nil
}

// GetLedger returns every ledger record of a run in append order.
func (r *Runtime) GetLedger(ctx context.Context, runID string) ([]*durable.StepRecord, error) {
	recs, err := r.store.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("reading ledger of run %s: %w", runID, err)
	}
	return recs, nil
}
