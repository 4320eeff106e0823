package benchwork

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"slices"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Workload names, as on the command line and in the JSON lines.
const (
	W1Chain      = "w1_chain"
	W2AskResume  = "w2_ask_resume"
	W3Past       = "w3_wait_until_past"
	W3Due        = "w3_wait_until_due"
	W4LedgerRead = "w4_ledger_read"
)

// Workloads lists the workloads in the order the harness runs them.
var Workloads = []string{W1Chain, W2AskResume, W3Past, W3Due, W4LedgerRead}

// ValidWorkload reports whether name is a known workload.
func ValidWorkload(name string) bool { return slices.Contains(Workloads, name) }

// StepsPerRun is the number of node executions of one run of a workload
// (W4, which has no nodes, reads records instead: 0 here).
func StepsPerRun(workload string) int64 {
	switch workload {
	case W1Chain:
		return W1Nodes
	case W2AskResume, W3Past, W3Due:
		return 2
	}
	return 0
}

// MaxSteps is the tick budget of every tick, as Python's tick(max_steps=100).
const MaxSteps = 100

// Timer is started and stopped around the timed sections of a workload.
// *testing.B satisfies it.
type Timer interface {
	StartTimer()
	StopTimer()
}

// Stopwatch accumulates the wall time, the Go heap allocations
// (runtime.MemStats.Mallocs) and the minor page faults (getrusage) of the
// timed sections, and starts and stops Outer (a *testing.B, or nil) with
// them.
type Stopwatch struct {
	Outer   Timer
	Elapsed time.Duration
	Mallocs uint64
	Faults  int64

	running bool
	t0      time.Time
	m0      uint64
	f0      int64
}

// Start begins a timed section. Its readings (ReadMemStats stops the
// world for tens of µs) are taken before Outer starts, so that they are
// in neither clock.
func (s *Stopwatch) Start() {
	if s.running {
		return
	}
	s.running = true
	s.m0 = mallocs()
	s.f0 = minorFaults()
	if s.Outer != nil {
		s.Outer.StartTimer()
	}
	s.t0 = time.Now()
}

// Stop ends a timed section; Outer stops before the closing readings.
func (s *Stopwatch) Stop() {
	if !s.running {
		return
	}
	d := time.Since(s.t0)
	if s.Outer != nil {
		s.Outer.StopTimer()
	}
	s.Faults += minorFaults() - s.f0
	s.Mallocs += mallocs() - s.m0
	s.Elapsed += d
	s.running = false
}

func mallocs() uint64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.Mallocs
}

// Outcome is what one timed execution of a workload measured.
type Outcome struct {
	Workload string
	// RunIDs are the runs in start order (W4: the runs it read).
	RunIDs []string
	// Steps is the node executions counted inside the handlers during
	// the workload (W4: the ledger records read).
	Steps int64
	// Elapsed is the timed wall time (W3b: phase A + phase B).
	Elapsed time.Duration
	// Mallocs is the Go heap allocations during the timed sections.
	Mallocs uint64
	// Faults is the process's minor page faults during the timed
	// sections (0 where getrusage is missing).
	Faults int64
	// Ops is the store calls made by the workload (verification
	// excluded).
	Ops Counts

	// W3b only.
	PhaseA, PhaseB     time.Duration
	Cycles             int // scheduler polls, the final empty one included
	ImmediateFallbacks int // runs that completed at their first tick
	// fellBack are those runs: their wait was due when its handler ran,
	// so the kernel's past-deadline path wrote vars.woke.
	fellBack map[string]bool
}

// runCtx carries what every workload loop needs.
type runCtx struct {
	env     *Env
	sw      *Stopwatch
	out     *Outcome
	ops0    Counts
	steps0  int64
	elapsed time.Duration
	mallocs uint64
	faults  int64
}

func begin(env *Env, workload string, n int, sw *Stopwatch) *runCtx {
	if sw == nil {
		sw = &Stopwatch{}
	}
	return &runCtx{
		env: env, sw: sw, out: &Outcome{Workload: workload, RunIDs: make([]string, 0, n)},
		ops0: env.Store.Snapshot(), steps0: env.Steps(), elapsed: sw.Elapsed, mallocs: sw.Mallocs, faults: sw.Faults,
	}
}

// end fills the totals of the outcome.
func (c *runCtx) end() *Outcome {
	c.sw.Stop()
	c.out.Steps = c.env.Steps() - c.steps0
	c.out.Elapsed = c.sw.Elapsed - c.elapsed
	c.out.Mallocs = c.sw.Mallocs - c.mallocs
	c.out.Faults = c.sw.Faults - c.faults
	c.out.Ops = c.env.Store.Snapshot().Sub(c.ops0)
	return c.out
}

