package crashtest

// A soak of several runner processes working one store at the same time
// while some of them are killed (SIGKILL) and restarted.
//
// TestMultiRunnerSoak runs it on each store kind several runners can
// share, as subtests: "postgres" on a fresh schema (skipped without
// TEST_POSTGRES_URL), and "sqlite_shared" on a fresh SQLite file opened
// with Config.Shared by every process (several runners on one machine).
// It re-executes the test binary as K runner processes
// (TestMultiRunnerSoakRunnerProcess), each a Runtime claiming runs and a
// Scheduler (Recover every few hundred milliseconds, polls for due waits)
// on that store. The test process is the host: it starts M runs of
// a mix of workflows over most of the soak, answers their questions
// (Resume), releases their event waits (EmitEvent, or by starting an
// emitter run that EMIT_EVENTs), pauses some for a moment (Pause,
// ResumeRun), cancels some (a tree with its children, a loop of slow
// effects, a run waiting for a person), and meanwhile kills (SIGKILL) a
// runner every few hundred milliseconds and starts a new one (new pid, new
// claim owner): half the time the runner of a "charge" handler in progress
// (from the effect log), else a random one, now and then all of them at
// once. Charges sleep a little, so kills land inside them; each execution
// is appended (synced) to a log outside the store before the handler does
// anything else, and its return likewise.
//
// Once every run has ended and the runners are stopped, it checks:
//   - every top-level run ended as expected (completed with the output the
//     same workflow gives on the memory store without kills, or cancelled
//     when the host's Cancel said so), every child ended (completed unless
//     an ancestor was cancelled), none left running or waiting;
//   - every ledger has seqs 1..n and exactly one terminal status record,
//     the one of the run's status;
//   - the effect log against the ledgers, by what the kernel promises
//     (docs/architecture.md, "Idempotency and replay" and "Concurrency";
//     runtime.Handler: non-local handlers get their STARTED record made
//     durable before they run). Every execution has its attempt's STARTED
//     record in the ledger; no attempt was executed twice; an attempt has
//     at most one end record; an effect is completed at most once, by an
//     attempt that was executed, and no attempt of it started after its
//     completion was in the ledger (a replay after the outcome was durable
//     starts past the effect and never runs it again). An execution whose
//     outcome never became durable may run again under the same key
//     (delivery is at-least-once), but only once it can no longer complete:
//     its runner was killed before the next execution began, its attempt
//     ended (a cancel), or its runner lost the claim (logged); with claims
//     two runners never work on one run at once. Likewise an executed
//     attempt without an end record needs its runner killed after it
//     began, a lost claim or a cancelled run;
//   - no claim is left but those of killed runners (they expire): none of
//     a runner that stopped cleanly, nor of the host.
//
// Sizes (defaults small enough for CI, per store kind: see soakDefaults):
// SOAK_SEED, SOAK_RUNS, SOAK_RUNNERS, SOAK_SECONDS (how long the kills go
// on), applied to every subtest; SOAK_VERBOSE=1 logs what the
// runners and the host logged (warnings and errors). SOAK_NO_CLAIMS=1
// runs every runtime without claims, to see the checks catch two runners
// working on one run at once (the soak is then expected to fail). The seed
// fixes the workload, the kill schedule and the handlers' delays; the
// interleavings are the machine's, so a seed replays a scenario, not a
// schedule.

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", for soakSQLiteClaims

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// The runner process's environment.
const (
	envSoakRunner = "CRASHTEST_SOAK_RUNNER" // set: this process is a runner
	envSoakDir    = "CRASHTEST_SOAK_DIR"
	envSoakStore  = "CRASHTEST_SOAK_STORE"  // soakPostgres or soakSQLiteShared
	envSoakSchema = "CRASHTEST_SOAK_SCHEMA" // soakPostgres: the schema (the server is TEST_POSTGRES_URL)
	envSoakPath   = "CRASHTEST_SOAK_PATH"   // soakSQLiteShared: the database file
	envSoakOwner  = "CRASHTEST_SOAK_OWNER"
	envSoakSeed   = "CRASHTEST_SOAK_CHILD_SEED"
	// envSoakNoClaims (any value) makes every runtime of the soak work
	// without claims: a check of the checks.
	envSoakNoClaims = "SOAK_NO_CLAIMS"
)

// soakClaimsFor returns the claims of a runtime of the soak, nil when
// SOAK_NO_CLAIMS is set.
func soakClaimsFor(owner string) *runtime.Claims {
	if os.Getenv(envSoakNoClaims) != "" {
		return nil
	}
	return &runtime.Claims{Owner: owner, TTL: soakTTL, RenewEvery: soakRenew}
}

// Claim timing of every runtime of the soak: a dead runner's runs are
// taken over after soakTTL.
const (
	soakTTL   = 2 * time.Second
	soakRenew = 200 * time.Millisecond
)

// The store kinds of the soak (the subtests of TestMultiRunnerSoak).
const (
	soakPostgres     = "postgres"
	soakSQLiteShared = "sqlite_shared"
)

// soakStore is the store every process of one soak opens, and how the
// runner processes learn it (env).
type soakStore struct {
	kind   string // soakPostgres or soakSQLiteShared
	url    string // soakPostgres: the server
	schema string // soakPostgres: the schema
	path   string // soakSQLiteShared: the database file
}

// soakStoreFromEnv is the store of a runner process, as its host set it.
func soakStoreFromEnv() soakStore {
	return soakStore{kind: os.Getenv(envSoakStore), url: os.Getenv("TEST_POSTGRES_URL"),
		schema: os.Getenv(envSoakSchema), path: os.Getenv(envSoakPath)}
}

// env is what a runner process needs in its environment to open the store
// (TEST_POSTGRES_URL it inherits).
func (s soakStore) env() []string {
	return []string{envSoakStore + "=" + s.kind, envSoakSchema + "=" + s.schema, envSoakPath + "=" + s.path}
}

// open opens the store, as every process of the soak does.
func (s soakStore) open(ctx context.Context) (store.Store, error) {
	switch s.kind {
	case soakPostgres:
		return postgres.New(ctx, postgres.Config{URL: s.url, Schema: s.schema, MaxConns: 4})
	case soakSQLiteShared:
		return sqlite.New(ctx, sqlite.Config{Path: s.path, Shared: true})
	}
	return nil, fmt.Errorf("unknown soak store kind %q", s.kind)
}

