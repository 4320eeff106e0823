package crashtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Crash tests of flows beyond Run's two scenarios, driven through the
// harness's killable Store (Wrap) at every persistence point of each
// flow, on every store (memory, JSON files, SQLite owned and shared,
// PostgreSQL with TEST_POSTGRES_URL). A flow's host redoes its idempotent
// operations from the start in every life; after the restart the runs
// must end as in the clean run, each terminal run with exactly one
// terminal record, no effect completed twice in a ledger or executed
// again after its completion was durable.

// ---------------------------------------------------------------------
// Driver.
// ---------------------------------------------------------------------

var cfT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// cfWorld is what outlives a process besides the store's data (the
// opener's): the artifacts, the effects done outside, the clock, and what
// a handler saw go wrong (reported by the driver, as a handler has no t).
type cfWorld struct {
	arts  artifact.Store
	log   *effectLog
	clock *cfClock

	mu       sync.Mutex
	problems []string
}

// problem records a broken property a handler saw.
func (w *cfWorld) problem(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// report fails t with the problems the handlers saw in every life so far.
func (w *cfWorld) report(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Error(p)
	}
}

type cfEnv struct {
	*cfWorld
	rt  *runtime.Runtime
	sch *scheduler.Scheduler
	st  store.Store
}

type crashFlow struct {
	name      string
	workflows func() []*runtime.Workflow
	policy    runtime.EffectPolicy
	// handlers, when set, adds effect handlers of the flow's own.
	handlers func(w *cfWorld) map[durable.EffectType]runtime.Handler
	// host does the host's operations, from the start, until the flow
	// ends; every operation is idempotent (a later life redoes them).
	host func(ctx context.Context, e *cfEnv) error
	// exact: the final runs (status, output, error) must equal the clean
	// run's; otherwise check decides.
	exact bool
	check func(t *testing.T, ctx context.Context, st store.Store, final map[string]cfRun)
}

type cfRun struct {
	Workflow string
	Status   durable.RunStatus
	Output   any
	Error    string
}

func cfRuntime(w *cfWorld, st store.Store, f *crashFlow) (*cfEnv, error) {
	reg, err := runtime.NewRegistry(f.workflows()...)
	if err != nil {
		return nil, err
	}
	charge := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		w.log.add(req.IdempotencyKey)
		return runtime.Completed(map[string]any{"id": fmt.Sprintf("rcpt-%v", req.Effect.Payload["amount"])}), nil
	}
	handlers := map[durable.EffectType]runtime.Handler{"charge": {Func: charge}}
	if f.handlers != nil {
		maps.Copy(handlers, f.handlers(w))
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: w.arts, Policy: f.policy,
		Clock: w.clock.Now, Sleep: w.clock.sleep, Handlers: handlers})
	if err != nil {
		return nil, err
	}
	sch, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		return nil, err
	}
	return &cfEnv{cfWorld: w, rt: rt, sch: sch, st: st}, nil
}

