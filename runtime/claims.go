package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// Claims makes a Runtime claim every run before it works on it — a tick,
// a resume, and the runs a tick drives in turn (children, listeners, a
// parent waiting on a child) — on a store that implements
// store.RunClaimer. Runners in several processes sharing one store then
// never work on the same run at once. Without claims, two runners could
// both pick up a run whose effect is in flight and both execute it (under
// the same idempotency key); versioned commits keep the run's state
// right either way. A single process does not need claims: its per-run
// lock suffices, and each claim and release is a transaction of its own.
type Claims struct {
	// Owner names this runner in claims; a random id when empty. Two
	// runtimes must not share an owner.
	Owner string
	// TTL is how long a claim lasts without renewal: a runner that dies
	// holding one blocks the run that long. A held claim is renewed while
	// the runner works on the run, so an effect may outlast it; the TTL
	// only bounds how long renewals may fail (a store out of reach) before
	// another runner may take the run. A runner whose renewals have not
	// got through for 90 % of the TTL stops its tick (its effect's context
	// is cancelled with ErrRunClaimed), so that the effect never runs on
	// two runners at once. Default 1m.
	TTL time.Duration
	// RenewEvery is how often a runner working on a run renews its claim,
	// and so how soon it learns that a Cancel made through another runner
	// took the run from it (its effect in flight is then interrupted and
	// nothing more of its tick is committed). Default 1s; at most TTL/3.
	RenewEvery time.Duration
}

// ErrRunClaimed reports that another runner holds the run's claim: the
// tick or resume did nothing, and that runner continues the run. It is
// also the cause of a tick that lost its claim midway (another runner
// took the run, or no renewal got through for 90 % of the TTL): the
// tick's context is cancelled and nothing more of it is committed.
var ErrRunClaimed = errors.New("run is claimed by another runner")

// claimRefusedError is ErrRunClaimed from claiming run runID: another
// runner (holder, when the store names it) held it and nothing was done.
// It tells that apart from ErrRunClaimed out of work already under way on
// the run (its claim lost midway; a child held elsewhere interrupting its
// effect, whose own refusal names the child), after which a resume's
// answer may already be committed.
type claimRefusedError struct {
	runID  string
	holder string
	err    error
}

func (e claimRefusedError) Error() string { return e.err.Error() }
func (e claimRefusedError) Unwrap() error { return e.err }

// refusedBy returns the holder named by err when err is the refused claim
// of runID itself (claimRefusedError); ok is false for any other error.
func refusedBy(err error, runID string) (holder string, ok bool) {
	var refused claimRefusedError
	if !errors.As(err, &refused) || refused.runID != runID {
		return "", false
	}
	return refused.holder, true
}

// claimRefused reports whether err is the refused claim of runID itself.
func claimRefused(err error, runID string) bool {
	_, ok := refusedBy(err, runID)
	return ok
}

// claimer is the resolved Claims of a runtime.
type claimer struct {
	store store.RunClaimer
	owner string
	ttl   time.Duration
	renew time.Duration

	// kept maps the runs whose forced claim a failed cancel kept (see
	// claimHold.keepOnRelease) to when that claim expires, in claimClock
	// nanoseconds: this runner's own claims wait for it as another
	// runner's do, except a cancel's forced one.
	keptMu sync.Mutex
	kept   map[string]int64
}

func newClaimer(st store.Store, c *Claims) (*claimer, error) {
	if c == nil {
		return nil, nil
	}
	rc, ok := st.(store.RunClaimer)
	if !ok || !store.HasClaims(st) {
		return nil, errors.New("runtime: Config.Claims needs a store that implements store.RunClaimer")
	}
	ttl := cmp.Or(c.TTL, time.Minute)
	return &claimer{store: rc, owner: cmp.Or(c.Owner, "runner-"+NewUUID()), ttl: ttl,
		renew: min(cmp.Or(c.RenewEvery, time.Second), ttl/3)}, nil
}

// keep records that runID's claim is kept unreleased until until
// (claimClock), dropping entries whose time has passed.
func (c *claimer) keep(runID string, until int64) {
	c.keptMu.Lock()
	defer c.keptMu.Unlock()
	now := claimClock()
	for id, t := range c.kept {
		if t <= now {
			delete(c.kept, id)
		}
	}
	if c.kept == nil {
		c.kept = map[string]int64{}
	}
	c.kept[runID] = until
}

// isKept reports whether runID's claim is kept by a failed cancel.
func (c *claimer) isKept(runID string) bool {
	c.keptMu.Lock()
	defer c.keptMu.Unlock()
	t, ok := c.kept[runID]
	if ok && t <= claimClock() {
		delete(c.kept, runID)
	}
	return ok && t > claimClock()
}