// soakKinds are the kinds of top-level runs, by workflow and by how the
// host treats them.
const (
	kindTimer      = "timer"       // charge, WAIT_UNTIL, charge
	kindAsk        = "ask"         // charge, ASK_USER answered by the host, charge
	kindListenExt  = "listen_ext"  // charge, WAIT_EVENT released by the host's EmitEvent, charge
	kindListenRun  = "listen_run"  // the same, released by an emitter run's EMIT_EVENT
	kindTree       = "tree"        // charge, sync child, async+wait child (with WAIT_UNTIL), charge
	kindTreeCancel = "tree_cancel" // a tree the host cancels at some moment
	kindCancelAsk  = "cancel_ask"  // charge, ASK_USER never answered: cancelled by the host
	kindSlow       = "slow"        // five slow charges in a loop
	kindSlowCancel = "slow_cancel" // the same, cancelled by the host at some moment
)

var soakKindList = []string{kindTimer, kindAsk, kindListenExt, kindListenRun, kindTree, kindTreeCancel,
	kindCancelAsk, kindSlow, kindSlowCancel, kindTimer, kindAsk, kindTree}

func soakWorkflowOf(kind string) string {
	switch kind {
	case kindListenExt, kindListenRun:
		return "soak_listen"
	case kindTreeCancel:
		return "soak_tree"
	case kindSlowCancel:
		return "soak_slow"
	}
	return "soak_" + kind
}

// soakWorkflows are the workflows every runtime of the soak registers.
func soakWorkflows() []*runtime.Workflow {
	n := func(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return fn(run), nil
		}
	}
	charge := func(amount any, slow bool, next, resultKey string) runtime.StepPlan {
		p := map[string]any{"amount": amount}
		if slow {
			p["slow"] = true
		}
		return runtime.Request(&durable.Effect{Type: "charge", Payload: p, ResultKey: resultKey}, next)
	}
	rcpt := func(run *durable.RunState, key string) any {
		m, _ := run.Vars[key].(map[string]any)
		return m["id"]
	}
	waitUntil := func(run *durable.RunState, next string) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
			Payload: map[string]any{"until": run.Vars["until"]}}, next)
	}
	sub := func(run *durable.RunState, key string) any {
		m, _ := run.Vars[key].(map[string]any)
		return m["output"]
	}
	return []*runtime.Workflow{
		{ID: "soak_timer", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a":    n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(1), false, "wait", "a") }),
			"wait": n(func(run *durable.RunState) runtime.StepPlan { return waitUntil(run, "b") }),
			"b":    n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(2), false, "done", "b") }),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"a": rcpt(run, "a"), "b": rcpt(run, "b")})
			}),
		}},
		{ID: "soak_ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(3), false, "ask", "a") }),
			"ask": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "Go on?"}, ResultKey: "answer"}, "b")
			}),
			"b": n(func(run *durable.RunState) runtime.StepPlan {
				answer, _ := run.Vars["answer"].(map[string]any)
				text, _ := answer["text"].(string)
				return charge(int64(100+len(text)), false, "done", "b")
			}),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				answer, _ := run.Vars["answer"].(map[string]any)
				return runtime.Complete(map[string]any{"a": rcpt(run, "a"), "answer": answer["text"], "b": rcpt(run, "b")})
			}),
		}},
		{ID: "soak_listen", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(4), false, "listen", "a") }),
			"listen": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
					Payload: map[string]any{"name": "go", "scope": "session"}, ResultKey: "evt"}, "b")
			}),
			"b": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(5), false, "done", "b") }),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				evt, _ := run.Vars["evt"].(map[string]any)
				payload, _ := evt["payload"].(map[string]any)
				return runtime.Complete(map[string]any{"a": rcpt(run, "a"), "value": payload["value"], "b": rcpt(run, "b")})
			}),
		}},
		{ID: "soak_emit", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(6), false, "emit", "a") }),
			"emit": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent,
					Payload:   map[string]any{"name": "go", "scope": "session", "payload": map[string]any{"value": "hello"}},
					ResultKey: "sent"}, "done")
			}),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				// How many listeners the emit reached is left out: an emit
				// replayed after a kill (at-least-once) finds none left.
				return runtime.Complete(map[string]any{"a": rcpt(run, "a")})
			}),
		}},
		{ID: "soak_tree", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(7), false, "sync", "a") }),
			"sync": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload:   map[string]any{"workflow_id": "soak_leaf", "vars": map[string]any{"n": int64(8)}},
					ResultKey: "s1"}, "async")
			}),
			"async": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": "soak_leaf_wait", "async": true, "wait": true,
						"vars": map[string]any{"n": int64(9), "until": run.Vars["until"]}},
					ResultKey: "s2"}, "b")
			}),
			"b": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(10), false, "done", "b") }),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"a": rcpt(run, "a"), "sync": sub(run, "s1"),
					"async": sub(run, "s2"), "b": rcpt(run, "b")})
			}),
		}},
		{ID: "soak_leaf", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(run.Vars["n"], false, "done", "r") }),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"r": rcpt(run, "r")})
			}),
		}},
		{ID: "soak_leaf_wait", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a":    n(func(run *durable.RunState) runtime.StepPlan { return charge(run.Vars["n"], true, "wait", "r") }),
			"wait": n(func(run *durable.RunState) runtime.StepPlan { return waitUntil(run, "b") }),
			"b": n(func(run *durable.RunState) runtime.StepPlan {
				v, _ := runtime.AsInt(run.Vars["n"])
				return charge(v+1000, false, "done", "r2")
			}),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"r": rcpt(run, "r"), "r2": rcpt(run, "r2")})
			}),
		}},
		{ID: "soak_cancel_ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(11), false, "ask", "a") }),
			"ask": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "Never answered"}, ResultKey: "answer"}, "done")
			}),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"answered": true})
			}),
		}},
		{ID: "soak_slow", Entry: "loop", Nodes: map[string]runtime.NodeFunc{
			"loop": n(func(run *durable.RunState) runtime.StepPlan { return charge(int64(12), true, "count", "r") }),
			"count": n(func(run *durable.RunState) runtime.StepPlan {
				loops, _ := runtime.AsInt(run.Vars["loops"])
				run.Vars["loops"] = loops + 1
				if loops+1 < 5 {
					return runtime.Next("loop")
				}
				return runtime.Next("done")
			}),
			"done": n(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"loops": run.Vars["loops"], "r": rcpt(run, "r")})
			}),
		}},
	}
}