// cfBackends are the stores the harness supports, each a fresh data
// location per call.
func cfBackends() []struct {
	name  string
	fresh Backend
} {
	type b = struct {
		name  string
		fresh Backend
	}
	out := []b{
		{"memory", func(t *testing.T) Opener {
			st := memory.New()
			return func(t *testing.T) (store.Store, func()) { return st, func() {} }
		}},
		{"json", func(t *testing.T) Opener {
			dir := t.TempDir()
			return func(t *testing.T) (store.Store, func()) {
				st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				return st, func() { st.Close() }
			}
		}},
		{"sqlite", func(t *testing.T) Opener {
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			return func(t *testing.T) (store.Store, func()) {
				st, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
				if err != nil {
					t.Fatal(err)
				}
				return st, func() { st.Close() }
			}
		}},
		{"sqlite_shared", func(t *testing.T) Opener {
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			return func(t *testing.T) (store.Store, func()) {
				st, err := sqlite.New(context.Background(), sqlite.Config{Path: path, Shared: true})
				if err != nil {
					t.Fatal(err)
				}
				return st, func() { st.Close() }
			}
		}},
	}
	if url := os.Getenv("TEST_POSTGRES_URL"); url != "" {
		n := 0
		var mu sync.Mutex
		out = append(out, b{"postgres", func(t *testing.T) Opener {
			mu.Lock()
			n++
			schema := fmt.Sprintf("crashflow_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, n)
			mu.Unlock()
			t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
			return func(t *testing.T) (store.Store, func()) {
				st, err := postgres.New(context.Background(), postgres.Config{URL: url, Schema: schema, MaxConns: 4})
				if err != nil {
					t.Fatal(err)
				}
				return st, func() { st.Close() }
			}
		}})
	}
	return out
}

func runCrashFlow(t *testing.T, f *crashFlow) {
	for _, be := range cfBackends() {
		t.Run(be.name, func(t *testing.T) { runCrashFlowOn(t, f, be.fresh) })
	}
}

func newWorld() *cfWorld {
	return &cfWorld{arts: artifact.NewMemory(),
		log: &effectLog{calls: map[string]int{}}, clock: &cfClock{now: cfT0}}
}

func runCrashFlowOn(t *testing.T, f *crashFlow, backend Backend) {
	ctx := context.Background()
	open := backend(t)
	st, closeFn := open(t)
	probe := Wrap(st, -1, Before)
	w := newWorld()
	e, err := cfRuntime(w, probe, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.host(ctx, e); err != nil {
		t.Fatalf("clean run: %v", err)
	}
	points := probe.Calls()
	w.report(t)
	want := cfSnapshot(ctx, t, st)
	cfCheckLedgers(ctx, t, st, want)
	if f.check != nil {
		f.check(t, ctx, st, want)
	}
	closeFn()
	if t.Failed() {
		t.Fatalf("clean run fails the checks: %v", want)
	}
	phases := []Phase{Before, After}
	if !store.IsAtomic(st) {
		phases = append(phases, Between)
	}
	for point := 0; point < points; point++ {
		for _, phase := range phases {
			t.Run(fmt.Sprintf("kill-%02d-%s", point, phase), func(t *testing.T) {
				cfCheckKill(t, f, backend, point, phase, want)
			})
		}
	}
}

func cfCheckKill(t *testing.T, f *crashFlow, backend Backend, point int, phase Phase, want map[string]cfRun) {
	ctx := context.Background()
	open := backend(t)
	w := newWorld()

	st, closeFn := open(t)
	killer := Wrap(st, point, phase)
	e, err := cfRuntime(w, killer, f)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.host(ctx, e)
	if !killer.Dead() {
		t.Skipf("the kill at point %d never happened (the flow took another path)", point)
	}
	closeFn()

	st, closeFn = open(t)
	defer closeFn()
	durableDone := map[string]int{}
	for _, id := range cfAllRuns(ctx, t, st) {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Status == durable.StepCompleted && r.IdempotencyKey != "" {
				durableDone[r.IdempotencyKey] = w.log.count(r.IdempotencyKey)
			}
		}
	}

	e, err = cfRuntime(w, st, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.host(ctx, e); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	got := cfSnapshot(ctx, t, st)
	if f.exact && !reflect.DeepEqual(got, want) {
		t.Errorf("after restart the runs differ from the clean run:\n got %v\nwant %v", got, want)
	}
	for k, n := range durableDone {
		if c := w.log.count(k); c != n {
			t.Errorf("effect %s re-executed after its completion was durable (%d → %d)", k, n, c)
		}
	}
	w.report(t)
	cfCheckLedgers(ctx, t, st, got)
	if f.check != nil {
		f.check(t, ctx, st, got)
	}
}

// cfSnapshot: every run in the store, comparable across a round trip.
func cfSnapshot(ctx context.Context, t *testing.T, st store.Store) map[string]cfRun {
	t.Helper()
	out := map[string]cfRun{}
	for _, id := range cfAllRuns(ctx, t, st) {
		r, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var o any
		if r.Output != nil {
			o = normalize(r.Output, "delivered", "delivered_to", "resumed", "kept_in_context")
		}
		out[id] = cfRun{Workflow: r.WorkflowID, Status: r.Status, Output: o, Error: r.Error}
	}
	return out
}

// cfAllRuns is allRuns in order.
func cfAllRuns(ctx context.Context, t *testing.T, st store.Store) []string {
	ids := allRuns(ctx, t, st)
	sort.Strings(ids)
	return ids
}

// cfCheckLedgers: a terminal run has exactly one terminal record, of its
// status; no run stuck; an effect key completed at most once.
func cfCheckLedgers(ctx context.Context, t *testing.T, st store.Store, runs map[string]cfRun) {
	t.Helper()
	for id, r := range runs {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		terminal := map[string]int{}
		done := map[string]int{}
		for _, rec := range recs {
			if s, ok := strings.CutPrefix(rec.IdempotencyKey, "system:terminal_status:"); ok {
				terminal[s]++
			} else if rec.Status == durable.StepCompleted && rec.IdempotencyKey != "" {
				done[rec.IdempotencyKey]++
			}
		}
		synthetic := strings.HasPrefix(r.Workflow, "__")
		switch {
		case synthetic:
		case r.Status.Terminal():
			if terminal[string(r.Status)] != 1 || len(terminal) != 1 {
				t.Errorf("run %s (%s, %s): terminal records %v, want exactly one %s", id, r.Workflow, r.Status, terminal, r.Status)
			}
		default:
			t.Errorf("run %s (%s) left %s (not terminal) at the end of the flow; terminal records %v", id, r.Workflow, r.Status, terminal)
		}
		for k, n := range done {
			if n > 1 {
				t.Errorf("run %s: effect %s completed %d times in the ledger", id, k, n)
			}
		}
	}
}

// ---------------------------------------------------------------------
// Host helpers.
// ---------------------------------------------------------------------

func cfNode(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run), nil
	}
}