// unkeep forgets runID's kept claim: a forced claim takes the run again.
func (c *claimer) unkeep(runID string) {
	c.keptMu.Lock()
	delete(c.kept, runID)
	c.keptMu.Unlock()
}

// claim claims runID for this runtime when it claims runs. It returns the
// context to work on the run with (cancelled if the claim is lost) and
// the hold to release; ErrRunClaimed when another runner holds the run.
// Without claims it returns ctx and a nil hold.
func (r *Runtime) claim(ctx context.Context, runID string) (context.Context, *claimHold, error) {
	return r.claimAs(ctx, runID, false, "")
}

// claimForcing is claim taking the run from another runner that holds
// it: Cancel's claim. The holder learns it lost the run at its next
// renewal (Claims.RenewEvery) and stops: its effect in flight is
// interrupted and nothing more of its tick is committed; a commit it made
// meanwhile makes the cancel's commit conflict, and the cancel reloads.
func (r *Runtime) claimForcing(ctx context.Context, runID string) (context.Context, *claimHold, error) {
	work, hold, err := r.claimAs(ctx, runID, false, "")
	if errors.Is(err, ErrRunClaimed) {
		r.logger.InfoContext(ctx, "taking the run from the runner holding it", "run_id", runID)
		work, hold, err = r.claimAs(ctx, runID, true, "")
		if hold != nil {
			hold.forced = true
		}
	}
	return work, hold, err
}

// claimTaking is claim taking the run from runner from only (any holder
// when from is ""): a run seen idle under a runner that died holding it
// is taken over, but not from another runner that took it over first.
//
// The taking is fenced first: the run, which must still be at version
// (as the caller saw it idle), is committed unchanged before the claim is
// taken. A holder that was alive after all, working on the run with
// nothing committed since its wait (a due wait released, pure nodes
// running), then has its next commit refused and never starts an effect
// beside the taker's; of several runners taking over at once, only the
// first fence succeeds. A run that moved on meanwhile is not taken
// (ErrRunClaimed): its holder, or the runner that took it first, is
// working on it.
func (r *Runtime) claimTaking(ctx context.Context, runID, from string, version int64) (context.Context, *claimHold, error) {
	if r.claims == nil {
		return ctx, nil, nil
	}
	run, err := r.store.RunGet(ctx, runID)
	if err == nil && run.Version != version {
		err = store.ErrConflict
	}
	if err == nil {
		err = r.store.RunCommit(ctx, &store.CommitParams{Run: run})
	}
	if errors.Is(err, store.ErrConflict) {
		return nil, nil, claimRefusedError{runID: runID, holder: from,
			err: fmt.Errorf("run %s: another runner worked on it meanwhile: %w", runID, ErrRunClaimed)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("taking over run %s: %w", runID, err)
	}
	work, hold, err := r.claimAs(ctx, runID, true, from)
	if hold != nil {
		hold.fencedAt = version
	}
	return work, hold, err
}

func (r *Runtime) claimAs(ctx context.Context, runID string, force bool, from string) (context.Context, *claimHold, error) {
	c := r.claims
	if c == nil {
		return ctx, nil, nil
	}
	if force {
		c.unkeep(runID)
	} else if c.isKept(runID) {
		return nil, nil, claimRefusedError{runID: runID, holder: c.owner,
			err: fmt.Errorf("run %s: kept by a cancel that failed, until the runner it was taken from stops: %w", runID, ErrRunClaimed)}
	}
	sent := time.Now()
	err := c.store.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: c.owner, TTL: c.ttl, Now: r.claimTime(), Force: force, From: from})
	if errors.Is(err, store.ErrConflict) {
		refused := claimRefusedError{runID: runID, err: fmt.Errorf("run %s: %w", runID, ErrRunClaimed)}
		var held *store.ClaimHeldError
		if errors.As(err, &held) {
			refused.holder = held.Owner
		}
		return nil, nil, refused
	}
	if err != nil {
		// The claim may have been taken all the same (a cancelled call
		// whose statement the database committed): drop it, or the run
		// would stay held until the claim expires.
		if rerr := c.store.RunRelease(context.WithoutCancel(ctx), runID, c.owner); rerr != nil {
			r.logger.WarnContext(ctx, "releasing a claim whose taking failed", "run_id", runID, "error", rerr)
		}
		return nil, nil, fmt.Errorf("claiming run %s: %w", runID, err)
	}
	work, cancel := context.WithCancelCause(ctx)
	h := &claimHold{r: r, runID: runID, base: context.WithoutCancel(ctx), cancel: cancel}
	h.mu.Lock() // a first renewal waits until the timers are stored
	h.timer = time.AfterFunc(c.renew, h.renew)
	// By the wall clock whatever Config.Clock is: the timer fires only
	// when renewals keep failing, and a runner cut off from the store must
	// stop its effect before another may take the run, also when its host
	// passed time.Now as the clock.
	h.expiry = time.AfterFunc(h.extend(sent), h.expire)
	h.mu.Unlock()
	return work, h, nil
}

