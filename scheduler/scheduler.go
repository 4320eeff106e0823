// Package scheduler drives runs in the background: it releases waits whose
// deadline has passed (WAIT_UNTIL, WAIT_EVENT timeouts) by ticking their
// runs, and at start (and, when its runtime claims runs, every
// RecoverInterval, so runs a dead runner left are taken over) it picks up
// runs a crash left running. Due runs come
// from the store's deadline index, never from a scan of every run, and the
// loop sleeps until the next deadline (or the poll interval, whichever is
// first) instead of polling blindly.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// Config configures a Scheduler.
type Config struct {
	// Runtime ticks the runs. Required.
	Runtime *runtime.Runtime
	// PollInterval is the longest sleep between two polls, so deadlines
	// written by other processes are seen. Default (0 or less) 1s.
	PollInterval time.Duration
	// BatchSize is how many due runs one poll takes. Default (0 or
	// less) 100.
	BatchSize int
	// RecoverInterval is how often the loop runs Recover again after
	// Start, to continue runs another runner left: one that died (its
	// claims expire after runtime.Claims.TTL) or that could not resume a
	// parent this runner held. Default 15s when the runtime claims runs
	// (runtime.Config.Claims: several runners share the store); 0
	// otherwise, as a single process recovers once, at Start.
	RecoverInterval time.Duration
	// Logger receives operational logs; discarded when nil.
	Logger *slog.Logger
	// OnRunResumed (Python's on_run_resumed), when set, is called with the
	// state after each tick the scheduler makes: a released wait or a
	// recovered run, whatever status the tick ended in.
	OnRunResumed func(*durable.RunState)
	// OnRunFailed, when set, is called when ticking a run fails.
	OnRunFailed func(runID string, err error)
	// Clock returns the current time; the runtime's clock when nil
	// (runtime.Runtime.Now), by which its ticks judge deadlines.
	Clock func() time.Time
	// MaxErrorsKept is how many of the latest errors Stats keeps.
	// Default (0 or less) 100.
	MaxErrorsKept int
	// Concurrency is how many runs a poll (or Recover) ticks at once, so
	// that one run's long tick (a slow effect, a retry's back-off) does
	// not hold the other due runs up. Default (0 or 1): one at a time,
	// in the order listed, on the loop's goroutine. Above 1, OnRunResumed
	// and OnRunFailed may be called from several goroutines at once.
	Concurrency int
}

// maxTicksPerDrive bounds the ticks one drive gives a run that keeps
// using its whole step budget (a loop that never waits); the run stays
// running, checkpointed, and the loop drives it again after its next
// poll, so due runs are not held up behind it.
const maxTicksPerDrive = 100

// Stats counts what the scheduler did.
type Stats struct {
	RunsResumed int64
	RunsFailed  int64
	PollCycles  int64
	LastPollAt  time.Time
	Errors      []string // the latest Config.MaxErrorsKept
}

// Scheduler is the background driver. Start it once; Stop is safe to
// call twice.
type Scheduler struct {
	cfg  Config
	rt   *runtime.Runtime
	st   store.Store
	wake chan struct{}
	// wakeStore, when the runtime's store chain holds one, signals the
	// loop about deadlines committed in this process.
	wakeStore *WakeStore

	mu      sync.Mutex
	stats   Stats
	cancel  context.CancelFunc
	done    chan struct{}
	running bool
	// retry holds the due runs a poll could not release (their tick
	// failed, or another runner held them), by run id: polls pass over
	// them until then, so they neither take every batch nor keep the
	// loop polling without pause while they stay due.
	retry map[string]retryAt
	// unfinished holds runs a drive left running, with when to drive them
	// again: at once for one that reached its tick bound, after the
	// failure back-off for one whose tick failed past its wait. They are
	// no longer due and, without claims (no periodic Recover), nothing
	// else would tick them.
	unfinished map[string]time.Time
	// inCallback counts, by the done channel of the loop they belong to,
	// the callbacks (OnRunResumed, OnRunFailed) a loop or its Start's
	// recovery is running, for Stop (see there).
	inCallback map[chan struct{}]int
	// warned holds the workflows this runtime does not serve whose due
	// runs were reported once (passOverUnserved); one entry per workflow.
	warned map[string]bool
	// served holds the workflows the registry had when last looked at
	// (driveNewlyServed): a workflow it gains after has its running runs
	// driven, as Recover would have.
	served map[string]uint64
	// lastNow is the clock's latest reading (rebasedNow): the scheduler's
	// own times are rebased when a reading comes before it.
	lastNow time.Time
}

// retryAt is when a due run that could not be released is tried again,
// and how many times in a row ticking it failed.
type retryAt struct {
	at       time.Time
	failures int
	// unserved is the workflow a run held by passOverUnserved lacked:
	// the hold ends as soon as the registry has it (see holds).
	unserved string
	// listed is the deadline of the wait the run was held in (zero when
	// not known), and version the run's version after its last failed
	// tick (0 when not known): a run since listed with another deadline,
	// or changed by someone else (a host answered its wait), is in another
	// wait, which the earlier wait's back-off does not hold (see held).
	listed  durable.Time
	version int64
}

// maxRetryDelay caps the back-off of a due run whose tick keeps failing
// (say, the store refuses its writes), and the pass-over of a due run of a
// workflow this runtime does not serve (passOverUnserved).
const maxRetryDelay = 5 * time.Minute

