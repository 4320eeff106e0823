package e2etest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestMultiRunnerStress is a randomized multi-runner stress test: three
// runners (a runtime with claims and a real-time scheduler each) share one
// store, as three processes sharing a database would. Three workers send
// random host operations (start, tick, resume, pause, resume-run, cancel,
// update-vars, event emission) through random runners while a crasher now
// and then "kills" a runner (its store writes start failing, its in-flight
// handlers die, its claims are neither renewed nor released) and restarts
// it under a new owner. The runs are then brought to an end and the
// invariants of the runtime model (ledger, claims, idempotency) checked:
//   - every run ends completed or cancelled; no child is left open;
//   - each ledger is well formed (the e2e per-record invariants, dense
//     sequence numbers) and ends with exactly one terminal status record;
//   - every effect attempt has exactly one end record, unless a later
//     attempt with its key replays it;
//   - the out-of-process handler ran at most once per durable attempt;
//   - a wait is answered at most once, and a completed run carries the
//     answer of that one successful resume; a completed parent carries its
//     child's end;
//   - two runners never run one effect key at once while the first is
//     still allowed to (its context live, its process alive).
//
// None but the last depends on timing: the storm's real-time sleeps,
// TTLs and the settle deadline only shape the interleavings or bound a
// hang. The last is the claims' documented guarantee (the holder's
// context is cancelled by its own timer a tenth of the TTL, 100 ms by
// default, before another runner may take the run); an overlap with a
// call already told to stop, merely not yet returned, is counted, not
// failed.
//
// The store variants: memory (one store), SQLite in shared mode (two
// handles on one file) and PostgreSQL (two pools on one schema; skipped
// without TEST_POSTGRES_URL). Skipped under -short.
//
// Defaults are sized for CI (go test -race on 2 shared cores): one seed
// and a 2 s storm per store. Knobs (environment) for deeper runs:
//   - STRESS_SEED=<n>: the seed (default 1); it fixes the operation
//     sequence, not the interleaving;
//   - STRESS_DUR=<duration>: the length of the storm (default 2s);
//   - STRESS_TTL=<duration>: the claim TTL (default 1s; renewals every
//     TTL/12): shorter means more takeovers of a crashed runner's runs;
//   - STRESS_SAME_OWNER=1: a restarted runner keeps its owner name, as a
//     restarted process with a configured owner would;
//   - STRESS_PARTITION=1: half the "crashes" are instead store partitions
//     longer than the TTL that then heal, the runner living on.
//
// For example: STRESS_DUR=30s STRESS_TTL=300ms STRESS_PARTITION=1
// go test -race -run MultiRunnerStress ./store/e2etest.
func TestMultiRunnerStress(t *testing.T) {
	if testing.Short() {
		t.Skip("the multi-runner stress test runs for seconds; skipped under -short")
	}
	cfg := stressConfigFromEnv(t)
	t.Run("memory", func(t *testing.T) {
		cfg.each(t, func(t *testing.T) []store.Store { return []store.Store{memory.New()} })
	})
	t.Run("sqlite_shared", func(t *testing.T) {
		cfg.each(t, func(t *testing.T) []store.Store {
			path := filepath.Join(t.TempDir(), "db.sqlite3")
			var sts []store.Store
			for range 2 {
				st, err := sqlite.New(context.Background(), sqlite.Config{Path: path, Shared: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				sts = append(sts, st)
			}
			return sts
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("TEST_POSTGRES_URL")
		if url == "" {
			t.Skip("set TEST_POSTGRES_URL=postgres://… to run the PostgreSQL multi-runner stress test; CI starts a server with .ci/postgres.sh")
		}
		cfg.each(t, func(t *testing.T) []store.Store {
			schema := fmt.Sprintf("stress_%d_%d", os.Getpid(), time.Now().UnixNano())
			t.Cleanup(func() { postgres.DropSchema(context.Background(), url, schema) })
			var sts []store.Store
			for range 2 {
				st, err := postgres.New(context.Background(), postgres.Config{URL: url, Schema: schema})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				sts = append(sts, st)
			}
			return sts
		})
	})
}

const (
	stressRunners = 3
	stressWorkers = 3
	stressMaxRuns = 30 // top-level runs started in one storm
	// stressSettleLimit only bounds a hang: settling takes a few seconds.
	stressSettleLimit = 2 * time.Minute
)

type stressConfig struct {
	seeds                []uint64
	dur, ttl             time.Duration
	sameOwner, partition bool
}

func stressConfigFromEnv(t *testing.T) stressConfig {
	cfg := stressConfig{seeds: []uint64{1}, dur: 2 * time.Second, ttl: time.Second,
		sameOwner: os.Getenv("STRESS_SAME_OWNER") != "", partition: os.Getenv("STRESS_PARTITION") != ""}
	if v := os.Getenv("STRESS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("STRESS_SEED: %v", err)
		}
		cfg.seeds = []uint64{n}
	}
	for _, k := range []struct {
		name string
		d    *time.Duration
	}{{"STRESS_DUR", &cfg.dur}, {"STRESS_TTL", &cfg.ttl}} {
		if v := os.Getenv(k.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				t.Fatalf("%s=%q: want a positive duration (%v)", k.name, v, err)
			}
			*k.d = d
		}
	}
	return cfg
}

// each runs one storm per seed on the stores newStores opens (runner i
// uses store i modulo their number).
func (cfg stressConfig) each(t *testing.T, newStores func(t *testing.T) []store.Store) {
	for _, seed := range cfg.seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runStress(t, cfg, seed, newStores(t))
		})
	}
}