// claimWaits are the pauses before each new attempt to claim a run that
// another runner holds, for the callers that wait (about 1.3 s in all): a
// run is mostly held briefly (a tick between waits, an event delivery, a
// host update), and giving up at once would fail a host's pause or cancel
// or lose an event for a listener.
var claimWaits = []time.Duration{5, 10, 20, 40, 80, 160, 320, 640}

// claimWaiting is claim, trying again while another runner holds the run
// (claimWaits) before it gives up with ErrRunClaimed.
func (r *Runtime) claimWaiting(ctx context.Context, runID string) (context.Context, *claimHold, error) {
	for i := 0; ; i++ {
		work, hold, err := r.claim(ctx, runID)
		if !errors.Is(err, ErrRunClaimed) || i == len(claimWaits) {
			return work, hold, err
		}
		if err := sleepContext(ctx, claimWaits[i]*time.Millisecond); err != nil {
			return nil, nil, fmt.Errorf("waiting for run %s held by another runner: %w", runID, err)
		}
	}
}

// claimHold is a claim a runner holds while it works on a run. It renews
// the claim every Claims.RenewEvery (a renewal that fails for another
// reason is retried at the next period); when another runner has taken
// the run (its claim expired, or a cancel forced it), it cancels the
// work's context and makes lost report why. It also gives the claim up
// by its own clock when no renewal has got through for nearly a TTL: a
// runner cut off from the store never hears that its claim expired, and
// another runner may then take the run and call the effect in flight
// again.
type claimHold struct {
	r      *Runtime
	runID  string
	base   context.Context // the caller's values, without its cancellation
	cancel context.CancelCauseFunc
	// forced is set when the claim was taken from another runner's live
	// claim (claimForcing); keep, by keepOnRelease, makes release leave
	// it in the store until it expires.
	forced bool
	keep   bool
	// fencedAt is the version a takeover (claimTaking) saw the run idle
	// at, and committed it unchanged at (its fence), so the run is at
	// fencedAt+1 from there; 0 without a takeover.
	fencedAt int64

	mu       sync.Mutex // serialises renewals with release
	timer    *time.Timer
	expiry   *time.Timer // fires when the claim may have expired unrenewed
	released atomic.Bool
	// deadline is when expiry is due, in claimClock nanoseconds: lost
	// reads it too, since a process frozen past it (SIGSTOP, a long GC
	// pause, a suspended VM) runs on for a moment before the overdue
	// timer fires, and must not commit or start an effect meanwhile.
	deadline atomic.Int64

	lostMu  sync.Mutex // not mu: a renewal hung on a store out of reach holds that one
	lostErr error
}

// claimEpoch is the origin of claimClock.
var claimEpoch = time.Now()

// claimClock is the monotonic time in nanoseconds since claimEpoch: it
// does not jump with the wall clock, and reading it does not allocate.
func claimClock() int64 { return int64(time.Since(claimEpoch)) }

// extend records the local expiry of a claim whose last taking or
// renewal was sent at sent, and returns how long from now it is: the
// store set its expiry at least a TTL after that moment, and the work
// stops a tenth of the TTL before, so that the effect in flight has
// stopped when another runner may take the run.
func (h *claimHold) extend(sent time.Time) time.Duration {
	ttl := h.r.claims.ttl
	until := time.Until(sent.Add(ttl - ttl/10))
	h.deadline.Store(claimClock() + int64(until))
	return until
}