// settler is a store that may hold commits it has not yet applied to its
// database file (the SQLite store's redo log). A timed loop settles it
// before the clock stops, so that its figure includes that work.
type settler interface {
	Settle(ctx context.Context) error
}

// settle applies what the store holds back, on the clock.
func (c *runCtx) settle(ctx context.Context) error {
	if s, ok := c.env.Store.Inner().(settler); ok {
		if err := s.Settle(ctx); err != nil {
			return fmt.Errorf("settling the store: %w", err)
		}
	}
	return nil
}

// finish settles the store, then stops the clock and fills the totals.
func (c *runCtx) finish(ctx context.Context) (*Outcome, error) {
	if err := c.settle(ctx); err != nil {
		return c.fail(err)
	}
	return c.end(), nil
}

// fail stops the clock and returns err.
func (c *runCtx) fail(err error) (*Outcome, error) {
	c.sw.Stop()
	return nil, err
}

// Run executes n runs of a workload other than W4 on env (see RunW1 …
// RunW3Due).
func Run(ctx context.Context, env *Env, workload string, n int, sw *Stopwatch) (*Outcome, error) {
	switch workload {
	case W1Chain:
		return RunW1(ctx, env, n, sw)
	case W2AskResume:
		return RunW2(ctx, env, n, sw)
	case W3Past:
		return RunW3Past(ctx, env, n, sw)
	case W3Due:
		return RunW3Due(ctx, env, n, sw)
	}
	return nil, fmt.Errorf("workload %q cannot be run on its own", workload)
}

// RunW1 is W1: n × (start bench_w1_chain; tick → COMPLETED). The loop is
// timed.
func RunW1(ctx context.Context, env *Env, n int, sw *Stopwatch) (*Outcome, error) {
	c := begin(env, W1Chain, n, sw)
	rt := env.Runtime
	c.sw.Start()
	for i := range n {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: WorkflowW1})
		if err != nil {
			return c.fail(fmt.Errorf("w1 run %d: %w", i, err))
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
		if err != nil {
			return c.fail(fmt.Errorf("w1 run %d: tick: %w", i, err))
		}
		if st.Status != durable.RunCompleted {
			return c.fail(fmt.Errorf("w1 run %s: status %s after tick, want completed (error %q)", id, st.Status, st.Error))
		}
		c.out.RunIDs = append(c.out.RunIDs, id)
	}
	return c.finish(ctx)
}

// RunW2 is W2: n × (start bench_w2_ask; tick → WAITING on user:<id>:ask;
// resume with {"text": "yes"} → COMPLETED {"answer": "yes"}). The loop
// is timed.
func RunW2(ctx context.Context, env *Env, n int, sw *Stopwatch) (*Outcome, error) {
	c := begin(env, W2AskResume, n, sw)
	rt := env.Runtime
	c.sw.Start()
	for i := range n {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: WorkflowW2})
		if err != nil {
			return c.fail(fmt.Errorf("w2 run %d: %w", i, err))
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
		if err != nil {
			return c.fail(fmt.Errorf("w2 run %d: tick: %w", i, err))
		}
		if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitUser {
			return c.fail(fmt.Errorf("w2 run %s: status %s after tick, want waiting (user)", id, st.Status))
		}
		key := "user:" + id + ":ask"
		if st.Waiting.WaitKey != key {
			return c.fail(fmt.Errorf("w2 run %s: wait key %q, want %q", id, st.Waiting.WaitKey, key))
		}
		st, err = rt.Resume(ctx, runtime.ResumeParams{
			RunID: id, WaitKey: key, Payload: map[string]any{"text": "yes"}, MaxSteps: MaxSteps,
		})
		if err != nil {
			return c.fail(fmt.Errorf("w2 run %s: resume: %w", id, err))
		}
		if st.Status != durable.RunCompleted || st.Output["answer"] != "yes" {
			return c.fail(fmt.Errorf("w2 run %s: status %s output %v after resume, want completed {answer: yes}",
				id, st.Status, st.Output))
		}
		c.out.RunIDs = append(c.out.RunIDs, id)
	}
	return c.finish(ctx)
}