// New returns a Scheduler.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("scheduler: Config.Runtime is required")
	}
	// Zero or less is the default: a negative interval fired the loop's
	// timer at once, polling without pause.
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.MaxErrorsKept <= 0 {
		cfg.MaxErrorsKept = 100
	}
	if cfg.RecoverInterval == 0 && cfg.Runtime.ClaimOwner() != "" {
		cfg.RecoverInterval = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = cfg.Runtime.Now
	}
	s := &Scheduler{cfg: cfg, rt: cfg.Runtime, st: cfg.Runtime.Store(), wake: make(chan struct{}, 1),
		retry: map[string]retryAt{}, unfinished: map[string]time.Time{}, inCallback: map[chan struct{}]int{},
		warned: map[string]bool{}, served: map[string]uint64{}}
	s.markServed()
	s.wakeStore = findWakeStore(s.st)
	return s, nil
}

// findWakeStore returns the WakeStore in st's chain of decorators, or nil.
func findWakeStore(st store.Store) *WakeStore {
	for st != nil {
		if ws, ok := st.(*WakeStore); ok {
			return ws
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return nil
		}
		st = u.Unwrap()
	}
	return nil
}

// loopKey marks the loop's context (its value is the loop's done
// channel), so that drive knows it runs the callbacks for that loop.
type loopKey struct{}

// Start recovers runs left running by a crash, then launches the loop.
// A recovery that fails or is cut short (ctx ends) is recorded in Stats
// and tried again by the loop, each PollInterval, until one succeeds.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errors.New("scheduler: already started")
	}
	done := make(chan struct{})
	loopCtx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), loopKey{}, done))
	s.cancel = cancel
	s.done = done
	s.running = true
	s.mu.Unlock()
	// Callbacks of this Recover run on the caller's goroutine before the
	// loop exists: a Stop in one must not wait for the loop (loopKey). A
	// Stop from elsewhere meanwhile interrupts the recovery, as it would
	// the loop's tick in flight.
	rctx, rcancel := context.WithCancel(context.WithValue(ctx, loopKey{}, done))
	stopRecovery := context.AfterFunc(loopCtx, rcancel)
	// A recovery that failed (a store briefly unavailable) or was cut
	// short (ctx ended) is the loop's to finish: without claims no other
	// Recover would run while the process lives.
	recoverPending := false
	if err := s.Recover(rctx); err != nil && loopCtx.Err() == nil {
		s.cfg.Logger.WarnContext(ctx, "recovering runs", slog.String("error", err.Error()))
		s.recordError("recover: " + err.Error())
		recoverPending = true
	}
	stopRecovery()
	rcancel()
	// The loop closes its own channel: a Stop and Start made meanwhile (from
	// a callback of this Recover) install another one for their loop.
	go s.loop(loopCtx, done, recoverPending)
	return nil
}

// Stop ends the loop and waits for it; every Stop waits, concurrent ones
// too. Called from OnRunResumed or OnRunFailed while the loop runs them,
// it asks the loop to end and returns at once: the loop ends as that
// callback returns (waiting would wait for itself). A Stop made from
// another goroutine during such a callback cannot be told apart from one
// made by the callback, so it returns at once as well: a caller that must
// know the loop has ended waits on Done after Stop.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	s.running = false
	cancel, done := s.cancel, s.done
	inCallback := s.inCallback[done] > 0
	s.mu.Unlock()
	if cancel == nil {
		return // never started
	}
	cancel()
	if !inCallback {
		<-done
	}
}

// Done returns a channel closed when the loop of the latest Start has
// ended (already closed if the scheduler never started). After Stop it
// is the way to wait for a loop whose callback was running: see Stop.
func (s *Scheduler) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return closedChan
	}
	return s.done
}

// closedChan is Done's answer before any Start.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Running reports whether the loop is running: started and not stopped
// since (Python's is_running).
func (s *Scheduler) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Wake makes the loop poll now (e.g. after a new deadline was written by
// this process).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Stats returns a copy of the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Errors = append([]string(nil), s.stats.Errors...)
	return st
}