// soakRuntime builds a runtime of the soak over st, with the soak's
// workflows and extra ones. Its "charge" handler calls executed before
// anything else, then takes delay(slow) (honouring its context, as a real
// call would), then calls returned.
func soakRuntime(st store.Store, claims *runtime.Claims, logger *slog.Logger,
	executed func(req *runtime.EffectRequest), delay func(slow bool) time.Duration, returned func(req *runtime.EffectRequest),
	extra ...*runtime.Workflow) (*runtime.Runtime, error) {
	reg, err := runtime.NewRegistry(append(soakWorkflows(), extra...)...)
	if err != nil {
		return nil, err
	}
	charge := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		executed(req)
		slow, _ := req.Effect.Payload["slow"].(bool)
		if d := delay(slow); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return runtime.Outcome{}, context.Cause(ctx)
			}
		}
		returned(req)
		return runtime.Completed(map[string]any{"id": fmt.Sprintf("rcpt-%v", req.Effect.Payload["amount"])}), nil
	}
	return runtime.New(runtime.Config{Store: st, Registry: reg, Claims: claims, Logger: logger,
		Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: charge}}})
}

// soakEffectLog appends the executions of charges to dir/effects.log,
// synced: "exec <run> <key> <step> <attempt> <pid> <unix ns>" when the
// handler is entered and "ret …" likewise when it returns a completion.
type soakEffectLog struct {
	mu  sync.Mutex
	f   *os.File
	pid int
}

func openSoakEffectLog(dir string) (*soakEffectLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, "effects.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &soakEffectLog{f: f, pid: os.Getpid()}, nil
}

func (l *soakEffectLog) write(verb string, req *runtime.EffectRequest) {
	line := fmt.Sprintf("%s %s %s %s %d %d %d\n", verb, req.Run.RunID, req.IdempotencyKey, req.StepID, req.Attempt, l.pid,
		time.Now().UnixNano())
	l.mu.Lock()
	defer l.mu.Unlock()
	// One write with O_APPEND: lines of several processes do not mix.
	if _, err := l.f.WriteString(line); err != nil {
		panic(fmt.Sprintf("effect log: %v", err))
	}
	if err := l.f.Sync(); err != nil {
		panic(fmt.Sprintf("effect log: %v", err))
	}
}

func (l *soakEffectLog) executed(req *runtime.EffectRequest) { l.write("exec", req) }
func (l *soakEffectLog) returned(req *runtime.EffectRequest) { l.write("ret", req) }

// soakDelay returns the charges' delays: a few milliseconds, more for
// slow ones, so that kills land inside handlers.
func soakDelay(seed uint64) func(bool) time.Duration {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0x50a4))
	return func(slow bool) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		if slow {
			return time.Duration(60+r.IntN(90)) * time.Millisecond
		}
		return time.Duration(5+r.IntN(35)) * time.Millisecond
	}
}

// TestMultiRunnerSoakRunnerProcess is the runner process of
// TestMultiRunnerSoak; it is skipped when run as a test.
func TestMultiRunnerSoakRunnerProcess(t *testing.T) {
	if os.Getenv(envSoakRunner) == "" {
		return // the runner process of TestMultiRunnerSoak, when started by it (os/exec's helper-process idiom)
	}
	os.Exit(soakRunnerMain())
}

// soakRunnerMain runs a runtime and a scheduler on the soak's store until
// its stdin closes (a clean stop) or it is killed. It prints "ready" once
// its scheduler runs.
func soakRunnerMain() int {
	ctx := context.Background()
	dir, owner := os.Getenv(envSoakDir), os.Getenv(envSoakOwner)
	seed, _ := strconv.ParseUint(os.Getenv(envSoakSeed), 10, 64)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("owner", owner)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	st, err := soakStoreFromEnv().open(ctx)
	if err != nil {
		return fail(err)
	}
	elog, err := openSoakEffectLog(dir)
	if err != nil {
		return fail(err)
	}
	var extra []*runtime.Workflow
	if os.Getenv(envSoakEvents) != "" {
		extra = evWorkflows() // a runner of TestMultiRunnerSoakEvents
	}
	rt, err := soakRuntime(st, soakClaimsFor(owner), logger,
		elog.executed, soakDelay(seed), elog.returned, extra...)
	if err != nil {
		return fail(err)
	}
	sch, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 100 * time.Millisecond,
		RecoverInterval: 250 * time.Millisecond, Logger: logger})
	if err != nil {
		return fail(err)
	}
	if err := sch.Start(ctx); err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test closes it
	sch.Stop()
	for _, e := range sch.Stats().Errors {
		fmt.Fprintln(os.Stderr, "scheduler error:", e)
	}
	if err := st.Close(); err != nil {
		return fail(err)
	}
	fmt.Println("stopped")
	return 0
}

// soakRunner is one runner process.
type soakRunner struct {
	owner string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed once the process was waited for
	err   error         // its exit, once done
}

// soakFleet starts, kills and stops the runner processes.
type soakFleet struct {
	t        *testing.T
	dir      string
	store    soakStore
	env      []string // added to the runners' environment
	seed     uint64
	gen      int
	slots    []*soakRunner
	killed   map[string]int    // owner → pid, of the runners killed
	killedAt map[int]time.Time // pid → when the kill was sent
	pids     map[int]string    // pid → owner, of every runner
	clean    []string          // owners stopped cleanly
}