// RunW3Past is W3: n × (start bench_w3_past; tick → COMPLETED). The
// deadline is in the past, so the wait completes at once. The loop is
// timed.
func RunW3Past(ctx context.Context, env *Env, n int, sw *Stopwatch) (*Outcome, error) {
	c := begin(env, W3Past, n, sw)
	rt := env.Runtime
	c.sw.Start()
	for i := range n {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: WorkflowW3})
		if err != nil {
			return c.fail(fmt.Errorf("w3 run %d: %w", i, err))
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
		if err != nil {
			return c.fail(fmt.Errorf("w3 run %d: tick: %w", i, err))
		}
		if st.Status != durable.RunCompleted {
			return c.fail(fmt.Errorf("w3 run %s: status %s after tick, want completed", id, st.Status))
		}
		c.out.RunIDs = append(c.out.RunIDs, id)
	}
	return c.finish(ctx)
}

// RunW3Due is W3b. Phase A (timed): n × (start bench_w3_due; tick →
// WAITING until now+250ms); a run that completed at once is counted in
// ImmediateFallbacks. Gap (untimed): sleep until the latest deadline
// +5ms. Phase B (timed): Scheduler.PollOnce (list due, limit 100, tick
// each) until a cycle finds nothing.
func RunW3Due(ctx context.Context, env *Env, n int, sw *Stopwatch) (*Outcome, error) {
	c := begin(env, W3Due, n, sw)
	rt := env.Runtime
	var latest time.Time
	c.sw.Start()
	for i := range n {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: WorkflowW3Due})
		if err != nil {
			return c.fail(fmt.Errorf("w3b run %d: %w", i, err))
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: MaxSteps})
		if err != nil {
			return c.fail(fmt.Errorf("w3b run %d: tick: %w", i, err))
		}
		switch {
		case st.Status == durable.RunWaiting && st.Waiting != nil && st.Waiting.Reason == durable.WaitUntil:
			if st.Waiting.Until.After(latest) {
				latest = st.Waiting.Until.Time
			}
		case st.Status == durable.RunCompleted:
			c.out.ImmediateFallbacks++
			if c.out.fellBack == nil {
				c.out.fellBack = map[string]bool{}
			}
			c.out.fellBack[id] = true
		default:
			return c.fail(fmt.Errorf("w3b run %s: status %s after tick, want waiting (until)", id, st.Status))
		}
		c.out.RunIDs = append(c.out.RunIDs, id)
	}
	if err := c.settle(ctx); err != nil {
		return c.fail(err)
	}
	c.sw.Stop()
	c.out.PhaseA = c.sw.Elapsed - c.elapsed

	if d := time.Until(latest) + 5*time.Millisecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("w3b: waiting for the deadlines: %w", ctx.Err())
		case <-t.C:
		}
	}

	failed0 := env.Scheduler.Stats().RunsFailed
	c.sw.Start()
	for {
		due, err := env.Scheduler.PollOnce(ctx)
		c.out.Cycles++
		if err != nil {
			return c.fail(fmt.Errorf("w3b: scheduler poll %d: %w", c.out.Cycles, err))
		}
		if due == 0 {
			break
		}
		if c.out.Cycles > n+10 {
			return c.fail(fmt.Errorf("w3b: still finding due runs after %d polls", c.out.Cycles))
		}
	}
	if err := c.settle(ctx); err != nil {
		return c.fail(err)
	}
	c.sw.Stop()
	c.out.PhaseB = c.sw.Elapsed - c.elapsed - c.out.PhaseA
	if st := env.Scheduler.Stats(); st.RunsFailed != failed0 {
		return nil, fmt.Errorf("w3b: %d scheduler ticks failed: %v", st.RunsFailed-failed0, st.Errors)
	}
	return c.end(), nil
}

// RunW4 is W4: for each run id (W1's, in start order) read its full
// ledger. The loop is timed; steps are the records read.
func RunW4(ctx context.Context, env *Env, runIDs []string, sw *Stopwatch) (*Outcome, error) {
	c := begin(env, W4LedgerRead, len(runIDs), sw)
	rt := env.Runtime
	var records int64
	c.sw.Start()
	for _, id := range runIDs {
		recs, err := rt.GetLedger(ctx, id)
		if err != nil {
			return c.fail(fmt.Errorf("w4: %w", err))
		}
		records += int64(len(recs))
	}
	c.sw.Stop()
	out := c.end()
	out.RunIDs = append(out.RunIDs, runIDs...)
	out.Steps = records
	return out, nil
}

// round rounds x to the given decimal places.
func round(x float64, places int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	p := math.Pow10(places)
	return math.Round(x*p) / p
}