func (s *Scheduler) loop(ctx context.Context, done chan struct{}, recoverPending bool) {
	defer close(done)
	var deadlines <-chan struct{} // nil, never ready, without a WakeStore
	if s.wakeStore != nil {
		// Listening from the loop's start is enough: its first pass polls.
		var stop func()
		deadlines, stop = s.wakeStore.listen()
		defer stop()
	}
	lastRecover := s.rebasedNow()
	for {
		// A clock set back since the last recovery does not put off the
		// next: it runs now.
		now := s.rebasedNow()
		if iv := s.cfg.RecoverInterval; recoverPending || iv > 0 && (now.Sub(lastRecover) >= iv || now.Before(lastRecover)) {
			lastRecover = now
			err := s.Recover(ctx)
			recoverPending = err != nil
			if err != nil && ctx.Err() == nil {
				s.cfg.Logger.WarnContext(ctx, "recovering runs", slog.String("error", err.Error()))
				s.recordError("recover: " + err.Error())
			}
		}
		n, err := s.passOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.WarnContext(ctx, "polling due runs", slog.String("error", err.Error()))
			s.recordError("poll: " + err.Error())
		}
		if n == s.cfg.BatchSize {
			continue // more may be due right now
		}
		wait := s.nextWait(ctx, lastRecover)
		if err != nil {
			// Listing failed while something may be due: wait the poll
			// interval rather than poll again at once, in a hot loop.
			wait = s.cfg.PollInterval
		}
		if recoverPending {
			wait = min(wait, s.cfg.PollInterval) // try the recovery again
		}
		if at, ok := s.nextUnfinished(); ok {
			wait = min(wait, max(at.Sub(s.rebasedNow()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-deadlines:
		case <-t.C:
		}
		t.Stop()
	}
}

// passOnce is one pass of the loop: the running runs of workflows the
// registry gained since, the runs earlier drives left running, the
// runtime's follow-ups due for a retry, then one poll of due runs, whose
// count and error it returns.
func (s *Scheduler) passOnce(ctx context.Context) (int, error) {
	s.driveNewlyServed(ctx)
	s.driveUnfinished(ctx)
	// Follow-ups the runtime could not finish (a child's tick or a
	// parent's resume whose write failed): nothing else drives them in a
	// live process without claims.
	s.rt.RetryFollowUps(ctx)
	return s.PollOnce(ctx)
}

// Pass does at once what the loop does at the clock's current time,
// until nothing due is left for it: drives the running runs of workflows
// the registry gained since, the runs earlier drives left running, retries the runtime's due follow-ups and polls due runs, again
// while a poll fills a batch, leaves a run due that is not held back for a
// retry (a run released into a wait whose deadline has passed) or a drive
// leaves a run running. It
// returns how many due runs it polled. For hosts and tests that drive the
// scheduler themselves (runtimetest's Advance); it does not run Recover.
// A workflow that keeps falling due at once (a loop on a zero timeout) is
// given at most passRounds polls.
func (s *Scheduler) Pass(ctx context.Context) (int, error) {
	total := 0
	for round := 1; ; round++ {
		n, err := s.passOnce(ctx)
		total += n
		if err == nil {
			err = ctx.Err() // cut short: what is left is the next pass's
		}
		if err != nil || round >= passRounds {
			return total, err
		}
		if at, ok := s.nextUnfinished(); ok && !at.After(s.rebasedNow()) {
			continue // a drive left a run running: the loop drives it on at once
		}
		// No Recover is due in a pass: as if one had just run.
		if n < s.cfg.BatchSize && (n == 0 || s.nextWait(ctx, s.rebasedNow()) > 0) {
			return total, nil
		}
	}
}

// passRounds bounds the polls of one Pass.
const passRounds = 1000

// nextWait is how long the loop sleeps after a poll that did not fill a
// batch: until the next deadline, the next Recover or PollInterval,
// whichever comes first. Due runs left behind (they are waiting to be
// tried again) count from the time they are, and do not hide the next
// deadline of a run that is not held.
func (s *Scheduler) nextWait(ctx context.Context, lastRecover time.Time) time.Duration {
	now := s.rebasedNow()
	wait := s.cfg.PollInterval
	if iv := s.cfg.RecoverInterval; iv > 0 {
		wait = min(wait, max(iv-now.Sub(lastRecover), 0))
	}
	next, err := s.st.RunNextDue(ctx)
	if err != nil || next.IsZero() {
		return wait
	}
	if next.After(now) {
		return min(wait, next.Sub(now))
	}
	// Something is due now: a run that fell due since the poll listed
	// (poll at once), unless all that is due waits for a retry.
	s.mu.Lock()
	if len(s.retry) == 0 {
		s.mu.Unlock()
		return 0
	}
	held := make(map[string]retryAt, len(s.retry))
	for id, r := range s.retry {
		if !s.holds(r, now) {
			wait = 0
			continue
		}
		held[id] = r
		wait = min(wait, r.at.Sub(now))
	}
	s.mu.Unlock()
	if wait == 0 {
		return 0
	}
	// The earliest deadline is a held run's: the next one of a run not
	// held may still come before the first retry.
	due, err := s.st.RunListDue(ctx, &store.RunListDueParams{Now: now.Add(wait),
		Limit: min(len(held), maxPassedOver) + 1})
	if err != nil {
		return wait
	}
	for _, d := range due {
		if r, ok := held[d.RunID]; ok && r.holdsWait(d.Until) {
			continue
		}
		return min(wait, max(d.Until.Sub(now), 0))
	}
	return wait
}

// PollOnce ticks the runs whose deadline has passed (at most BatchSize),
// passing over those waiting to be tried again, those this runtime is
// driving right now (tried again after PollInterval) and those of
// workflows its registry lacks (left for a runner that serves them:
// runners sharing a store may each serve some workflows), and returns
// how many it ticked.
func (s *Scheduler) PollOnce(ctx context.Context) (int, error) {
	now := s.rebasedNow()
	s.mu.Lock()
	s.stats.PollCycles++
	s.stats.LastPollAt = now
	s.mu.Unlock()
	ticked := 0
	for {
		due, complete, err := s.listDue(ctx, now)
		if err != nil {
			return ticked, err
		}
		n, unserved, err := s.driveDue(ctx, due, now, s.cfg.BatchSize-ticked)
		ticked += n
		if err != nil || unserved == 0 || complete || ticked == s.cfg.BatchSize {
			return ticked, err
		}
		// Runs found unserved took places in a full listing: list again,
		// reading past them now (they are held), so that the runs due
		// behind them are reached in this poll.
	}
}

// listDue lists the due runs a poll looks at: BatchSize of them beyond
// those held for a retry. complete tells the listing holds every due run.
func (s *Scheduler) listDue(ctx context.Context, now time.Time) (due []store.DueRun, complete bool, err error) {
	s.mu.Lock()
	held := 0 // runs to pass over now
	for _, r := range s.retry {
		if s.holds(r, now) {
			held++
		}
	}
	s.mu.Unlock()
	limit := s.cfg.BatchSize + min(held, maxPassedOver)
	due, err = s.st.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: limit})
	if err == nil && len(due) == limit && held > maxPassedOver && s.countUnheld(due, now) < s.cfg.BatchSize {
		// The held runs took the listing: read past all of them, so that
		// a run due after them is not starved.
		limit = s.cfg.BatchSize + held
		due, err = s.st.RunListDue(ctx, &store.RunListDueParams{Now: now, Limit: limit})
	}
	if err != nil {
		return nil, false, fmt.Errorf("listing due runs: %w", err)
	}
	if len(due) < limit {
		s.forgetUnlisted(due) // the listing is complete: the others are no longer due
		return due, true, nil
	}
	return due, false, nil
}

