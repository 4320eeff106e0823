package runtime

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// Follow-ups that failed (a child's tick or a parent's resume whose store
// write failed, or whose commit's answer was lost after the store had
// made it; a claim another runner held), that a failed or cancelled call
// left undone, or that used up the rounds one call gives a run are kept
// here and driven again later by RetryFollowUps, which the scheduler's
// loop calls at each poll. Nothing else would: the caller's own call
// succeeded or is gone, and without claims the scheduler recovers runs
// only when it starts.

const (
	// maxFollowRetries bounds the follow-ups kept for a retry; past it
	// the oldest are dropped (logged), left to the next start's recovery.
	maxFollowRetries = 10_000
	followRetryFirst = time.Second // by the runtime's clock (Config.Clock)
	followRetryMax   = 5 * time.Minute
)

// followRetries is the set of follow-ups to drive again, by run and kind.
type followRetries struct {
	mu      sync.Mutex
	entries map[followKey]*followRetry
	lastGen uint64 // generations are unique across entries (followRetry.gen)
}

type followKey struct {
	kind  followKind
	runID string
}

type followRetry struct {
	due      time.Time
	backoff  time.Duration
	enqueued time.Time
	// gen changes each time it is kept, and is never reused, even by an
	// entry made again for the same run after this one settled: a retry
	// settles the entry only if nothing kept it again meanwhile.
	gen uint64
}

// retryLater keeps f to be driven again; a follow-up already kept keeps
// its back-off, doubled when it failed again, and a new generation.
func (r *Runtime) retryLater(ctx context.Context, f followUp, failedAgain bool) {
	fr := &r.followRetries
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.entries == nil {
		fr.entries = map[followKey]*followRetry{}
	}
	now := r.clock()
	key := followKey{f.kind, f.runID}
	if e, ok := fr.entries[key]; ok {
		if failedAgain {
			e.backoff = min(2*e.backoff, followRetryMax)
		}
		e.due = now.Add(e.backoff)
		fr.lastGen++
		e.gen = fr.lastGen
		return
	}
	if len(fr.entries) >= maxFollowRetries {
		var oldest followKey
		var at time.Time
		for k, e := range fr.entries {
			if at.IsZero() || e.enqueued.Before(at) {
				oldest, at = k, e.enqueued
			}
		}
		delete(fr.entries, oldest)
		r.logger.LogAttrs(ctx, slog.LevelWarn, "follow-up retries full: dropping the oldest",
			slog.String("run_id", oldest.runID))
	}
	fr.lastGen++
	fr.entries[key] = &followRetry{due: now.Add(followRetryFirst), backoff: followRetryFirst, enqueued: now, gen: fr.lastGen}
}

// takeDueRetries returns the follow-ups due now; they stay kept until
// their outcome settles them (settleFollowUp).
func (r *Runtime) takeDueRetries() []followUp {
	fr := &r.followRetries
	fr.mu.Lock()
	defer fr.mu.Unlock()
	now := r.clock()
	var due []followUp
	for k, e := range fr.entries {
		if !e.due.After(now) {
			due = append(due, followUp{kind: k.kind, runID: k.runID, retry: true, gen: e.gen})
		}
	}
	return due
}

// settleFollowUp records the outcome of a follow-up: a failure keeps it
// for a retry (backed off when it was already kept), a refused claim too
// (the holder may be a runner that will not drive the run: one whose
// resume went stale, a limits update); done, or the run deleted, forgets
// it. A retry of a run another runner did drive finds nothing to do.
// A success settles only a retry.
func (r *Runtime) settleFollowUp(ctx context.Context, f followUp, err error) {
	fr := &r.followRetries
	key := followKey{f.kind, f.runID}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.retryLater(ctx, f, true) // backed off further if already kept
		return
	}
	if !f.retry {
		// Only a retry settles a kept follow-up: the same follow-up queued
		// twice (a child's end queues its parent's resume from two places)
		// may find nothing to do right after the first failed, which says
		// nothing of what the failure left undone.
		return
	}
	fr.mu.Lock()
	if e, ok := fr.entries[key]; ok && e.gen == f.gen {
		delete(fr.entries, key)
	}
	fr.mu.Unlock()
}

// PendingFollowUps reports how many follow-ups wait for RetryFollowUps.
func (r *Runtime) PendingFollowUps() int {
	fr := &r.followRetries
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return len(fr.entries)
}

// RetryFollowUps drives again the follow-ups whose retry is due: a child
// run whose tick failed, a parent whose resume by its ended child failed,
// work a cancelled caller left undone. It returns how many it drove. The
// scheduler calls it at each poll; a host without one calls it itself.
// A follow-up whose run this process is working on (a tick, a resume, a
// host update holds or awaits its lock) is passed over and retried after
// its back-off, never waited for; but the cancel of a tree's descendants
// asks such a run to stop and waits for it (its tick returns at its next
// step boundary, or as soon as its effect in flight is cut).
func (r *Runtime) RetryFollowUps(ctx context.Context) int {
	due := r.takeDueRetries()
	if len(due) == 0 {
		return 0
	}
	d := r.newDriver(nil)
	d.passBusy = true // never hold the scheduler's loop up for this process's work
	d.queue = due
	d.drain(ctx)
	return len(due)
}