func (f *soakFleet) start(slot int) {
	f.t.Helper()
	f.gen++
	owner := fmt.Sprintf("runner-%d-%d", slot, f.gen)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMultiRunnerSoakRunnerProcess$")
	cmd.Env = append(os.Environ(), envSoakRunner+"=1", envSoakDir+"="+f.dir,
		envSoakOwner+"="+owner, envSoakSeed+"="+strconv.FormatUint(f.seed+uint64(f.gen), 10))
	cmd.Env = append(cmd.Env, f.store.env()...)
	cmd.Env = append(cmd.Env, f.env...)
	stderr, err := os.OpenFile(filepath.Join(f.dir, owner+".stderr"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	r := &soakRunner{owner: owner, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(out))
		r.err = cmd.Wait()
		_ = stderr.Close()
		close(r.done)
	}()
	f.pids[cmd.Process.Pid] = owner
	if slot < len(f.slots) {
		f.slots[slot] = r
	} else {
		f.slots = append(f.slots, r)
	}
}

// kill kills the runner of slot (SIGKILL) and starts another in its place.
func (f *soakFleet) kill(slot int) {
	r := f.slots[slot]
	f.killedAt[r.cmd.Process.Pid] = time.Now()
	_ = r.cmd.Process.Kill()
	<-r.done
	f.killed[r.owner] = r.cmd.Process.Pid
	f.start(slot)
}

// stop stops every runner cleanly and checks each exited by itself.
func (f *soakFleet) stop() {
	f.t.Helper()
	for _, r := range f.slots {
		_ = r.stdin.Close()
	}
	for _, r := range f.slots {
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
			f.t.Errorf("runner %s did not stop within a minute of its stdin closing", r.owner)
			continue
		}
		if r.err != nil {
			f.t.Errorf("runner %s ended with %v; stderr: %s", r.owner, r.err, f.stderr(r.owner))
			continue
		}
		f.clean = append(f.clean, r.owner)
	}
}

// inHandler returns the slot of the runner that entered a charge handler
// last and has not returned from it (by the effect log), or -1.
func (f *soakFleet) inHandler() int {
	data, err := os.ReadFile(filepath.Join(f.dir, "effects.log"))
	if err != nil {
		return -1
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	returned := map[string]bool{}
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-50; i-- {
		fields := strings.Fields(lines[i])
		if len(fields) != 7 {
			continue
		}
		if fields[0] == "ret" {
			returned[fields[3]] = true
			continue
		}
		if returned[fields[3]] {
			continue
		}
		pid, _ := strconv.Atoi(fields[5])
		for slot, r := range f.slots {
			if r.cmd.Process.Pid == pid {
				return slot
			}
		}
	}
	return -1
}

// killAll kills every runner (a test that fails before the end).
func (f *soakFleet) killAll() {
	for _, r := range f.slots {
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (f *soakFleet) stderr(owner string) string {
	b, _ := os.ReadFile(filepath.Join(f.dir, owner+".stderr"))
	return string(b)
}

// soakRun is a top-level run the host drives.
type soakRun struct {
	id, kind, session string
	startAt           time.Duration // after the soak's start
	cancelAt          time.Duration // kindTreeCancel, kindSlowCancel: after its start
	started           time.Time
	done              bool              // cancelled by the host, or its Cancel found it ended
	cancelled         durable.RunStatus // the status the host's Cancel returned
	emitter           bool              // kindListenRun: its emitter was started
	// A host pause: at pauseAt after its start (0: none), lifted with
	// ResumeRun pauseFor later.
	pauseAt, pauseFor time.Duration
	pausedAt          time.Time // zero until the pause returned
	pauseDone         bool      // the pause was lifted (or found the run ended)
}

// soakEnvInt reads a positive size from the environment.
func soakEnvInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}

// soakSizes are the default sizes of a soak, by store kind.
type soakSizes struct{ runs, runners, seconds int }

// soakDefaults keep each subtest within CI's means on a 2-core machine,
// race detector included. The sqlite_shared soak runs in every plain
// "go test ./..." (it needs no server), so it is the shorter one.
var soakDefaults = map[string]soakSizes{
	soakPostgres:     {runs: 48, runners: 3, seconds: 8},
	soakSQLiteShared: {runs: 32, runners: 3, seconds: 6},
}

func TestMultiRunnerSoak(t *testing.T) { soakOnEachBackend(t, "soak", multiRunnerSoak) }

// soakOnEachBackend runs soak on PostgreSQL (a fresh schema named after
// prefix) and on a shared SQLite file.
func soakOnEachBackend(t *testing.T, prefix string, soak func(t *testing.T, kind string, fresh func(suffix uint32) soakStore)) {
	t.Run(soakPostgres, func(t *testing.T) {
		url := os.Getenv("TEST_POSTGRES_URL")
		if url == "" {
			t.Skip("set TEST_POSTGRES_URL=postgres://… to run the multi-runner soak; CI starts a server with .ci/postgres.sh")
		}
		soak(t, soakPostgres, func(suffix uint32) soakStore {
			schema := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), suffix)
			t.Cleanup(func() {
				if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
					t.Error(err)
				}
			})
			return soakStore{kind: soakPostgres, url: url, schema: schema}
		})
	})
	t.Run(soakSQLiteShared, func(t *testing.T) {
		soak(t, soakSQLiteShared, func(uint32) soakStore {
			return soakStore{kind: soakSQLiteShared, path: filepath.Join(t.TempDir(), "soak.sqlite3")}
		})
	})
}