var errStressDead = errors.New("stress: runner crashed")

// dyingStore is a runner's view of the store: once dead, every write
// fails, as for a process that died (nothing it does after reaches the
// store); while partitioned, writes hang until the partition heals or
// their context ends, as network calls would.
type dyingStore struct {
	store.Wrapper
	dead   atomic.Bool
	partMu sync.Mutex
	healed chan struct{} // non-nil while partitioned
}

func (d *dyingStore) check(ctx context.Context) error {
	if d.dead.Load() {
		return errStressDead
	}
	d.partMu.Lock()
	healed := d.healed
	d.partMu.Unlock()
	if healed != nil {
		select {
		case <-healed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if d.dead.Load() {
		return errStressDead
	}
	return nil
}

// partition cuts the runner off the store for d, then heals it.
func (d *dyingStore) partition(dur time.Duration) {
	healed := make(chan struct{})
	d.partMu.Lock()
	d.healed = healed
	d.partMu.Unlock()
	time.Sleep(dur)
	d.partMu.Lock()
	d.healed = nil
	d.partMu.Unlock()
	close(healed)
}

func (d *dyingStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	return d.Wrapper.RunCommit(ctx, p)
}

func (d *dyingStore) LedgerAppend(ctx context.Context, id string, r []*durable.StepRecord) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	return d.Wrapper.LedgerAppend(ctx, id, r)
}

func (d *dyingStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	return d.Wrapper.RunClaim(ctx, p)
}

func (d *dyingStore) RunRelease(ctx context.Context, id, owner string) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	return d.Wrapper.RunRelease(ctx, id, owner)
}

func (d *dyingStore) RunDelete(ctx context.Context, id string) (bool, error) {
	if err := d.check(ctx); err != nil {
		return false, err
	}
	return d.Wrapper.RunDelete(ctx, id)
}

func (d *dyingStore) CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error) {
	if err := d.check(ctx); err != nil {
		return durable.CommandAppendResult{}, err
	}
	return d.Wrapper.CommandAppend(ctx, c)
}

type stressRunner struct {
	owner string
	st    *dyingStore
	rt    *runtime.Runtime
	sch   *scheduler.Scheduler
	dead  chan struct{} // closed when the runner crashes
}

// stressCall is one call of the "count" handler.
type stressCall struct {
	run, key string
	owner    string
	ctx      context.Context // the effect's context
	dead     chan struct{}   // its runner's
}

// stopping reports whether the call has been told to stop (its claim
// lost or given up) or its process died: it may still be returning.
func (c *stressCall) stopping() bool {
	select {
	case <-c.dead:
		return true
	default:
		return c.ctx.Err() != nil
	}
}

type stress struct {
	t     *testing.T
	cfg   stressConfig
	ctx   context.Context
	sts   []store.Store
	check *env // reads the store at the end (its ledger checks)
	p     *pool

	mu      sync.Mutex // runners, gen
	runners []*stressRunner
	gen     int
	parts   int // partitions (the crasher's goroutine only)

	unexpMu sync.Mutex
	unexp   []string // errors no host caller should see, logged

	callsMu  sync.Mutex
	calls    []*stressCall
	inflight map[string]*stressCall // run|key → the call running it now
	overlaps int                    // calls that overlapped one told to stop
}