// driveDue ticks up to budget of the listed due runs; it returns how many
// it ticked and how many it found of workflows this runtime does not
// serve (now held, see passOverUnserved).
func (s *Scheduler) driveDue(ctx context.Context, due []store.DueRun, now time.Time, budget int) (ticked, unserved int, err error) {
	pool := s.newDrivePool()
	defer func() {
		// The pool's drives count once they have ended; a run found
		// unserved is held only then, as the sequential path holds it.
		n, found := pool.wait()
		ticked += n
		for _, u := range found {
			s.passOverUnserved(ctx, u.due, u.workflow)
			unserved++
		}
	}()
	for _, d := range due {
		if ticked+pool.launched() == budget {
			break
		}
		if ctx.Err() != nil {
			return ticked, unserved, ctx.Err()
		}
		if s.held(ctx, d, now) {
			continue
		}
		if s.rt.Busy(d.RunID) {
			// The host is driving it in this process right now (its own
			// Tick, a Respond, an event delivery): waiting for its lock
			// would hold every other due run up for as long, and that
			// drive likely releases it. Tried again after a poll interval
			// should it still be due.
			s.retryLater(d.RunID, d.Until, false, 0)
			continue
		}
		if s.rt.ClaimOwner() != "" {
			// A tick claims a run before it reads it: one of a workflow
			// this runtime lacks would be held (or, due, taken over) from
			// the runner that serves it. Its workflow is read first.
			if wf, ok := s.unservedWorkflow(ctx, d.RunID); ok {
				s.passOverUnserved(ctx, d, wf)
				unserved++
				continue
			}
		}
		if pool != nil {
			if !pool.driveDue(ctx, s, d) {
				return ticked, unserved, ctx.Err()
			}
			continue
		}
		if wf, ok := s.driveServed(ctx, d.RunID, d.Until); !ok {
			// Without claims the tick reads the run and leaves it as it
			// was when its workflow is missing: no read beforehand.
			s.passOverUnserved(ctx, d, wf)
			unserved++
			continue
		}
		ticked++
	}
	return ticked, unserved, nil
}

// unservedWorkflow returns the workflow of a live run when this runtime's
// registry lacks it. Its tick would fail for want of the workflow and,
// with claims, take the run from the runner that serves it meanwhile. A
// run it cannot read is ticked, which reports why.
func (s *Scheduler) unservedWorkflow(ctx context.Context, runID string) (string, bool) {
	run, err := s.st.RunGet(ctx, runID)
	if err != nil || run.Status.Terminal() {
		return "", false
	}
	if _, ok := s.rt.Registry().Get(run.WorkflowID); ok {
		return "", false
	}
	return run.WorkflowID, true
}

// passOverUnserved holds a due run of a workflow this runtime does not
// serve for maxRetryDelay, without failing it: it is left for a runner
// that serves the workflow, and checked again then, or as soon as this
// runtime's registry has the workflow (Scheduled.Run registers a workflow
// when it first runs it, after Start's recovery may have held its runs). The first such run of each workflow is reported
// with a warning and in Stats.Errors: a runner alone on its store learns
// that runs of a workflow it lacks are due, and nothing drives them.
func (s *Scheduler) passOverUnserved(ctx context.Context, d store.DueRun, workflowID string) {
	runID := d.RunID
	s.mu.Lock()
	s.retry[runID] = retryAt{at: s.nowLocked().Add(maxRetryDelay), unserved: workflowID, listed: d.Until}
	first := !s.warned[workflowID]
	s.warned[workflowID] = true
	s.mu.Unlock()
	if !first {
		s.cfg.Logger.DebugContext(ctx, "due run of a workflow this runtime does not serve: left for a runtime that serves it",
			slog.String("run_id", runID), slog.String("workflow_id", workflowID))
		return
	}
	s.cfg.Logger.WarnContext(ctx, "due runs of a workflow this runtime does not serve are left for a runtime that serves it; "+
		"register the workflow here if no other runner serves it", slog.String("workflow_id", workflowID), slog.String("run_id", runID))
	s.recordError(fmt.Sprintf("workflow %q is not registered: its due runs (run %s first) are left for a runtime that serves it",
		workflowID, runID))
}

// maxPassedOver bounds how many held runs a first listing reads past;
// when more are held and they fill it, PollOnce lists again past all of
// them.
const maxPassedOver = 1000

// countUnheld counts the listed runs not waiting to be tried again.
func (s *Scheduler) countUnheld(due []store.DueRun, now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range due {
		if r, ok := s.retry[d.RunID]; !ok || !s.holds(r, now) || !r.holdsWait(d.Until) {
			n++
		}
	}
	return n
}