func cfStart(ctx context.Context, e *cfEnv, wf, id, session string) error {
	_, err := e.rt.Start(ctx, runtime.StartParams{WorkflowID: wf, RunID: id, SessionID: session})
	return err
}

// cfAnswerUsers answers every run waiting for a person (not a pause).
func cfAnswerUsers(ctx context.Context, e *cfEnv) error {
	runs, err := e.st.RunList(ctx, &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitUser, Limit: 1000})
	if err != nil {
		return err
	}
	for _, r := range runs {
		if runtime.IsPaused(r) || strings.HasPrefix(r.Waiting.WaitKey, "pause:") {
			continue
		}
		if _, err := e.rt.Resume(ctx, runtime.ResumeParams{RunID: r.RunID, WaitKey: r.Waiting.WaitKey,
			Payload: map[string]any{"text": "yes-" + r.WorkflowID}}); err != nil {
			return err
		}
	}
	return nil
}

// cfDrive: recover, tick the roots, answer people, until the roots end.
func cfDrive(ctx context.Context, e *cfEnv, answer bool, roots ...string) error {
	for range 10 {
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		all := true
		for _, id := range roots {
			st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				return err
			}
			if !st.Status.Terminal() {
				all = false
			}
		}
		if all {
			return nil
		}
		if answer {
			if err := cfAnswerUsers(ctx, e); err != nil {
				return err
			}
		}
	}
	return errors.New("the flow did not end")
}

func cfCharge(amount int64, result, next string) runtime.StepPlan {
	return runtime.Request(&durable.Effect{Type: "charge", Payload: map[string]any{"amount": amount}, ResultKey: result}, next)
}

func cfReceipt(run *durable.RunState, key string) any {
	m, _ := run.Vars[key].(map[string]any)
	return m["id"]
}

// ---------------------------------------------------------------------
// The flows.
// ---------------------------------------------------------------------

// a child that waits for a person: sync (the parent waits on it) and
// async+wait; the answer ends the child and resumes the parent, which
// charges.
func waitingChildFlow(name string, async bool) *crashFlow {
	return &crashFlow{name: name, exact: true,
		workflows: func() []*runtime.Workflow {
			parent := &runtime.Workflow{ID: "wc_parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
				"spawn": cfNode(func(run *durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
						Payload:   map[string]any{"workflow_id": "wc_child", "async": async, "wait": async},
						ResultKey: "sub"}, "pay")
				}),
				"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(5, "r", "done") }),
				"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
					sub, _ := run.Vars["sub"].(map[string]any)
					return runtime.Complete(map[string]any{"r": cfReceipt(run, "r"), "sub": sub["output"]})
				}),
			}}
			child := &runtime.Workflow{ID: "wc_child", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
				"ask": cfNode(func(run *durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
						Payload: map[string]any{"prompt": "ok?"}, ResultKey: "ans"}, "pay")
				}),
				"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(6, "r", "done") }),
				"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
					ans, _ := run.Vars["ans"].(map[string]any)
					return runtime.Complete(map[string]any{"r": cfReceipt(run, "r"), "ans": ans["text"]})
				}),
			}}
			return []*runtime.Workflow{parent, child}
		},
		host: func(ctx context.Context, e *cfEnv) error {
			if err := cfStart(ctx, e, "wc_parent", "cf-root", ""); err != nil {
				return err
			}
			return cfDrive(ctx, e, true, "cf-root")
		},
	}
}

