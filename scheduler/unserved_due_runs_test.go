package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// theirsFlow is waitFlow under the id "theirs": a workflow another runner
// sharing the store serves.
func theirsFlow() *runtime.Workflow {
	wf := waitFlow(time.Minute)
	wf.ID = "theirs"
	return wf
}

// sharedDueRuns stores, through a runner serving both workflows, n due
// runs of "theirs" and then, due after all of them, nMine of "wait". It
// returns the runner serving "theirs" and the ids.
func sharedDueRuns(t *testing.T, c *runtimetest.Clock, st *memory.Store, n, nMine int) (other *runtime.Runtime, theirs, mine []string) {
	t.Helper()
	ctx := context.Background()
	both, _ := runtime.NewRegistry(waitFlow(time.Minute), theirsFlow())
	writer, err := runtime.New(runtime.Config{Store: st, Registry: both, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	start := func(wf string) string {
		id, err := writer.Start(ctx, runtime.StartParams{WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := writer.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
			t.Fatalf("setup: %v %v", s, err)
		}
		c.Advance(time.Millisecond) // due in this order
		return id
	}
	for range n {
		theirs = append(theirs, start("theirs"))
	}
	for range nMine {
		mine = append(mine, start("wait"))
	}
	reg, _ := runtime.NewRegistry(theirsFlow())
	if other, err = runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now}); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	return other, theirs, mine
}

// dueRunsFixture is sharedDueRuns of n runs of "theirs" on a fresh store
// and clock, with rt: a runner on it serving only "wait" through reg.
type dueRunsFixture struct {
	c            *runtimetest.Clock
	reg          *runtime.Registry
	rt, other    *runtime.Runtime
	theirs, mine []string
}

func newDueRunsFixture(t *testing.T, n int) *dueRunsFixture {
	t.Helper()
	f := &dueRunsFixture{c: runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	st := memory.New()
	f.other, f.theirs, f.mine = sharedDueRuns(t, f.c, st, n, 2)
	f.reg, _ = runtime.NewRegistry(waitFlow(time.Minute))
	f.rt, _ = runtime.New(runtime.Config{Store: st, Registry: f.reg, Clock: f.c.Now})
	return f
}

// Runners sharing a store may each serve some workflows: a due run of a
// workflow this runner does not serve is left for the runner that serves
// it, not ticked (a tick would fail for want of the workflow) nor reported
// as failed at each poll while it stays due; and due runs of other
// workflows, however many, do not hide this runner's own due runs behind
// them from its polls.
func TestPollLeavesUnservedDueRunsAndReachesServedOnesBehindThem(t *testing.T) {
	t.Parallel()
	f := newDueRunsFixture(t, 12)
	c, rt, other, theirs, mine := f.c, f.rt, f.other, f.theirs, f.mine
	var failed atomic.Int32
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 5, PollInterval: time.Second,
		OnRunFailed: func(string, error) { failed.Add(1) }})
	ctx := context.Background()
	// One poll reaches this runner's due runs behind the 12 others.
	if n, err := s.PollOnce(ctx); err != nil || n != len(mine) {
		t.Fatalf("first poll ticked %d (%v); want this runner's %d due runs", n, err, len(mine))
	}
	for _, id := range mine {
		if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
			t.Fatalf("served due run %s is %s after the poll; want completed", id, got.Status)
		}
	}
	// Polls go on for a while (past every back-off) with the others due.
	for range 20 {
		c.Advance(time.Minute)
		if _, err := s.PollOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Stats(); got.RunsFailed != 0 || failed.Load() != 0 {
		t.Fatalf("due runs this runner does not serve were failed: %d failures, %d callbacks, errors %v",
			got.RunsFailed, failed.Load(), got.Errors)
	}
	if w := scheduler.NextWait(s, ctx); w <= 0 {
		t.Fatalf("loop would sleep %v with only others' runs due: it would spin", w)
	}
	// Left as they were, for the runner that serves them.
	for _, id := range theirs {
		got, _ := other.GetState(ctx, id)
		if got.Status != durable.RunWaiting {
			t.Fatalf("unserved run %s is %s; want left waiting", id, got.Status)
		}
		if s, err := other.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunCompleted {
			t.Fatalf("the serving runner's tick of %s: %v %v", id, s, err)
		}
	}
}

// A runner alone on its store whose due run's workflow it does not know
// (unregistered since) is told once, by a warning naming the workflow, not
// at every poll nor never.
func TestUnservedDueRunIsReportedOnce(t *testing.T) {
	t.Parallel()
	f := newDueRunsFixture(t, 3)
	c, rt := f.c, f.rt
	logs := &keptLogs{}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second, Logger: slog.New(logs)})
	ctx := context.Background()
	for range 20 {
		if _, err := s.PollOnce(ctx); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Minute)
	}
	var about []string
	for _, m := range logs.atLeast(slog.LevelWarn) {
		if strings.Contains(m, "does not serve") {
			about = append(about, m)
		}
	}
	if len(about) != 1 {
		t.Fatalf("%d warnings about the unserved workflow (%q); want exactly one (all warnings: %q)",
			len(about), about, logs.atLeast(slog.LevelWarn))
	}
	if errs := s.Stats().Errors; len(errs) != 1 || !strings.Contains(errs[0], `"theirs"`) {
		t.Fatalf("Stats.Errors = %q; want one entry naming the workflow", errs)
	}
}

// A workflow registered after its due runs were passed over has them
// driven at the next poll that lists them again.
func TestUnservedDueRunIsDrivenOnceItsWorkflowIsRegistered(t *testing.T) {
	t.Parallel()
	f := newDueRunsFixture(t, 2)
	c, reg, rt, theirs := f.c, f.reg, f.rt, f.theirs
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	ctx := context.Background()
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(theirsFlow()); err != nil {
		t.Fatal(err)
	}
	c.Advance(10 * time.Minute)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range theirs {
		if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
			t.Fatalf("run %s of the workflow registered since is %s; want completed", id, got.Status)
		}
	}
}

// With claims, a tick claims a run before it reads it: a runner lacking
// a due run's workflow reads the run first and leaves it alone, neither
// holding it nor taking it over from the runner that holds it (a takeover
// commits the run unchanged, moving its version on, and takes the claim).
func TestPollWithClaimsLeavesAHeldUnservedDueRunToItsHolder(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	_, theirs, _ := sharedDueRuns(t, c, st, 1, 2)
	ctx := context.Background()
	id := theirs[0]
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "them", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.RunGet(ctx, id)
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now, Claims: &runtime.Claims{Owner: "me", TTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	if _, err := s.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	after, _ := st.RunGet(ctx, id)
	if after.Version != before.Version || after.Status != durable.RunWaiting {
		t.Fatalf("unserved run moved from version %d to %d (%s): this runner took it over", before.Version, after.Version, after.Status)
	}
	err = st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "someone else", TTL: time.Hour})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim by a third runner: %v; want a conflict with the holder's live claim", err)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "them", TTL: time.Hour}); err != nil {
		t.Fatalf("the holder's renewal: %v; its claim was taken", err)
	}
}
