package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
	// TTL is how long a claim lasts: a runner that dies holding one
	// blocks the run that long. It must exceed the longest effect a run
	// executes, since claims are not renewed during a tick. Default 5m.
	TTL time.Duration
}

// ErrRunClaimed reports that another runner holds the run's claim: the
// tick or resume did nothing, and that runner continues the run.
var ErrRunClaimed = errors.New("run is claimed by another runner")

// claimer is the resolved Claims of a runtime.
type claimer struct {
	store store.RunClaimer
	owner string
	ttl   time.Duration
}

func newClaimer(st store.Store, c *Claims) (*claimer, error) {
	if c == nil {
		return nil, nil
	}
	rc, ok := st.(store.RunClaimer)
	if !ok {
		return nil, errors.New("runtime: Config.Claims needs a store that implements store.RunClaimer")
	}
	return &claimer{store: rc, owner: cmp.Or(c.Owner, "runner-"+NewUUID()), ttl: cmp.Or(c.TTL, 5*time.Minute)}, nil
}

// claim claims runID for this runtime when it claims runs, and returns
// the release; ErrRunClaimed when another runner holds it.
func (r *Runtime) claim(ctx context.Context, runID string) (func(), error) {
	c := r.claims
	if c == nil {
		return func() {}, nil
	}
	err := c.store.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: c.owner, TTL: c.ttl, Now: r.clock()})
	if errors.Is(err, store.ErrConflict) {
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunClaimed)
	}
	if err != nil {
		return nil, fmt.Errorf("claiming run %s: %w", runID, err)
	}
	return func() {
		if err := c.store.RunRelease(context.WithoutCancel(ctx), runID, c.owner); err != nil {
			r.logger.WarnContext(ctx, "releasing run claim", "run_id", runID, "error", err)
		}
	}, nil
}

// ClaimOwner returns the owner this runtime claims runs as, or "" when it
// does not claim runs.
func (r *Runtime) ClaimOwner() string {
	if r.claims == nil {
		return ""
	}
	return r.claims.owner
}