// held reports whether the listed due run waits to be tried again later
// than now. The back-off of failed ticks holds only the wait they failed
// to release: a hold is dropped when the run is listed with another
// deadline or, read again, has changed since its last failed tick (moved
// on into a new wait, perhaps with the same deadline). That read is made
// only for runs held by failures, so rarely.
func (s *Scheduler) held(ctx context.Context, d store.DueRun, now time.Time) bool {
	s.mu.Lock()
	r, ok := s.retry[d.RunID]
	hold := ok && s.holds(r, now)
	if hold && !r.holdsWait(d.Until) {
		delete(s.retry, d.RunID)
		hold = false
	}
	s.mu.Unlock()
	if !hold || r.failures == 0 || r.version == 0 {
		return hold
	}
	cur, err := s.st.RunGet(ctx, d.RunID)
	if err != nil || cur.Version == r.version {
		return true // a store failing still, likely: keep backing off
	}
	s.mu.Lock()
	if e, ok := s.retry[d.RunID]; ok && e.version == r.version {
		delete(s.retry, d.RunID)
	}
	s.mu.Unlock()
	return false
}

// holdsWait reports whether r is about the wait with deadline until: one
// listed with another deadline is a new wait.
func (r retryAt) holdsWait(until durable.Time) bool {
	return r.listed.IsZero() || r.listed.Equal(until.Time)
}

// holds reports whether r holds its run at now: until r.at, and for a
// run of a workflow this runtime did not serve, only while its registry
// still lacks the workflow. Called with s.mu held.
func (s *Scheduler) holds(r retryAt, now time.Time) bool {
	if !r.at.After(now) {
		return false
	}
	if r.unserved == "" {
		return true
	}
	_, served := s.rt.Registry().Get(r.unserved)
	return !served
}

// forgetUnlisted drops the retry entries of runs a complete listing of
// the due runs no longer holds (released by someone else, or ended).
func (s *Scheduler) forgetUnlisted(due []store.DueRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.retry) == 0 {
		return
	}
	listed := make(map[string]bool, len(due))
	for _, d := range due {
		listed[d.RunID] = true
	}
	for id := range s.retry {
		// A run a failed tick left running is not due but keeps its
		// failure count, for its back-off.
		if _, unfinished := s.unfinished[id]; !listed[id] && !unfinished {
			delete(s.retry, id)
		}
	}
}

// retryLater holds a due run the poll could not release: after a failed
// tick for PollInterval, doubled with each failure in a row (in the same
// wait) up to maxRetryDelay; a run another runner held, or one its tick
// left due, for PollInterval. listed is the deadline the due listing gave
// (zero when the run was not listed) and version the run's version after
// a failed tick (0 when not known). It returns when the run is tried
// again.
func (s *Scheduler) retryLater(runID string, listed durable.Time, failed bool, version int64) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.retry[runID]
	if !listed.IsZero() {
		if !r.holdsWait(listed) {
			r = retryAt{} // the failures were of another wait
		}
		r.listed = listed
	}
	r.unserved = "" // held for this reason now
	delay := s.cfg.PollInterval
	if failed {
		r.version = version
		r.failures++
		for i := 1; i < r.failures && delay < maxRetryDelay; i++ {
			delay *= 2
		}
	}
	r.at = s.nowLocked().Add(min(delay, maxRetryDelay))
	if u, ok := s.unfinished[runID]; ok && u.After(r.at) {
		// Waiting out a failure back-off: an earlier retry time would be
		// past while nothing drives the run, and keep the loop polling.
		r.at = u
	}
	s.retry[runID] = r
	return r.at
}

// drive ticks one run; listed is the deadline a due listing gave for it
// (zero when it was not listed as due). A run another runner has claimed
// is left to it (the runtime claims runs when several runners share the
// store).
func (s *Scheduler) drive(ctx context.Context, runID string, listed durable.Time) {
	st, err := s.rt.Tick(ctx, runID, runtime.TickOptions{})
	s.driveOn(ctx, runID, listed, st, err)
}

// driveServed is drive, except that a live run whose workflow the
// runtime's registry lacks is left untouched and reported: ok is false
// and workflowID names the missing workflow.
func (s *Scheduler) driveServed(ctx context.Context, runID string, listed durable.Time) (workflowID string, ok bool) {
	st, err := s.rt.Tick(ctx, runID, runtime.TickOptions{})
	if notServed, is := errors.AsType[*runtime.RunNotServedError](err); is && notServed.RunID == runID {
		return notServed.WorkflowID, false
	}
	s.driveOn(ctx, runID, listed, st, err)
	return "", true
}