// stressWorkflows are the workflows of the storm: "count" stands for a
// call leaving the process (a tool), interruptible.
func stressWorkflows() []*runtime.Workflow {
	count := func(key, next string) runtime.StepPlan {
		return effect("count", map[string]any{"q": key}, key, next)
	}
	soon := func(rc *runtime.RunContext, ms int) string {
		return durable.FormatTime(rc.Now().Add(time.Duration(ms) * time.Millisecond))
	}
	return []*runtime.Workflow{
		{ID: "full", Entry: "t1", Nodes: map[string]runtime.NodeFunc{
			"t1": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r1", "ask") }),
			"ask": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectAskUser, map[string]any{"prompt": "?"}, "answer", "sleep")
			}),
			"sleep": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectWaitUntil, map[string]any{"until": soon(rc, 80)}, "woke", "listen")
			}),
			"listen": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectWaitEvent, map[string]any{"name": "go", "timeout_s": 0.3}, "evt", "sub")
			}),
			"sub": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "child", "async": true, "wait": true}, "child", "t2")
			}),
			"t2": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r2", "done") }),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"answer": run.Vars["answer"], "child": run.Vars["child"]})
			}),
		}},
		{ID: "tools", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r1", "b") }),
			"b": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r2", "c") }),
			"c": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r3", "done") }),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}},
		{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "child", "async": true, "wait": true}, "child", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"child": run.Vars["child"]})
			}),
		}},
		{ID: "child", Entry: "t", Nodes: map[string]runtime.NodeFunc{
			"t": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r", "ask") }),
			"ask": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectAskUser, map[string]any{"prompt": "?"}, "answer", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"answer": run.Vars["answer"]})
			}),
		}},
		{ID: "sleep", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectWaitUntil, map[string]any{"until": soon(rc, 150)}, "woke", "t")
			}),
			"t": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan { return count("r", "done") }),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}},
		{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectWaitEvent, map[string]any{"name": "go"}, "evt", "done")
			}),
			"done": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"evt": run.Vars["evt"]})
			}),
		}},
		{ID: "emit", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
			"emit": node(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return effect(durable.EffectEmitEvent, map[string]any{"name": "go", "payload": map[string]any{"n": run.RunID}}, "sent", "")
			}),
		}},
	}
}

// stressKinds are the workflows the workers start, with the share of
// starts each gets.
var stressKinds = []string{"full", "full", "full", "tools", "parent", "parent", "sleep", "listen", "emit"}

// count is the "count" handler of runner sr: it records the call and
// checks that no other call of its key is running, then takes 1 to
// 121 ms unless interrupted.
func (s *stress) count(ctx context.Context, sr *stressRunner, req *runtime.EffectRequest) (runtime.Outcome, error) {
	key := req.Run.RunID + "|" + req.IdempotencyKey
	c := &stressCall{run: req.Run.RunID, key: req.IdempotencyKey, owner: sr.owner, ctx: ctx, dead: sr.dead}
	s.callsMu.Lock()
	if other, ok := s.inflight[key]; ok {
		if other.stopping() {
			s.overlaps++
		} else {
			s.p.fail("effect %s called by %s while %s runs it, its claim live", key, sr.owner, other.owner)
		}
	}
	s.inflight[key] = c
	s.calls = append(s.calls, c)
	s.callsMu.Unlock()
	defer func() {
		s.callsMu.Lock()
		if s.inflight[key] == c {
			delete(s.inflight, key)
		}
		s.callsMu.Unlock()
	}()
	d := time.Duration(1+int(req.IdempotencyKey[len(req.IdempotencyKey)-1])%4*40) * time.Millisecond
	select {
	case <-time.After(d):
		return runtime.Completed(map[string]any{"ok": true, "key": req.IdempotencyKey}), nil
	case <-ctx.Done():
		return runtime.Outcome{}, ctx.Err()
	case <-sr.dead:
		// The process died: its call is gone with it.
		return runtime.Outcome{}, errStressDead
	}
}