func (h *claimHold) renew() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released.Load() || h.lost() != nil {
		return
	}
	c := h.r.claims
	ctx, cancel := context.WithTimeout(h.base, c.ttl/3)
	defer cancel()
	// A renewal fails if this runner no longer holds the claim: another
	// runner has it, or had it and released it (a cancel that forced it).
	sent := time.Now()
	err := c.store.RunClaim(ctx, &store.RunClaimParams{RunID: h.runID, Owner: c.owner, TTL: c.ttl, Now: h.r.claimTime(), Renew: true})
	switch {
	case errors.Is(err, store.ErrConflict):
		h.giveUp(fmt.Errorf("run %s: claim lost while working on it: %w", h.runID, ErrRunClaimed),
			"run claim lost to another runner; abandoning the tick")
		return
	case err != nil:
		h.r.logger.WarnContext(h.base, "renewing run claim", "run_id", h.runID, "error", err)
	case h.recordedLoss() == nil:
		// A recorded loss only, not lost(): a renewal that got through
		// late is judged by the deadline it sets, not the one it replaces.
		h.expiry.Reset(h.extend(sent))
	}
	h.timer.Reset(c.renew)
}

// renewNow renews the claim at once, out of its schedule, so that a loss
// to another runner is known now (lost); a nil hold does nothing.
func (h *claimHold) renewNow() {
	if h != nil {
		h.renew()
	}
}

// expire gives the claim up when no renewal got through in time.
func (h *claimHold) expire() {
	if h.released.Load() {
		return
	}
	h.giveUp(fmt.Errorf("run %s: claim not renewed for its TTL (%s; the store out of reach?): %w", h.runID, h.r.claims.ttl, ErrRunClaimed),
		"run claim not renewed in time; abandoning the tick")
}

// giveUp records why the claim is lost (the first reason stays) and
// cancels the work.
func (h *claimHold) giveUp(err error, msg string) {
	h.lostMu.Lock()
	first := h.lostErr == nil
	if first {
		h.lostErr = err
	}
	h.lostMu.Unlock()
	if first {
		h.r.logger.WarnContext(h.base, msg, "run_id", h.runID)
		h.cancel(err)
	}
}

// lost returns the error of a lost claim, or nil while it is held. A nil
// hold (no claims) is never lost. A claim past its local expiry is lost
// even before the expiry timer has fired (see deadline): a commit or an
// effect asks here first.
func (h *claimHold) lost() error {
	if h == nil {
		return nil
	}
	if err := h.recordedLoss(); err != nil || claimClock() < h.deadline.Load() {
		return err
	}
	h.expire()
	return h.recordedLoss()
}

// recordedLoss is the recorded loss, without the deadline check.
func (h *claimHold) recordedLoss() error {
	h.lostMu.Lock()
	defer h.lostMu.Unlock()
	return h.lostErr
}

// or returns the lost claim's error in place of err when the claim was
// lost (err is then typically the context cancellation the loss caused),
// else err.
func (h *claimHold) or(err error) error {
	if lost := h.lost(); lost != nil {
		return lost
	}
	return err
}

// keepOnRelease makes release leave a forced claim in the store, not
// renewed, until it expires, when the cancel it was taken for failed: the
// runner it was taken from may still run its effect until it learns it
// lost the run (at its next renewal, or once its own claim would have
// expired), and releasing would let a third runner claim the run and run
// that effect again beside it. A claim that was not forced is released.
func (h *claimHold) keepOnRelease() {
	if h != nil && h.forced {
		h.keep = true
	}
}

// release stops the renewals and drops the claim (keepOnRelease: leaves
// it to expire).
func (h *claimHold) release() {
	if h == nil {
		return
	}
	h.released.Store(true)
	if h.expiry != nil {
		h.expiry.Stop()
	}
	h.mu.Lock()
	h.timer.Stop()
	h.mu.Unlock()
	lost := h.lost() != nil
	h.cancel(nil)
	if lost {
		return
	}
	c := h.r.claims
	if h.keep {
		// Its store expiry: a TTL after its last taking or renewal was
		// sent, a tenth of the TTL after the local deadline.
		c.keep(h.runID, h.deadline.Load()+int64(c.ttl/10))
		h.r.logger.InfoContext(h.base, "keeping the claim taken for a cancel that failed until it expires", "run_id", h.runID)
		return
	}
	if err := c.store.RunRelease(h.base, h.runID, c.owner); err != nil {
		h.r.logger.WarnContext(h.base, "releasing run claim", "run_id", h.runID, "error", err)
	}
}

// ClaimOwner returns the owner this runtime claims runs as, or "" when it
// does not claim runs.
func (r *Runtime) ClaimOwner() string {
	if r.claims == nil {
		return ""
	}
	return r.claims.owner
}

// claimTime is the Now of a claim: zero (the store's clock, the database
// server's for PostgreSQL, so runners on several machines agree on expiry)
// unless the runtime was given a Clock, whose time is then used as is.
func (r *Runtime) claimTime() time.Time {
	if !r.customClock {
		return time.Time{}
	}
	return r.clock()
}