// driveOn is drive after the run's first tick, which gave st and err.
func (s *Scheduler) driveOn(ctx context.Context, runID string, listed durable.Time, st *durable.RunState, err error) {
	// A run that uses its whole step budget is ticked again (a bounded
	// number of times): nothing else would wake it, as it no longer waits.
	for i := 1; err == nil && st.Status == durable.RunRunning && !runtime.IsPaused(st) && i < maxTicksPerDrive && ctx.Err() == nil; i++ {
		st, err = s.rt.Tick(ctx, runID, runtime.TickOptions{})
	}
	if err == nil && runtime.IsPaused(st) {
		// A host paused it (spec §2.7: the scheduler skips the run): its
		// tick did nothing, and ResumeRun is what moves it on, not a poll.
		// Driven again at once it would spin the loop.
		s.mu.Lock()
		delete(s.retry, runID)
		s.mu.Unlock()
		return
	}
	if err == nil && !listed.IsZero() && sameDeadline(st, listed) {
		// Either the tick did not release the wait the listing said was
		// due (the runtime's clock is behind ours, or another process's)
		// or it released it into a new wait with the same deadline, due
		// at once. A second tick tells them apart: it moves a run of the
		// second kind on. One of the first kind is passed over for a poll
		// interval instead of being listed again at once. The second
		// tick's errors are handled as the first's below: it may fail past
		// a checkpoint, leaving the run running.
		again, aerr := s.rt.Tick(ctx, runID, runtime.TickOptions{})
		if aerr == nil && again.Version == st.Version {
			s.retryLater(runID, listed, false, 0)
			return
		}
		st, err = again, aerr
	}
	if errors.Is(err, runtime.ErrRunClaimed) {
		s.retryLater(runID, listed, false, 0)
		return
	}
	if err != nil && ctx.Err() != nil {
		// Stopped midway: not the run's failure; it continues from its
		// last checkpoint when polled or recovered again. One left running
		// is no longer due: after the loop's stop the next Start's Recover
		// drives it, but a host's own PollOnce, Pass or Recover cut short
		// by its context is followed by no Recover (without claims, none
		// while the process lives), so the run is driven on by the next
		// pass, as one a drive left running is.
		s.cfg.Logger.DebugContext(ctx, "tick interrupted by the scheduler's stop", "run_id", runID, "error", err)
		if !fromLoop(ctx) {
			cur, gerr := s.st.RunGet(context.WithoutCancel(ctx), runID)
			if (gerr != nil && !errors.Is(gerr, store.ErrNotFound)) ||
				(gerr == nil && cur.Status == durable.RunRunning && !runtime.IsPaused(cur)) {
				s.mu.Lock()
				if _, queued := s.unfinished[runID]; !queued {
					s.unfinished[runID] = s.nowLocked()
				}
				s.mu.Unlock()
			}
		}
		return
	}
	if err != nil {
		// A tick that failed after a checkpoint past the wait (a store
		// error after an effect) leaves the run running and no longer
		// due: drive it again after the back-off. When the store cannot
		// say (the same outage, likely), drive it again too: a tick of a
		// run that waits or ended by then does nothing.
		//
		// A tick whose commit lost to another writer's (an event that
		// answered the wait this poll released) is not the run's failure:
		// that commit stands, and the run is driven again the same way
		// (it may be left running by a writer that does not drive it),
		// without a failure's back-off or report.
		lost := errors.Is(err, store.ErrConflict)
		cur, gerr := s.st.RunGet(ctx, runID)
		var version int64
		if gerr == nil {
			version = cur.Version
		}
		at := s.retryLater(runID, listed, !lost, version)
		if (gerr != nil && !errors.Is(gerr, store.ErrNotFound)) || (gerr == nil && cur.Status == durable.RunRunning) {
			s.mu.Lock()
			s.unfinished[runID] = at
			s.mu.Unlock()
		}
		if lost {
			s.cfg.Logger.DebugContext(ctx, "tick lost to another writer's commit", "run_id", runID, "error", err)
			return
		}
		s.failed(ctx, runID, err)
		return
	}
	s.mu.Lock()
	delete(s.retry, runID)
	s.stats.RunsResumed++
	if st.Status == durable.RunRunning && (ctx.Err() == nil || !fromLoop(ctx)) {
		s.unfinished[runID] = s.nowLocked()
	}
	s.mu.Unlock()
	if s.cfg.OnRunResumed != nil {
		s.callback(ctx, func() { s.cfg.OnRunResumed(st) })
	}
}

// fromLoop reports whether ctx is the loop's (or its Start's recovery's):
// runs a stop of it leaves running are the next Start's Recover's.
func fromLoop(ctx context.Context) bool {
	loop, _ := ctx.Value(loopKey{}).(chan struct{})
	return loop != nil
}

// sameDeadline reports whether st waits until listed.
func sameDeadline(st *durable.RunState, listed durable.Time) bool {
	until, ok := store.Deadline(st)
	return ok && until.Equal(listed.Time)
}

// callback runs a host callback: a panic in it is recorded, not let out
// (it would end the loop's process), and the other runs go on.
func (s *Scheduler) callback(ctx context.Context, fn func()) {
	loop, _ := ctx.Value(loopKey{}).(chan struct{})
	if loop != nil {
		s.mu.Lock()
		s.inCallback[loop]++
		s.mu.Unlock()
	}
	defer func() {
		if loop != nil {
			s.mu.Lock()
			if s.inCallback[loop]--; s.inCallback[loop] <= 0 {
				delete(s.inCallback, loop)
			}
			s.mu.Unlock()
		}
		if p := recover(); p != nil {
			s.cfg.Logger.ErrorContext(ctx, "scheduler callback panicked", slog.Any("panic", p))
			s.recordError(fmt.Sprintf("callback panicked: %v", p))
		}
	}()
	fn()
}