// newRunner starts runner i (a new process: a new owner name unless
// STRESS_SAME_OWNER).
func (s *stress) newRunner(i int) *stressRunner {
	s.mu.Lock()
	s.gen++
	owner := fmt.Sprintf("r%d-g%d", i, s.gen)
	s.mu.Unlock()
	if s.cfg.sameOwner {
		owner = fmt.Sprintf("r%d", i)
	}
	reg, err := runtime.NewRegistry(stressWorkflows()...)
	if err != nil {
		s.t.Fatal(err)
	}
	sr := &stressRunner{owner: owner, st: &dyingStore{Wrapper: store.Wrapper{Store: s.sts[i%len(s.sts)]}}, dead: make(chan struct{})}
	rt, err := runtime.New(runtime.Config{Store: sr.st, Registry: reg,
		Claims: &runtime.Claims{Owner: owner, TTL: s.cfg.ttl, RenewEvery: s.cfg.ttl / 12},
		Handlers: map[durable.EffectType]runtime.Handler{
			"count": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				return s.count(ctx, sr, req)
			}},
		}})
	if err != nil {
		s.t.Fatal(err)
	}
	// Runner 1 ticks due and recovered runs three at a time, the others
	// one at a time: both drive the same runs, claims between them.
	sch, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 10 * time.Millisecond, RecoverInterval: 150 * time.Millisecond,
		Concurrency: 1 + 2*(i%2)})
	if err != nil {
		s.t.Fatal(err)
	}
	sr.rt, sr.sch = rt, sch
	if err := sch.Start(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	return sr
}

// crash kills runner i: its writes fail from now on, its handlers return,
// its scheduler stops; its claims stay in the store until they expire.
func (s *stress) crash(i int) {
	s.mu.Lock()
	sr := s.runners[i]
	s.mu.Unlock()
	sr.st.dead.Store(true)
	close(sr.dead)
	sr.sch.Stop()
}

func (s *stress) restart(i int) {
	sr := s.newRunner(i)
	s.mu.Lock()
	s.runners[i] = sr
	s.mu.Unlock()
}

func (s *stress) runner(r *rand.Rand) *stressRunner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runners[r.IntN(len(s.runners))]
}

// expected reports whether err is one a racing host caller must be ready
// for, or that of a runner that crashed under the call.
func (s *stress) expected(err error) bool {
	var stale *runtime.StaleResumeError
	return err == nil || errors.As(err, &stale) || errors.Is(err, runtime.ErrRunPaused) ||
		errors.Is(err, runtime.ErrRunClaimed) || errors.Is(err, errStressDead)
}

// checked logs an unexpected error: a crash or partition can surface as
// others (a context ended on a hung write, a commit conflict), so they
// are not failures; the end state is what is checked.
func (s *stress) checked(tag, op, id string, err error) {
	if !s.expected(err) {
		s.unexpMu.Lock()
		s.unexp = append(s.unexp, fmt.Sprintf("%s: %s %s: %v", tag, op, id, err))
		s.unexpMu.Unlock()
	}
}

// answer answers the ask the run (or, for a parent, its child) waits on.
func (s *stress) answer(sr *stressRunner, id, tag string) {
	st, err := sr.rt.GetState(s.ctx, id)
	if err != nil {
		return
	}
	if st.Status == durable.RunWaiting && st.Waiting != nil && st.Waiting.Reason == durable.WaitSubworkflow {
		child := runtime.WaitedChild(st)
		if child == "" {
			return
		}
		s.p.add(child, "child")
		if st, err = sr.rt.GetState(s.ctx, child); err != nil {
			return
		}
		id = child
	}
	if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitUser || runtime.IsPaused(st) {
		return
	}
	_, err = sr.rt.Resume(s.ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"text": tag}, Strict: true})
	if err == nil {
		s.p.answer(id, tag)
		return
	}
	s.checked(tag, "resume", id, err)
}

// op is one worker step; tag names it in answers and errors.
func (s *stress) op(r *rand.Rand, tag string) {
	sr := s.runner(r)
	rt := sr.rt
	n := r.IntN(100)
	s.p.mu.Lock()
	nruns := len(s.p.ids)
	s.p.mu.Unlock()
	if n < 15 && nruns < stressMaxRuns {
		kind := stressKinds[r.IntN(len(stressKinds))]
		id, err := rt.Start(s.ctx, runtime.StartParams{WorkflowID: kind, SessionID: "sess"})
		if err != nil {
			s.checked(tag, "start", kind, err)
			return
		}
		s.p.add(id, kind)
		if r.IntN(2) == 0 {
			_, err := rt.Tick(s.ctx, id, runtime.TickOptions{})
			s.checked(tag, "tick", id, err)
		}
		return
	}
	id := s.p.pick(r)
	if id == "" {
		return
	}
	switch {
	case n < 30:
		_, err := rt.Tick(s.ctx, id, runtime.TickOptions{})
		s.checked(tag, "tick", id, err)
	case n < 55:
		s.answer(sr, id, tag)
	case n < 63:
		_, err := rt.Pause(s.ctx, id, tag)
		s.checked(tag, "pause", id, err)
	case n < 73:
		_, err := rt.ResumeRun(s.ctx, id)
		s.checked(tag, "resume-run", id, err)
	case n < 75:
		_, err := rt.Cancel(s.ctx, id, tag)
		s.checked(tag, "cancel", id, err)
	case n < 83:
		err := rt.UpdateVars(s.ctx, id, func(vars map[string]any) (bool, error) {
			vars["touched"] = tag
			return true, nil
		})
		s.checked(tag, "update-vars", id, err)
	case n < 93:
		_, err := rt.EmitEvent(s.ctx, runtime.EmitParams{Name: "go", SessionID: "sess", Payload: map[string]any{"n": tag}})
		s.checked(tag, "emit", "", err)
	default:
		time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
	}
}