// multiRunnerSoak is the soak on one store kind; fresh returns a fresh
// store of that kind, given a random suffix for its name. The suffix is
// drawn from the seed's generator whatever the kind, so that a seed at the
// same sizes gives either kind the same workload.
func multiRunnerSoak(t *testing.T, kind string, fresh func(suffix uint32) soakStore) {
	seed := rand.Uint64() >> 1
	if s := os.Getenv("SOAK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", s, err)
		}
		seed = v
	}
	def := soakDefaults[kind]
	runs := soakEnvInt(t, "SOAK_RUNS", def.runs)
	runners := soakEnvInt(t, "SOAK_RUNNERS", def.runners)
	soakFor := time.Duration(soakEnvInt(t, "SOAK_SECONDS", def.seconds)) * time.Second
	t.Logf("%s: seed %d, %d runs, %d runners, kills for %v (replay with SOAK_SEED=%d SOAK_RUNS=%d SOAK_RUNNERS=%d SOAK_SECONDS=%d "+
		"go test -run '^TestMultiRunnerSoak$/^%s$')",
		kind, seed, runs, runners, soakFor, seed, runs, runners, int(soakFor/time.Second), kind)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	want := soakReference(t)

	ctx := context.Background()
	dir := t.TempDir()
	where := fresh(rng.Uint32())
	st, err := where.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	elog, err := openSoakEffectLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer elog.f.Close()
	// The host's runtime: it resumes, emits and cancels, claiming runs as
	// the runners do (an EmitEvent drives the listeners it resumes).
	hostLog, err := os.Create(filepath.Join(dir, "host.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer hostLog.Close()
	host, err := soakRuntime(st, soakClaimsFor("host"),
		slog.New(slog.NewTextHandler(hostLog, &slog.HandlerOptions{Level: slog.LevelWarn})).With("owner", "host"),
		elog.executed, soakDelay(seed), elog.returned)
	if err != nil {
		t.Fatal(err)
	}

	fleet := &soakFleet{t: t, dir: dir, store: where, seed: seed, killed: map[string]int{},
		killedAt: map[int]time.Time{}, pids: map[int]string{os.Getpid(): "host"}}
	for i := range runners {
		fleet.start(i)
	}
	finished := false
	defer func() {
		if !finished {
			fleet.killAll()
		}
	}()

	// The workload: runs of random kinds, started over the first 85% of
	// the soak.
	plan := make([]*soakRun, runs)
	for i := range plan {
		kind := soakKindList[rng.IntN(len(soakKindList))]
		r := &soakRun{id: fmt.Sprintf("%s-%03d", kind, i), kind: kind, session: fmt.Sprintf("sess-%03d", i),
			startAt: time.Duration(rng.Int64N(int64(soakFor) * 85 / 100))}
		if (kind == kindTimer || kind == kindTree || kind == kindSlow) && rng.IntN(2) == 0 {
			r.pauseAt = time.Duration(1+rng.IntN(900)) * time.Millisecond
			r.pauseFor = time.Duration(rng.IntN(500)) * time.Millisecond
		}
		switch kind {
		case kindTreeCancel:
			r.cancelAt = time.Duration(100+rng.IntN(1500)) * time.Millisecond
		case kindSlowCancel:
			r.cancelAt = time.Duration(rng.IntN(1000)) * time.Millisecond
		}
		plan[i] = r
	}
	slices.SortFunc(plan, func(a, b *soakRun) int { return cmp.Compare(a.startAt, b.startAt) })
	byID := map[string]*soakRun{}
	for _, r := range plan {
		byID[r.id] = r
	}

	begin := time.Now()
	nextKill := time.Duration(200+rng.IntN(500)) * time.Millisecond
	kills, inHandlerKills, pauses := 0, 0, 0
	deadline := begin.Add(soakFor + 3*time.Minute)
	next := 0
	var hostErrs []string
	hostErr := func(format string, args ...any) {
		if len(hostErrs) < 50 {
			hostErrs = append(hostErrs, fmt.Sprintf(format, args...))
		}
	}
	for {
		now := time.Since(begin)
		// Start the runs whose time has come.
		for next < len(plan) && plan[next].startAt <= now {
			r := plan[next]
			next++
			vars := map[string]any{}
			if r.kind == kindTimer || r.kind == kindTree || r.kind == kindTreeCancel {
				vars["until"] = durable.FormatTime(time.Now().Add(time.Duration(150+rng.IntN(600)) * time.Millisecond))
			}
			if _, err := host.Start(ctx, runtime.StartParams{WorkflowID: soakWorkflowOf(r.kind), RunID: r.id,
				SessionID: r.session, Vars: vars}); err != nil {
				t.Fatalf("starting %s: %v", r.id, err)
			}
			r.started = time.Now()
		}
		// Kill a runner now and then, while the soak lasts.
		if now >= nextKill && now < soakFor {
			switch p := rng.IntN(10); {
			case p < 5:
				// Into a handler: the runner of the latest charge that has
				// not returned yet, if any.
				if slot := fleet.inHandler(); slot >= 0 {
					fleet.kill(slot)
					kills++
					inHandlerKills++
					break
				}
				fallthrough
			case p < 9:
				fleet.kill(rng.IntN(len(fleet.slots)))
				kills++
			default:
				// Every runner at once: the runs are taken over by new ones
				// after their claims expire.
				for slot := range fleet.slots {
					fleet.kill(slot)
					kills++
				}
			}
			nextKill = now + time.Duration(150+rng.IntN(600))*time.Millisecond
		}
		// Pauses and their lifting.
		for _, r := range plan[:next] {
			switch {
			case r.pauseAt == 0 || r.pauseDone:
			case r.pausedAt.IsZero() && time.Since(r.started) >= r.pauseAt:
				got, err := host.Pause(ctx, r.id, "host pause")
				switch {
				case errors.Is(err, runtime.ErrRunClaimed):
					// Held by a runner (a dead one, say): try again.
				case err != nil:
					hostErr("pause %s: %v", r.id, err)
				case got.Status.Terminal():
					r.pauseDone = true
				default:
					r.pausedAt = time.Now()
					pauses++
				}
			case !r.pausedAt.IsZero() && time.Since(r.pausedAt) >= r.pauseFor:
				if _, err := host.ResumeRun(ctx, r.id); err != nil {
					if !errors.Is(err, runtime.ErrRunClaimed) {
						hostErr("resume-run %s: %v", r.id, err)
					}
					continue
				}
				r.pauseDone = true
			}
		}
		// Cancels whose time has come.
		for _, r := range plan[:next] {
			if r.done || r.cancelAt == 0 || time.Since(r.started) < r.cancelAt {
				continue
			}
			got, err := host.Cancel(ctx, r.id, "host cancel")
			if err != nil {
				hostErr("cancel %s: %v", r.id, err)
				continue
			}
			if !got.Status.Terminal() {
				t.Errorf("Cancel(%s) returned %s, not an ended run", r.id, got.Status)
			}
			r.done, r.cancelled = true, got.Status
		}
		// Answer, release and cancel the waiting runs.
		waiting, err := st.RunList(ctx, &store.RunListParams{Status: durable.RunWaiting, Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range waiting {
			r := byID[w.RunID]
			if r == nil || w.Waiting == nil {
				continue
			}
			switch {
			case r.kind == kindAsk && w.Waiting.Reason == durable.WaitUser:
				_, err := host.Resume(ctx, runtime.ResumeParams{RunID: r.id, WaitKey: w.Waiting.WaitKey,
					Payload: map[string]any{"text": "yes"}, MaxSteps: -1})
				var stale *runtime.StaleResumeError
				if err != nil && !errors.As(err, &stale) && !errors.Is(err, runtime.ErrRunClaimed) {
					hostErr("resume %s: %v", r.id, err)
				}
			case r.kind == kindCancelAsk && w.Waiting.Reason == durable.WaitUser && !r.done:
				got, err := host.Cancel(ctx, r.id, "host cancel")
				if err != nil {
					hostErr("cancel %s: %v", r.id, err)
					continue
				}
				r.done, r.cancelled = true, got.Status
			case r.kind == kindListenExt && w.Waiting.Reason == durable.WaitEvent:
				if _, err := host.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "session", SessionID: r.session,
					Payload: map[string]any{"value": "hello"}}); err != nil {
					hostErr("emit to %s: %v", r.id, err)
				}
			case r.kind == kindListenRun && w.Waiting.Reason == durable.WaitEvent && !r.emitter:
				if _, err := host.Start(ctx, runtime.StartParams{WorkflowID: "soak_emit", RunID: "emit-" + r.id,
					SessionID: r.session}); err != nil {
					t.Fatalf("starting the emitter of %s: %v", r.id, err)
				}
				r.emitter = true
			}
		}
		if next == len(plan) && now >= soakFor && soakQuiet(ctx, t, st, plan) {
			break
		}
		if time.Now().After(deadline) {
			soakDump(ctx, t, st, where)
			t.Fatalf("seed %d: runs still unfinished %v after the kills stopped; %d kills", seed, time.Since(begin)-soakFor, kills)
		}
		time.Sleep(40 * time.Millisecond)
	}
	quiet := time.Since(begin)
	fleet.stop()
	finished = true
	for _, e := range hostErrs {
		t.Logf("host: %s", e)
	}
	t.Logf("seed %d: %d runs over %v with %d kills (%d aimed at a handler in progress), %d host pauses; quiet after %v",
		seed, runs, soakFor, kills, inHandlerKills, pauses, quiet.Round(time.Millisecond))

	soakCheck(ctx, t, st, where, dir, plan, want, fleet)
	if t.Failed() || os.Getenv("SOAK_VERBOSE") != "" {
		t.Logf("seed %d: the logs of the runners and the host", seed)
		if s := fleet.stderr("host"); s != "" {
			t.Logf("stderr of host:\n%s", s)
		}
		for owner := range fleet.killed {
			if s := fleet.stderr(owner); s != "" {
				t.Logf("stderr of %s:\n%s", owner, s)
			}
		}
		for _, owner := range fleet.clean {
			if s := fleet.stderr(owner); s != "" {
				t.Logf("stderr of %s:\n%s", owner, s)
			}
		}
	}
}

// soakQuiet reports whether every run of the store (top-level runs of the
// plan, emitters, children) has ended and every planned run exists.
func soakQuiet(ctx context.Context, t *testing.T, st store.Store, plan []*soakRun) bool {
	all, err := st.RunList(ctx, &store.RunListParams{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < len(plan) {
		return false
	}
	for _, r := range all {
		if !r.Status.Terminal() {
			return false
		}
	}
	return true
}

// soakDump logs every unfinished run with its claim, for a hung soak.
func soakDump(ctx context.Context, t *testing.T, st store.Store, where soakStore) {
	claims := soakClaims(ctx, t, where)
	all, err := st.RunList(ctx, &store.RunListParams{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Status.Terminal() {
			continue
		}
		w := ""
		if r.Waiting != nil {
			w = fmt.Sprintf(" waiting %s %q until %v", r.Waiting.Reason, r.Waiting.WaitKey, r.Waiting.Until)
		}
		c := claims[r.RunID]
		t.Logf("unfinished: %s (%s, parent %q) %s at %s%s; claim %+v", r.RunID, r.WorkflowID, r.ParentRunID, r.Status, r.CurrentNode, w, c)
	}
}

type soakClaim struct {
	owner string
	live  bool
}

// soakClaims reads the store's claims table (the stores have no API that
// lists claims).
func soakClaims(ctx context.Context, t *testing.T, where soakStore) map[string]soakClaim {
	if where.kind == soakSQLiteShared {
		return soakSQLiteClaims(ctx, t, where.path)
	}
	conn, err := pgx.Connect(ctx, where.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT run_id, owner, expires_at > clock_timestamp() FROM "+
		pgx.Identifier{where.schema, "run_claims"}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]soakClaim{}
	for rows.Next() {
		var id string
		var c soakClaim
		if err := rows.Scan(&id, &c.owner, &c.live); err != nil {
			t.Fatal(err)
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// soakSQLiteClaims reads the claims table of the SQLite file at path, on a
// read-only connection of its own. A claim is live while its expires_at,
// text in durable.FormatTime's form, sorts after the current time in that
// form: the comparison the store's RunClaim makes (text order is time
// order there).
func soakSQLiteClaims(ctx context.Context, t *testing.T, path string) map[string]soakClaim {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT run_id, owner, expires_at FROM run_claims")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	now := durable.FormatTime(time.Now())
	out := map[string]soakClaim{}
	for rows.Next() {
		var id, expires string
		var c soakClaim
		if err := rows.Scan(&id, &c.owner, &expires); err != nil {
			t.Fatal(err)
		}
		c.live = expires > now
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// soakExec is one line of the effect log.
type soakExec struct {
	verb, run, key, step string
	attempt, pid         int
	at                   int64 // unix ns
}

func readSoakEffectLog(t *testing.T, dir string) []soakExec {
	data, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []soakExec
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 7 {
			t.Fatalf("effect log: malformed line %q", line)
		}
		attempt, _ := strconv.Atoi(f[4])
		pid, _ := strconv.Atoi(f[5])
		at, _ := strconv.ParseInt(f[6], 10, 64)
		out = append(out, soakExec{verb: f[0], run: f[1], key: f[2], step: f[3], attempt: attempt, pid: pid, at: at})
	}
	return out
}

// soakCheck checks the invariants once every run has ended and every
// runner stopped.
func soakCheck(ctx context.Context, t *testing.T, st store.Store, where soakStore, dir string,
	plan []*soakRun, want map[string]map[string]any, fleet *soakFleet) {
	all, err := st.RunList(ctx, &store.RunListParams{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]*durable.RunState{}
	for _, r := range all {
		runs[r.RunID] = r
	}

	// Every run ended as expected.
	for _, p := range plan {
		r := runs[p.id]
		if r == nil {
			t.Errorf("run %s (%s) was started but is not in the store", p.id, p.kind)
			continue
		}
		wantStatus := durable.RunCompleted
		switch {
		case p.kind == kindCancelAsk:
			wantStatus = durable.RunCancelled
		case p.done:
			wantStatus = p.cancelled
		}
		if r.Status != wantStatus {
			t.Errorf("run %s (%s): %s (%q), want %s", p.id, p.kind, r.Status, r.Error, wantStatus)
			continue
		}
		if r.Status == durable.RunCompleted {
			if !reflect.DeepEqual(normalize(r.Output), normalize(want[p.kind])) {
				t.Errorf("run %s (%s): output %v, want %v (the run without kills)", p.id, p.kind, r.Output, want[p.kind])
			}
		}
		if p.kind == kindListenRun {
			e := runs["emit-"+p.id]
			if e == nil || e.Status != durable.RunCompleted || !reflect.DeepEqual(normalize(e.Output), normalize(want["emit"])) {
				t.Errorf("emitter of %s: %v", p.id, e)
			}
		}
	}
	for _, r := range all {
		if !r.Status.Terminal() {
			t.Errorf("run %s (%s) left %s", r.RunID, r.WorkflowID, r.Status)
			continue
		}
		if r.ParentRunID == "" {
			continue
		}
		// A child ends completed unless an ancestor was cancelled.
		underCancel := false
		for p := runs[r.ParentRunID]; p != nil; p = runs[p.ParentRunID] {
			if p.Status == durable.RunCancelled {
				underCancel = true
			}
			if p.ParentRunID == "" {
				break
			}
		}
		if !underCancel && r.Status != durable.RunCompleted {
			t.Errorf("child %s (%s) of %s: %s (%q), want completed", r.RunID, r.WorkflowID, r.ParentRunID, r.Status, r.Error)
		}
	}

	// Ledgers: seqs 1..n, one terminal record, charges against the log.
	execs := readSoakEffectLog(t, dir)
	type attemptRec struct {
		started *durable.StepRecord
		ends    []*durable.StepRecord
	}
	attempts := map[string]*attemptRec{}          // step id → its records
	completed := map[string]*durable.StepRecord{} // key → first completion
	keyRun := map[string]string{}
	completions := 0
	for _, r := range all {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: r.RunID})
		if err != nil {
			t.Fatal(err)
		}
		terminal := 0
		for i, rec := range recs {
			if rec.Seq != int64(i+1) {
				t.Errorf("ledger of %s: record %d has seq %d", r.RunID, i, rec.Seq)
			}
			if s, ok := strings.CutPrefix(rec.IdempotencyKey, "system:terminal_status:"); ok {
				terminal++
				if s != string(r.Status) {
					t.Errorf("ledger of %s: terminal record %q for a %s run", r.RunID, rec.IdempotencyKey, r.Status)
				}
			}
			if rec.Effect == nil || rec.Effect.Type != "charge" {
				continue
			}
			keyRun[rec.IdempotencyKey] = r.RunID
			a := attempts[rec.StepID]
			if a == nil {
				a = &attemptRec{}
				attempts[rec.StepID] = a
			}
			if rec.Status == durable.StepStarted {
				if a.started != nil {
					t.Errorf("ledger of %s: two STARTED records for step %s", r.RunID, rec.StepID)
				}
				a.started = rec
				continue
			}
			a.ends = append(a.ends, rec)
			if rec.Status == durable.StepCompleted {
				completions++
				if prev := completed[rec.IdempotencyKey]; prev != nil {
					t.Errorf("run %s: effect %s completed twice (seq %d, then seq %d)", r.RunID, rec.IdempotencyKey, prev.Seq, rec.Seq)
				} else {
					completed[rec.IdempotencyKey] = rec
				}
			}
		}
		if terminal != 1 {
			t.Errorf("ledger of %s (%s): %d terminal status records, want exactly 1", r.RunID, r.Status, terminal)
		}
	}
	for step, a := range attempts {
		if a.started == nil {
			t.Errorf("step %s: end records without a STARTED record", step)
		}
		if len(a.ends) > 1 {
			t.Errorf("step %s of %s: %d end records", step, a.ends[0].RunID, len(a.ends))
		}
	}

	returned := map[string]bool{}
	for _, e := range execs {
		if e.verb == "ret" {
			returned[e.step] = true
		}
	}
	executedSteps := map[string]soakExec{}
	perKey := map[string][]soakExec{}
	insideHandler, reruns, rerunsLost := 0, 0, 0
	for _, e := range execs {
		if e.verb != "exec" {
			continue
		}
		if prev, ok := executedSteps[e.step]; ok {
			t.Errorf("attempt %s of effect %s (run %s) executed twice: by pid %d and by pid %d", e.step, e.key, e.run, prev.pid, e.pid)
		}
		executedSteps[e.step] = e
		perKey[e.key] = append(perKey[e.key], e)
		a := attempts[e.step]
		if a == nil || a.started == nil {
			t.Errorf("run %s: effect %s executed (attempt %s, pid %d) without its STARTED record in the ledger", e.run, e.key, e.step, e.pid)
			continue
		}
		if a.started.IdempotencyKey != e.key {
			t.Errorf("run %s: attempt %s executed with key %s, recorded with %s", e.run, e.step, e.key, a.started.IdempotencyKey)
		}
		if c := completed[e.key]; c != nil && a.started.Seq > c.Seq {
			t.Errorf("run %s: effect %s executed again (attempt %s, seq %d, pid %d) after its completion was durable (seq %d, attempt %s)",
				e.run, e.key, e.step, a.started.Seq, e.pid, c.Seq, c.StepID)
		}
	}
	lostClaims := soakLostClaims(t, dir)
	// An attempt executed without an end record in the ledger: its runner
	// must have been killed after it began (or lost the claim), or the run
	// was cancelled (the cancel took the run from its runner).
	cancelled := func(id string) bool {
		for r := runs[id]; r != nil; r = runs[r.ParentRunID] {
			if r.Status == durable.RunCancelled {
				return true
			}
			if r.ParentRunID == "" {
				break
			}
		}
		return false
	}
	for step, e := range executedSteps {
		a := attempts[step]
		if a == nil || len(a.ends) > 0 {
			continue
		}
		switch k, killed := fleet.killedAt[e.pid]; {
		case killed && k.UnixNano() > e.at:
			if !returned[step] {
				insideHandler++ // killed inside the handler
			}
		case lostClaims[fleet.pids[e.pid]+" "+e.run], cancelled(e.run):
		default:
			t.Errorf("run %s (%s): attempt %s of effect %s executed by %s (returned: %v) has no end record, "+
				"though its runner was not killed after it began, kept the claim, and the run was not cancelled",
				e.run, runs[e.run].Status, step, e.key, fleet.pids[e.pid], returned[step])
		}
	}
	for key, es := range perKey {
		if len(es) < 2 {
			continue
		}
		reruns += len(es) - 1
		// Why was it run more than once? With claims two runners never
		// work on one run at once, so each execution but the last must
		// have ended before the next began: its runner was killed before
		// the next execution started, its attempt ended without a
		// completion (a cancel), or its runner lost the run's claim (it
		// stalled for a whole TTL, or a cancel took the run). A completed
		// execution followed by another is caught here too (and by the
		// seq check above when the completion was durable first).
		slices.SortFunc(es, func(a, b soakExec) int { return cmp.Compare(a.at, b.at) })
		for i, e := range es[:len(es)-1] {
			nx := es[i+1]
			if k, ok := fleet.killedAt[e.pid]; ok && nx.at > k.UnixNano() {
				continue
			}
			if a := attempts[e.step]; a != nil && len(a.ends) > 0 && a.ends[0].Status != durable.StepCompleted {
				continue
			}
			if lostClaims[fleet.pids[e.pid]+" "+e.run] {
				rerunsLost++
				t.Logf("effect %s of %s ran again (attempt %s, %s) after %s lost the claim during attempt %s",
					key, e.run, nx.step, fleet.pids[nx.pid], fleet.pids[e.pid], e.step)
				continue
			}
			t.Errorf("effect %s of %s: attempt %s (%s) executed while attempt %s (%s) could still complete: "+
				"its runner was not killed before, the attempt did not end, the claim was not lost",
				key, e.run, nx.step, fleet.pids[nx.pid], e.step, fleet.pids[e.pid])
		}
	}
	for key, c := range completed {
		if _, ok := executedSteps[c.StepID]; !ok {
			t.Errorf("run %s: effect %s completed by attempt %s, which the handler never executed", keyRun[key], key, c.StepID)
		}
	}

	// Claims: none of a runner that stopped cleanly (nor the host's).
	cleanOwners := map[string]bool{"host": true}
	for _, o := range fleet.clean {
		cleanOwners[o] = true
	}
	stale := 0
	for id, c := range soakClaims(ctx, t, where) {
		_, killed := fleet.killed[c.owner]
		switch {
		case cleanOwners[c.owner]:
			t.Errorf("run %s: claim of %s (live: %v) left behind though it stopped cleanly", id, c.owner, c.live)
		case !killed:
			t.Errorf("run %s: claimed by %s (live: %v), no runner of the soak", id, c.owner, c.live)
		default:
			// A runner killed while it held the claim (on a run it found
			// nothing to do on, or the run's next holder would have
			// replaced it): it expires after the TTL.
			stale++
		}
	}
	t.Logf("%d runs in the store, %d charge executions for %d completions, %d repeated (%d after a lost claim), "+
		"%d executions interrupted by a kill, %d claims of killed runners left",
		len(all), len(executedSteps), completions, reruns, rerunsLost, insideHandler, stale)
}

// soakLostClaims returns "<owner> <run id>" for every claim a runtime of
// the soak reported lost (its log line "run claim lost to another
// runner").
func soakLostClaims(t *testing.T, dir string) map[string]bool {
	files, err := filepath.Glob(filepath.Join(dir, "*.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, "claim lost") {
				continue
			}
			var owner, run string
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "owner="); ok {
					owner = v
				}
				if v, ok := strings.CutPrefix(f, "run_id="); ok {
					run = v
				}
			}
			out[owner+" "+run] = true
		}
	}
	return out
}

// soakReference runs each kind once on the memory store, without kills
// and without claims, and returns the outputs by kind ("emit": the
// emitter's).
func soakReference(t *testing.T) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	nop := func(*runtime.EffectRequest) {}
	rt, err := soakRuntime(st, nil, nil, nop, func(bool) time.Duration { return 0 }, nop)
	if err != nil {
		t.Fatal(err)
	}
	past := durable.FormatTime(time.Now().Add(-time.Hour))
	out := map[string]map[string]any{}
	for _, kind := range []string{kindTimer, kindAsk, kindListenExt, kindListenRun, kindTree, kindSlow} {
		id, session := "ref-"+kind, "ref-sess-"+kind
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: soakWorkflowOf(kind), RunID: id, SessionID: session,
			Vars: map[string]any{"until": past}}); err != nil {
			t.Fatal(err)
		}
		var run *durable.RunState
		for range 10 {
			if run, err = rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
				t.Fatal(err)
			}
			if run.Status != durable.RunWaiting {
				continue
			}
			switch run.Waiting.Reason {
			case durable.WaitUser:
				_, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
			case durable.WaitEvent:
				if kind == kindListenExt {
					_, err = rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "session", SessionID: session,
						Payload: map[string]any{"value": "hello"}})
					break
				}
				if _, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "soak_emit", RunID: "ref-emit", SessionID: session}); err == nil {
					var e *durable.RunState
					e, err = rt.Tick(ctx, "ref-emit", runtime.TickOptions{})
					if err == nil && e.Status == durable.RunCompleted {
						out["emit"] = e.Output
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if run, err = rt.GetState(ctx, id); err != nil || run.Status != durable.RunCompleted {
			t.Fatalf("reference run of %s: %v %v", kind, run, err)
		}
		out[kind] = run.Output
	}
	out[kindTreeCancel], out[kindSlowCancel] = out[kindTree], out[kindSlow]
	if out["emit"] == nil {
		t.Fatal("reference emitter did not complete")
	}
	return out
}