// EMIT_EVENT to two listeners: one in the target session on the exact
// name, one in another session on the target session's wildcard.
var flowEmit2 = &crashFlow{name: "emit2", exact: true,
	workflows: func() []*runtime.Workflow {
		listener := func(id string, payload map[string]any, amount int64) *runtime.Workflow {
			return &runtime.Workflow{ID: id, Entry: "wait", Nodes: map[string]runtime.NodeFunc{
				"wait": cfNode(func(run *durable.RunState) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: payload, ResultKey: "evt"}, "pay")
				}),
				"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(amount, "r", "done") }),
				"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
					evt, _ := run.Vars["evt"].(map[string]any)
					return runtime.Complete(map[string]any{"r": cfReceipt(run, "r"), "name": evt["name"], "payload": evt["payload"]})
				}),
			}}
		}
		emitter := &runtime.Workflow{ID: "ev_emitter", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
			"emit": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, Payload: map[string]any{
					"name": "go", "session_id": "s2", "payload": map[string]any{"x": int64(1)}}, ResultKey: "emit"}, "pay")
			}),
			"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(13, "r", "done") }),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"r": cfReceipt(run, "r")})
			}),
		}}
		return []*runtime.Workflow{
			listener("ev_exact", map[string]any{"name": "go"}, 11),
			listener("ev_wild", map[string]any{"name": "*", "session_id": "s2"}, 12),
			emitter,
		}
	},
	host: func(ctx context.Context, e *cfEnv) error {
		for _, l := range [][3]string{{"ev_exact", "cf-la", "s2"}, {"ev_wild", "cf-lb", "s1"}} {
			if err := cfStart(ctx, e, l[0], l[1], l[2]); err != nil {
				return err
			}
			if err := e.sch.Recover(ctx); err != nil {
				return err
			}
			if _, err := e.rt.Tick(ctx, l[1], runtime.TickOptions{}); err != nil {
				return err
			}
		}
		if err := cfStart(ctx, e, "ev_emitter", "cf-em", "s1"); err != nil {
			return err
		}
		return cfDrive(ctx, e, false, "cf-em", "cf-la", "cf-lb")
	},
}

// MEMORY_NOTE into another run (target_run_id, kept in its context) and
// into the session owner run; the target then reports its spans and
// notes.
var flowMemNote = &crashFlow{name: "memnote", exact: true,
	workflows: func() []*runtime.Workflow {
		target := &runtime.Workflow{ID: "mn_target", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "go on?"}, ResultKey: "ans"}, "done")
			}),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"spans": int64(len(memorySpans(run))), "notes": int64(contextNotes(run))})
			}),
		}}
		noter := &runtime.Workflow{ID: "mn_noter", Entry: "n1", Nodes: map[string]runtime.NodeFunc{
			"n1": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, Payload: map[string]any{
					"note": "remember A", "target_run_id": "cf-tg", "keep_in_context": true}, ResultKey: "n1"}, "n2")
			}),
			"n2": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, Payload: map[string]any{
					"note": "remember B", "scope": "session"}, ResultKey: "n2"}, "pay")
			}),
			"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(31, "r", "done") }),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"r": cfReceipt(run, "r"), "n1": run.Vars["n1"], "n2": run.Vars["n2"],
					"own_spans": int64(len(memorySpans(run)))})
			}),
		}}
		return []*runtime.Workflow{target, noter}
	},
	host: func(ctx context.Context, e *cfEnv) error {
		if err := cfStart(ctx, e, "mn_target", "cf-tg", "sess"); err != nil {
			return err
		}
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		if _, err := e.rt.Tick(ctx, "cf-tg", runtime.TickOptions{}); err != nil {
			return err
		}
		if err := cfStart(ctx, e, "mn_noter", "cf-nt", "sess"); err != nil {
			return err
		}
		if err := cfDrive(ctx, e, false, "cf-nt"); err != nil {
			return err
		}
		return cfDrive(ctx, e, true, "cf-tg")
	},
	check: func(t *testing.T, ctx context.Context, st store.Store, final map[string]cfRun) {
		owner := runtime.SessionMemoryRunID("sess")
		r, err := st.RunGet(ctx, owner)
		if err != nil {
			t.Errorf("session owner %s: %v", owner, err)
			return
		}
		if n := len(memorySpans(r)); n != 1 {
			t.Errorf("session owner holds %d memory spans, want 1", n)
		}
	},
}

// Pause of a parent waiting on an async child; the child is answered and
// ends during the pause; ResumeRun hands the parent the child's end.
var flowPause = &crashFlow{name: "pause", exact: true,
	workflows: func() []*runtime.Workflow {
		return waitingChildFlow("", true).workflows()
	},
	host: func(ctx context.Context, e *cfEnv) error {
		if err := cfStart(ctx, e, "wc_parent", "cf-root", ""); err != nil {
			return err
		}
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		if _, err := e.rt.Tick(ctx, "cf-root", runtime.TickOptions{}); err != nil {
			return err
		}
		if _, err := e.rt.Pause(ctx, "cf-root", "hold on"); err != nil {
			return err
		}
		if err := cfAnswerUsers(ctx, e); err != nil {
			return err
		}
		if err := e.sch.Recover(ctx); err != nil {
			return err
		}
		if _, err := e.rt.ResumeRun(ctx, "cf-root"); err != nil {
			return err
		}
		return cfDrive(ctx, e, true, "cf-root")
	},
}

func TestCrashFlows(t *testing.T) {
	t.Parallel()
	for _, f := range []*crashFlow{flowEmit2, flowMemNote, flowPause} {
		t.Run(f.name, func(t *testing.T) { runCrashFlow(t, f) })
	}
}