func runStress(t *testing.T, cfg stressConfig, seed uint64, sts []store.Store) {
	ctx := context.Background()
	s := &stress{t: t, cfg: cfg, ctx: ctx, sts: sts,
		check:    &env{t: t, ctx: ctx, st: sts[0]},
		p:        &pool{kind: map[string]string{}, answered: map[string]string{}},
		inflight: map[string]*stressCall{}}
	for i := range stressRunners {
		s.runners = append(s.runners, s.newRunner(i))
	}
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, sr := range s.runners {
			sr.sch.Stop()
		}
	}()
	t.Logf("seed %d, storm %v, claim TTL %v", seed, cfg.dur, cfg.ttl)
	deadline := time.Now().Add(cfg.dur)
	var wg sync.WaitGroup
	for w := range stressWorkers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; time.Now().Before(deadline); i++ {
				s.op(r, fmt.Sprintf("w%d-%d", w, i))
			}
		})
	}
	// The crasher: now and then a runner dies, and comes back later (or,
	// with STRESS_PARTITION, is cut off the store for longer than a TTL).
	wg.Go(func() {
		r := rand.New(rand.NewPCG(seed, 99))
		for time.Now().Before(deadline) {
			time.Sleep(time.Duration(100+r.IntN(300)) * time.Millisecond)
			if !time.Now().Before(deadline) {
				return
			}
			i := r.IntN(stressRunners)
			if cfg.partition && r.IntN(2) == 0 {
				s.mu.Lock()
				d := s.runners[i].st
				s.mu.Unlock()
				d.partition(cfg.ttl + time.Duration(r.IntN(700))*time.Millisecond)
				s.parts++
				continue
			}
			s.crash(i)
			time.Sleep(time.Duration(r.IntN(700)) * time.Millisecond)
			s.restart(i)
		}
	})
	wg.Wait()
	t.Logf("%d crashes, %d partitions, %d unexpected errors", s.gen-stressRunners, s.parts, len(s.unexp))
	for _, msg := range s.unexp {
		t.Logf("unexpected error during the storm: %s", msg)
	}
	s.settle()
	s.verify()
}