// driveUnfinished drives again the runs drives left running whose time
// has come (see Scheduler.unfinished).
func (s *Scheduler) driveUnfinished(ctx context.Context) {
	now := s.rebasedNow()
	var runs []string
	s.mu.Lock()
	for id, at := range s.unfinished {
		if !at.After(now) {
			runs = append(runs, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(runs)
	for _, id := range runs {
		if ctx.Err() != nil {
			// The runs not driven stay queued, for the next pass.
			return
		}
		s.mu.Lock()
		at, queued := s.unfinished[id]
		if queued && !at.After(now) {
			delete(s.unfinished, id)
		}
		s.mu.Unlock()
		if !queued || at.After(now) {
			continue // driven meanwhile (a host's Pass), or put off
		}
		if s.rt.Busy(id) {
			// Driven by the host in this process right now: see PollOnce.
			// Kept, as that drive may leave it running too. Its retry entry
			// (a failure back-off) moves on with it: left at a passed time,
			// it would count as a held run now free and keep the loop
			// polling without pause (nextWait).
			at := s.rebasedNow().Add(s.cfg.PollInterval)
			s.mu.Lock()
			s.unfinished[id] = at
			if r, ok := s.retry[id]; ok && r.at.Before(at) {
				r.at = at
				s.retry[id] = r
			}
			s.mu.Unlock()
			continue
		}
		// A run whose workflow the registry lost since it was queued is
		// left for a runtime that serves it, as Recover and the due poll
		// leave such runs (not failed at each back-off);
		// driveNewlyServed queues it again once the registry has its
		// workflow. With claims its workflow is read first: a tick
		// claims the run before it reads it (see driveDue).
		if s.rt.ClaimOwner() != "" {
			if _, unserved := s.unservedWorkflow(ctx, id); unserved {
				continue
			}
		}
		s.driveServed(ctx, id, durable.Time{})
	}
}

// DriveSoon has the loop (or the next Pass) drive a run on, as it does a
// run its own drive left running: for a run a host's Tick or Resume left
// running, its step budget used. Such a run is no longer due, and
// nothing else would drive it before the next Recover. Scheduled.Run
// and Respond call it for such runs; it does not wake the loop (Wake).
func (s *Scheduler) DriveSoon(runID string) {
	s.mu.Lock()
	s.unfinished[runID] = s.nowLocked()
	s.mu.Unlock()
}

// markServed records the workflows the registry has now as served (their
// running runs are Recover's, or were driven already).
func (s *Scheduler) markServed() {
	regs := s.rt.Registry().Registrations()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served = regs
}

// driveNewlyServed queues for driving (as DriveSoon) the running runs of
// each workflow the registry gained since it was last looked at. Such
// runs were left running for a runtime that serves their workflow:
// skipped by Recover, a parent whose child ended or an event listener
// resumed without a tick. Without claims no other Recover comes, so
// nothing else would drive them once the workflow is registered here
// (by Scheduled.Run or by the host on the registry). A workflow counts as
// gained when its registration is new, so one unregistered and
// registered again between two passes (its runs may have been left
// running meanwhile) is too. Only the gained workflows' running runs are
// listed, once each: no scan per pass.
func (s *Scheduler) driveNewlyServed(ctx context.Context) {
	regs := s.rt.Registry().Registrations()
	var gained []string
	s.mu.Lock()
	for id, reg := range regs {
		if s.served[id] != reg {
			gained = append(gained, id)
		}
	}
	s.served = regs
	s.mu.Unlock()
	slices.Sort(gained)
	for _, wf := range gained {
		running, err := listAll(ctx, func(limit int) ([]store.RunIndexRow, error) {
			return s.st.RunIndex(ctx, &store.RunIndexParams{Status: durable.RunRunning, WorkflowID: wf, Limit: limit})
		})
		if err != nil {
			// Looked at again by the next pass.
			s.mu.Lock()
			delete(s.served, wf)
			s.mu.Unlock()
			if ctx.Err() == nil {
				s.cfg.Logger.WarnContext(ctx, "listing running runs of a workflow newly registered",
					slog.String("workflow_id", wf), slog.String("error", err.Error()))
				s.recordError(fmt.Sprintf("listing running runs of workflow %q: %v", wf, err))
			}
			continue
		}
		at := s.rebasedNow()
		s.mu.Lock()
		for _, r := range running {
			// A run already queued keeps its time (a failure back-off).
			if _, queued := s.unfinished[r.RunID]; !queued {
				s.unfinished[r.RunID] = at
			}
		}
		s.mu.Unlock()
	}
}

// rebasedNow reads the clock. When it has stepped back since the last
// reading (a wall clock set back; Config.Clock need not be monotonic), the
// times runs are held until (failure back-offs, pass-overs, drives to come)
// move back by as much: a hold lasts what it was set for, not what it was
// set for plus the step. Deadlines of waits are the runs' own, on the wall
// clock, and are not moved.
func (s *Scheduler) rebasedNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

// nowLocked is rebasedNow with s.mu held.
func (s *Scheduler) nowLocked() time.Time {
	now := s.cfg.Clock()
	if back := s.lastNow.Sub(now); back > 0 {
		for id, r := range s.retry {
			r.at = r.at.Add(-back)
			s.retry[id] = r
		}
		for id, at := range s.unfinished {
			s.unfinished[id] = at.Add(-back)
		}
	}
	s.lastNow = now
	return now
}

// nextUnfinished returns when the earliest unfinished run is to be
// driven again.
func (s *Scheduler) nextUnfinished() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for _, at := range s.unfinished {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

func (s *Scheduler) failed(ctx context.Context, runID string, err error) {
	s.mu.Lock()
	s.stats.RunsFailed++
	s.mu.Unlock()
	s.cfg.Logger.WarnContext(ctx, "driving a run failed", slog.String("run_id", runID), slog.String("error", err.Error()))
	s.recordError(fmt.Sprintf("Run %s: %v", runID, err))
	if s.cfg.OnRunFailed != nil {
		s.callback(ctx, func() { s.cfg.OnRunFailed(runID, err) })
	}
}

func (s *Scheduler) recordError(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Errors = append(s.stats.Errors, durable.FormatTime(s.cfg.Clock())+": "+msg)
	if n := len(s.stats.Errors); n > s.cfg.MaxErrorsKept {
		s.stats.Errors = s.stats.Errors[n-s.cfg.MaxErrorsKept:]
	}
}

// recoverPage is the first listing size of Recover.
const recoverPage = 10_000

// listAll returns every row list gives, however many: store listings have
// no cursor, so a full page is listed again with a larger limit until one
// comes back short. It costs at most about twice the rows there are.
func listAll[T any](ctx context.Context, list func(limit int) ([]T, error)) ([]T, error) {
	for limit := recoverPage; ; limit *= 4 {
		rows, err := list(limit)
		if err != nil || len(rows) < limit {
			return rows, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// Recover continues runs a crash interrupted: runs still "running" are
// ticked from their last checkpoint, and parents waiting on a child that
// has ended are resumed. A running run this runtime is working on right
// now (Runtime.Busy: a tick, or a host update holding its lock) is not
// waited for but queued, as for DriveSoon, for the loop (or the next
// Pass) to drive once its lock is free. Running runs of workflows the
// runtime's registry lacks are left as they are, for a runner that has
// them (runners sharing a store may each serve some workflows), or for
// this one: the loop (or the next Pass) drives them once its registry
// gains their workflow. It is
// called by Start; hosts may call it too. An error means the recovery is not done: a listing
// failed, a waited child could not be read (its parent is checked again
// by the next Recover), or ctx ended (a run it was ticking is left
// running).
func (s *Scheduler) Recover(ctx context.Context) error {
	// Workflows registered before the listing have their runs driven
	// here, not again by driveNewlyServed.
	s.markServed()
	running, err := listAll(ctx, func(limit int) ([]store.RunIndexRow, error) {
		return s.st.RunIndex(ctx, &store.RunIndexParams{Status: durable.RunRunning, Limit: limit})
	})
	if err != nil {
		return fmt.Errorf("listing running runs: %w", err)
	}
	pool := s.newDrivePool()
	for _, r := range running {
		if err := ctx.Err(); err != nil {
			pool.wait()
			return err
		}
		if _, ok := s.rt.Registry().Get(r.WorkflowID); !ok {
			continue
		}
		if s.rt.Busy(r.RunID) {
			// Its lock is held or awaited in this process: waiting for it
			// would hold the recovery (and the loop) up. The holder may be
			// a host update (UpdateLimits, UpdateVars, Pause) that does not
			// tick the run, and without claims no other Recover comes: it
			// is driven on once free, as a busy unfinished run is (a tick
			// of a run another tick moved on meanwhile does nothing). A run
			// already queued keeps its time (a failure back-off).
			s.mu.Lock()
			if _, queued := s.unfinished[r.RunID]; !queued {
				s.unfinished[r.RunID] = s.nowLocked()
			}
			s.mu.Unlock()
			continue
		}
		if pool == nil {
			s.drive(ctx, r.RunID, durable.Time{})
		} else if !pool.drive(ctx, s, r.RunID) {
			pool.wait()
			return ctx.Err()
		}
	}
	// Every drive ends before the parents are looked at: a child's drive
	// may end it and resume its parent itself.
	pool.wait()
	parents, err := listAll(ctx, func(limit int) ([]*durable.RunState, error) {
		return s.st.RunList(ctx, &store.RunListParams{
			Status: durable.RunWaiting, WaitReason: durable.WaitSubworkflow, Limit: limit,
		})
	})
	if err != nil {
		return fmt.Errorf("listing parents waiting on children: %w", err)
	}
	// A child that could not be read (a store briefly unavailable) leaves
	// its parent unchecked: the recovery is not done, and is tried again.
	// The other parents are checked meanwhile; the first error is kept.
	var readErr error
	unread := 0
	for _, p := range parents {
		if err := ctx.Err(); err != nil {
			return err
		}
		child := runtime.WaitedChild(p)
		if child == "" {
			continue
		}
		c, err := s.st.RunGet(ctx, child)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			if unread++; readErr == nil {
				readErr = fmt.Errorf("reading child %s of parent %s: %w", child, p.RunID, err)
			}
			continue
		}
		if err == nil && c.Status.Terminal() {
			if err := s.rt.NotifyChildEnded(ctx, child); err != nil && !errors.Is(err, runtime.ErrRunClaimed) {
				s.cfg.Logger.WarnContext(ctx, "resuming a parent whose child ended", slog.String("run_id", p.RunID), slog.String("error", err.Error()))
				s.recordError(fmt.Sprintf("Run %s: resuming parent: %v", p.RunID, err))
			}
		}
	}
	// A tick ctx interrupted left its run running: the recovery is not
	// done, whatever the listings after it (which may not look at ctx) say.
	if err := ctx.Err(); err != nil {
		return err
	}
	if unread > 1 {
		return fmt.Errorf("%w (and the children of %d more parents)", readErr, unread-1)
	}
	return readErr
}