// settle brings every run to an end through runner 0, the schedulers of
// all runners still running: pauses lifted, asks answered, events sent
// (deadlines pass and claims of crashed runners expire in real time).
func (s *stress) settle() {
	s.mu.Lock()
	rt := s.runners[0].rt
	s.mu.Unlock()
	p := s.p
	end := time.Now().Add(stressSettleLimit)
	for {
		open, last := 0, ""
		for i := 0; i < len(p.ids); i++ { // p.ids grows as children are adopted
			id := p.ids[i]
			st, err := rt.GetState(s.ctx, id)
			if err != nil {
				s.t.Fatal(err)
			}
			if st.Status.Terminal() {
				continue
			}
			open, last = open+1, id
			switch {
			case runtime.IsPaused(st):
				_, err = rt.ResumeRun(s.ctx, id)
			case st.Status == durable.RunRunning:
				_, err = rt.Tick(s.ctx, id, runtime.TickOptions{})
			case st.Waiting == nil:
				s.t.Fatalf("run %s waits without a wait state", id)
			case st.Waiting.Reason == durable.WaitUser:
				_, err = rt.Resume(s.ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"text": "final-" + id}, Strict: true})
				if err == nil {
					p.answer(id, "final-"+id)
				}
			case st.Waiting.Reason == durable.WaitEvent:
				_, err = rt.EmitEvent(s.ctx, runtime.EmitParams{Name: "go", SessionID: "sess", Payload: map[string]any{"n": "final"}})
			case st.Waiting.Reason == durable.WaitSubworkflow:
				if c := runtime.WaitedChild(st); c != "" {
					p.add(c, "child")
				}
			}
			var stale *runtime.StaleResumeError
			if err != nil && !errors.Is(err, runtime.ErrRunClaimed) && !errors.As(err, &stale) {
				s.t.Errorf("settling %s: %v", id, err)
			}
		}
		if open == 0 {
			return
		}
		if time.Now().After(end) {
			st, _ := rt.GetState(s.ctx, last)
			s.t.Fatalf("%d runs still open after %v; e.g. run %s (%s) %s waiting=%+v paused=%v; ledger %s",
				open, stressSettleLimit, last, p.kind[last], st.Status, st.Waiting, runtime.IsPaused(st), s.check.ledger(last))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verify checks the invariants listed on TestMultiRunnerStress.
func (s *stress) verify() {
	t, p, e := s.t, s.p, s.check
	s.mu.Lock()
	e.rt = s.runners[0].rt // for checkParent's reads
	s.mu.Unlock()
	for _, msg := range p.errs {
		t.Error(msg)
	}
	// Adopt every child a parent started, settled or not.
	for _, id := range append([]string(nil), p.ids...) {
		kids, err := e.st.RunListChildren(e.ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			p.add(k.RunID, "child")
			if !k.Status.Terminal() {
				t.Errorf("child %s of %s left %s after settling", k.RunID, id, k.Status)
			}
		}
	}
	s.callsMu.Lock()
	calls := map[string]int{}
	for _, c := range s.calls {
		calls[c.run+"|"+c.key]++
	}
	ncalls, overlaps := len(s.calls), s.overlaps
	s.callsMu.Unlock()
	ends := map[string]int{}
	for _, id := range p.ids {
		st, err := e.st.RunGet(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		kind := p.kind[id]
		ends[kind+" "+string(st.Status)]++
		lg := e.ledger(id) // the per-record invariants
		if st.Status != durable.RunCompleted && st.Status != durable.RunCancelled {
			t.Errorf("run %s (%s) ended %s: %s; ledger %s", id, kind, st.Status, st.Error, lg)
			continue
		}
		recs, err := e.st.LedgerList(e.ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		statusRecs := 0
		started := map[string]int{} // count attempts by key
		endsBy := map[string]int{}  // end records by attempt
		for _, r := range recs {
			switch {
			case r.Effect == nil:
			case r.Effect.Type == durable.EffectEmitEvent && r.Effect.Payload["name"] == "abstract.status":
				statusRecs++
			case r.Status == durable.StepStarted && r.Effect.Type == "count":
				started[r.IdempotencyKey]++
			}
			if r.Status != durable.StepStarted && r.Effect != nil && r.Effect.Type != durable.EffectResume {
				endsBy[r.StepID]++
			}
		}
		if last := recs[len(recs)-1]; statusRecs != 1 || last.Effect == nil || last.Effect.Payload["name"] != "abstract.status" {
			t.Errorf("run %s (%s, %s): %d terminal status records; ledger %s", id, kind, st.Status, statusRecs, lg)
		}
		for i, r := range recs {
			if r.Status != durable.StepStarted {
				continue
			}
			replayed := false
			for _, l := range recs[i+1:] {
				replayed = replayed || l.Status == durable.StepStarted && l.IdempotencyKey == r.IdempotencyKey
			}
			if n := endsBy[r.StepID]; n > 1 || n == 0 && !replayed {
				t.Errorf("run %s (%s): attempt %s of %s at %s has %d end records; ledger %s", id, st.Status, r.StepID, r.Effect.Type, r.NodeID, n, lg)
			}
		}
		// A STARTED record is committed before each call: a runner that
		// died or lost its claim after committing it may not have called,
		// so only an upper bound holds.
		for key, n := range started {
			if c := calls[id+"|"+key]; c > n {
				t.Errorf("run %s: count handler ran %d times for key %s in %d durable attempts; ledger %s", id, c, key, n, lg)
			}
		}
		if st.Status != durable.RunCompleted {
			continue
		}
		switch kind {
		case "child", "full":
			got, _ := st.Output["answer"].(map[string]any)
			if want, ok := p.answered[id]; !ok || got["text"] != want {
				t.Errorf("run %s (%s) completed with answer %v; the one successful resume gave %q (answered=%v); ledger %s", id, kind, got, want, ok, lg)
			}
		}
		switch kind {
		case "parent", "full":
			e.checkParent(p, id, st)
		}
	}
	t.Logf("%d runs: %v; %d handler calls, %d overlapping a call told to stop", len(p.ids), ends, ncalls, overlaps)
}
