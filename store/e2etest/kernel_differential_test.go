package e2etest_test

// Cross-backend differential: the same random kernel operations (starts
// with explicit ids, ticks, asks/resumes, waits with deadlines, emits,
// subworkflows, cancels, pauses, limits updates, reopens, Recover) run in
// step on every backend and decorated stack (memory, JSON, SQLite in each
// mode, PostgreSQL when TEST_POSTGRES_URL is set, hash chain, offload,
// observe), comparing results, states, ledgers and listings after each
// step. KDIFF_SEEDS / KDIFF_OPS / KDIFF_SEED / KDIFF_CLAIMS=1 / KDIFF_ONLY
// and SDIFF_SEEDS / SDIFF_SEED widen or narrow a run.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

type kdBackend struct {
	name   string
	st     store.Store
	clk    *runtimetest.Clock
	rt     *runtime.Runtime
	sch    *scheduler.Scheduler
	open   func() (store.Store, error) // nil: not reopenable
	idN    int
	arts   artifact.Store
	claims bool
}

func kdNode(fn func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run, rc), nil
	}
}

func kdEffect(t durable.EffectType, payload map[string]any, key, next string) runtime.StepPlan {
	return runtime.Request(&durable.Effect{Type: t, Payload: payload, ResultKey: key}, next)
}

func kdWorkflows() []*runtime.Workflow {
	done := func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
		return runtime.Complete(map[string]any{"vars_n": len(run.Vars)})
	}
	return []*runtime.Workflow{
		{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectAskUser, map[string]any{"prompt": "Continue?", "choices": []any{"yes", "no"}}, "answer", "say")
			}),
			"say": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectAnswerUser, map[string]any{"message": "ok"}, "said", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "sleep", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": kdNode(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				until := durable.FormatTime(rc.Now().Add(time.Minute))
				return kdEffect(durable.EffectWaitUntil, map[string]any{"until": until}, "woke", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectWaitEvent, map[string]any{"name": "go", "timeout_s": 60}, "evt", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "listen2", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectWaitEvent, map[string]any{"name": "go"}, "evt", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "emitter", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
			"emit": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectEmitEvent, map[string]any{"name": "go", "payload": map[string]any{"n": 7}}, "sent", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "ask", "async": true, "wait": true}, "child", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "syncparent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "sleep"}, "child", "done")
			}),
			"done": kdNode(done),
		}},
		{ID: "loop", Entry: "inc", Nodes: map[string]runtime.NodeFunc{
			"inc": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				n, _ := run.Vars["i"].(int64)
				if f, ok := run.Vars["i"].(float64); ok {
					n = int64(f)
				}
				if n >= 4 {
					return runtime.Next("done")
				}
				run.Vars["i"] = n + 1
				return runtime.Next("inc")
			}),
			"done": kdNode(done),
		}},
		{ID: "big", Entry: "call", Nodes: map[string]runtime.NodeFunc{
			"call": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect("big", map[string]any{"prompt": strings.Repeat("p", 200)}, "_temp.res", "ask")
			}),
			"ask": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				run.Vars["_notes"] = map[string]any{"long": strings.Repeat("n", 200)}
				return kdEffect(durable.EffectAskUser, map[string]any{"prompt": "more?"}, "answer", "done")
			}),
			"done": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"long": strings.Repeat("o", 200), "answer": run.Vars["answer"]})
			}),
		}},
		{ID: "failing", Entry: "call", Nodes: map[string]runtime.NodeFunc{
			"call": kdNode(func(run *durable.RunState, _ *runtime.RunContext) runtime.StepPlan {
				return kdEffect("fail", nil, "", "never")
			}),
		}},
	}
}

// kdStores gives an opener of every backend and decorated stack; deco
// wraps the base stores (identity when nil).
func kdStores(t *testing.T, deco0 func(name string, s store.Store) store.Store) map[string]func() (store.Store, error) {
	t.Helper()
	ctx := context.Background()
	out := map[string]func() (store.Store, error){}
	name := ""
	deco := func(s store.Store) store.Store {
		if deco0 == nil {
			return s
		}
		return deco0(name, s)
	}
	_ = name
	mem := func() (store.Store, error) { return deco(memory.New()), nil }
	out["memory"] = mem
	jdir, jdir2 := t.TempDir(), t.TempDir()
	out["jsonfile"] = func() (store.Store, error) {
		st, err := jsonfile.New(jsonfile.Config{Dir: jdir, NoSync: true})
		if err != nil {
			return nil, err
		}
		return deco(st), nil
	}
	out["jsonfile-tinycache"] = func() (store.Store, error) {
		st, err := jsonfile.New(jsonfile.Config{Dir: jdir2, NoSync: true, CacheBytes: 1})
		if err != nil {
			return nil, err
		}
		return deco(st), nil
	}
	for name, cfg := range map[string]sqlite.Config{
		"sqlite": {}, "sqlite-shared": {Shared: true}, "sqlite-nocache": {CacheBytes: -1}, "sqlite-noredo": {NoRedoLog: true},
	} {
		cfg.Path = filepath.Join(t.TempDir(), "db.sqlite3")
		cfg.Synchronous = "OFF"
		out[name] = func() (store.Store, error) {
			st, err := sqlite.New(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return deco(st), nil
		}
	}
	hdir := t.TempDir()
	hpath := filepath.Join(t.TempDir(), "db.sqlite3")
	out["hashchain(memory)"] = func() (store.Store, error) { return deco(hashchain.Wrap(memory.New())), nil }
	out["observe(offload(hashchain(jsonfile)))"] = func() (store.Store, error) {
		st, err := jsonfile.New(jsonfile.Config{Dir: hdir, NoSync: true})
		if err != nil {
			return nil, err
		}
		return deco(observe.Wrap(offload.Wrap(hashchain.Wrap(st), artifact.NewMemory(), offload.Config{}))), nil
	}
	out["observe(offload(hashchain(sqlite-shared)))"] = func() (store.Store, error) {
		st, err := sqlite.New(ctx, sqlite.Config{Path: hpath, Synchronous: "OFF", Shared: true})
		if err != nil {
			return nil, err
		}
		return deco(observe.Wrap(offload.Wrap(hashchain.Wrap(st), artifact.NewMemory(), offload.Config{}))), nil
	}
	if url := os.Getenv("TEST_POSTGRES_URL"); url != "" {
		for _, dec := range []bool{false, true} {
			schema := fmt.Sprintf("agw_zkdiff_%d_%d", os.Getpid(), diffSchemaN.Add(1))
			t.Cleanup(func() {
				if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
					t.Errorf("drop schema %s: %v", schema, err)
				}
			})
			name := "postgres"
			if dec {
				name = "observe(offload(hashchain(postgres)))"
			}
			out[name] = func() (store.Store, error) {
				pg, err := postgres.New(ctx, postgres.Config{URL: url, Schema: schema, MaxConns: 2})
				if err != nil {
					return nil, err
				}
				if dec {
					return deco(observe.Wrap(offload.Wrap(hashchain.Wrap(pg), artifact.NewMemory(), offload.Config{}))), nil
				}
				return deco(pg), nil
			}
		}
	}
	if deco0 != nil {
		for n, f := range out {
			if strings.Contains(n, "(") {
				delete(out, n) // base stores only
				continue
			}
			out[n] = func() (store.Store, error) {
				name = n
				return f()
			}
		}
	}
	return out
}

func kdOpen(t *testing.T, deco func(name string, s store.Store) store.Store) []*kdBackend {
	stores := kdStores(t, deco)
	claims := os.Getenv("KDIFF_CLAIMS") != ""
	if claims {
		for n := range stores {
			if strings.Contains(n, "jsonfile") {
				delete(stores, n)
			}
		}
	}
	names := make([]string, 0, len(stores))
	for n := range stores {
		names = append(names, n)
	}
	slices.Sort(names)
	// memory first: the reference.
	slices.SortStableFunc(names, func(a, b string) int {
		if a == "memory" {
			return -1
		}
		if b == "memory" {
			return 1
		}
		return 0
	})
	if only := os.Getenv("KDIFF_ONLY"); only != "" {
		names = slices.DeleteFunc(names, func(n string) bool { return n != "memory" && !slices.Contains(strings.Split(only, ","), n) })
	}
	var bs []*kdBackend
	for _, n := range names {
		b := &kdBackend{name: n, clk: runtimetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)), arts: artifact.NewMemory(), claims: claims}
		if n != "memory" && !strings.Contains(n, "(memory)") {
			b.open = stores[n]
		}
		st, err := stores[n]()
		if err != nil {
			t.Fatalf("open %s: %v", n, err)
		}
		b.st = st
		t.Cleanup(func() { _ = b.st.Close() })
		b.build(t)
		bs = append(bs, b)
	}
	return bs
}

func (b *kdBackend) build(t *testing.T) {
	reg, err := runtime.NewRegistry(kdWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	var claims *runtime.Claims
	if b.claims {
		claims = &runtime.Claims{Owner: "r1", TTL: time.Hour, RenewEvery: time.Minute}
	}
	rt, err := runtime.New(runtime.Config{Store: b.st, Registry: reg, Clock: b.clk.Now, Artifacts: b.arts, Claims: claims,
		NewID: func() string { b.idN++; return fmt.Sprintf("run-%03d", b.idN) },
		Handlers: map[durable.EffectType]runtime.Handler{
			"fail": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				return runtime.Failed("boom"), nil
			}},
			"big": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				return runtime.Completed(map[string]any{"text": strings.Repeat("b", 300), "small": 1}), nil
			}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: b.clk.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	b.rt, b.sch = rt, sch
}

var (
	kdHashRE  = regexp.MustCompile(`,? ?"(record_hash|prev_hash)": ?("[0-9a-f]*"|null)`)
	kdDurRE   = regexp.MustCompile(`"duration_ms": ?[0-9.e+-]+`)
	kdArtRE   = regexp.MustCompile(`"\$artifact": ?"[0-9a-f]+"`)
	kdStoreRE = regexp.MustCompile(`\b(memory|jsonfile|sqlite|postgres)\b`)
)

func kdErr(err error) string {
	return "err(" + errClass(err) + "): " + kdStoreRE.ReplaceAllString(err.Error(), "STORE")
}

func kdRun(r *durable.RunState, err error) string {
	if err != nil {
		return kdErr(err)
	}
	if r == nil {
		return "nil"
	}
	b, merr := durable.MarshalRun(r, pyjson.Line)
	if merr != nil {
		return "marshal: " + merr.Error()
	}
	return kdArtRE.ReplaceAllString(kdDurRE.ReplaceAllString(string(b), `"duration_ms":D`), `"$$artifact":A`)
}

func kdRecs(recs []*durable.StepRecord, err error) string {
	if err != nil {
		return kdErr(err)
	}
	parts := []string{}
	for _, r := range recs {
		b, merr := durable.MarshalRecord(r, pyjson.Line)
		if merr != nil {
			return "marshal: " + merr.Error()
		}
		parts = append(parts, fmt.Sprintf("#%d %s", r.Seq, kdArtRE.ReplaceAllString(kdDurRE.ReplaceAllString(kdHashRE.ReplaceAllString(string(b), ""), `"duration_ms":D`), `"$$artifact":A`)))
	}
	return "[" + strings.Join(parts, "\n  ") + "]"
}

func kdIDs(runs []*durable.RunState, err error) string {
	if err != nil {
		return kdErr(err)
	}
	ids := []string{}
	for _, r := range runs {
		ids = append(ids, fmt.Sprintf("%s/%s", r.RunID, r.Status))
	}
	return strings.Join(ids, ",")
}

// kdHarness drives every backend in lockstep and compares what they say.
type kdHarness struct {
	t      *testing.T
	ctx    context.Context
	bs     []*kdBackend
	trace  []string
	failed bool
	ids    []string // every run id the reference knows, in order seen
}

func (h *kdHarness) do(op string, f func(b *kdBackend) string) string {
	h.t.Helper()
	h.trace = append(h.trace, op)
	var ref string
	for i, b := range h.bs {
		got := f(b)
		if i == 0 {
			ref = got
			continue
		}
		if got != ref && !h.failed {
			h.failed = true
			h.t.Errorf("%s differs on %s\n  %s: %s\n  memory: %s\ntrace:\n  %s", op, b.name, b.name, got, ref, strings.Join(h.trace, "\n  "))
		}
	}
	return ref
}

func (h *kdHarness) learn(ids ...string) {
	for _, id := range ids {
		if id != "" && !slices.Contains(h.ids, id) {
			h.ids = append(h.ids, id)
		}
	}
}

func (h *kdHarness) reopenAll() {
	h.trace = append(h.trace, "reopen")
	for _, b := range h.bs {
		if b.open == nil {
			continue
		}
		if err := b.st.Close(); err != nil {
			h.t.Errorf("close %s: %v", b.name, err)
		}
		st, err := b.open()
		if err != nil {
			h.t.Fatalf("reopen %s: %v", b.name, err)
		}
		b.st = st
		b.build(h.t)
	}
}

// snapshot compares every known run (and its children), its ledger, and
// the listings.
func (h *kdHarness) snapshot(tag string) {
	h.t.Helper()
	// learn children ids from the store listing of the reference
	all, _ := h.bs[0].st.RunList(h.ctx, &store.RunListParams{Limit: 1000})
	for _, r := range all {
		h.learn(r.RunID)
	}
	for _, id := range h.ids {
		h.do(tag+" state "+id, func(b *kdBackend) string {
			r, err := b.rt.GetState(h.ctx, id)
			return kdRun(r, err)
		})
		h.do(tag+" ledger "+id, func(b *kdBackend) string {
			return kdRecs(b.st.LedgerList(h.ctx, &store.LedgerListParams{RunID: id}))
		})
	}
	h.do(tag+" list", func(b *kdBackend) string {
		return kdIDs(b.st.RunList(h.ctx, &store.RunListParams{Limit: 1000}))
	})
	h.do(tag+" due", func(b *kdBackend) string {
		due, err := b.st.RunListDue(h.ctx, &store.RunListDueParams{Now: b.clk.Now().Add(time.Hour), Limit: 1000})
		next, err2 := b.st.RunNextDue(h.ctx)
		return fmt.Sprintf("%s %v | %s %v", dueText(due, err), err, fmtT(next.Time), err2)
	})
	h.do(tag+" index", func(b *kdBackend) string {
		return rowsText(b.st.RunIndex(h.ctx, &store.RunIndexParams{Limit: 1000}))
	})
}

func (h *kdHarness) pickRun(r *rand.Rand) string {
	if len(h.ids) == 0 {
		return "nope"
	}
	return h.ids[r.IntN(len(h.ids))]
}

func (h *kdHarness) randomOp(r *rand.Rand) {
	wfs := []string{"ask", "sleep", "listen", "listen2", "emitter", "parent", "syncparent", "loop", "failing", "big"}
	switch k := r.IntN(100); {
	case k < 20:
		wf := wfs[r.IntN(len(wfs))]
		p := runtime.StartParams{WorkflowID: wf, SessionID: []string{"sess", "s2"}[r.IntN(2)], Vars: map[string]any{"v": int64(r.IntN(3))}}
		if r.IntN(3) == 0 {
			p.RunID = fmt.Sprintf("x-%d", r.IntN(4))
		}
		id := h.do(fmt.Sprintf("start %+v", p), func(b *kdBackend) string {
			id, err := b.rt.Start(h.ctx, p)
			if err != nil {
				return kdErr(err)
			}
			return id
		})
		if !strings.HasPrefix(id, "err") {
			h.learn(id)
		}
	case k < 40:
		id, steps := h.pickRun(r), r.IntN(4)
		h.do(fmt.Sprintf("tick %s %d", id, steps), func(b *kdBackend) string {
			return kdRun(b.rt.Tick(h.ctx, id, runtime.TickOptions{MaxSteps: steps}))
		})
	case k < 52:
		id := h.pickRun(r)
		mode := r.IntN(3)
		h.do(fmt.Sprintf("resume %s mode %d", id, mode), func(b *kdBackend) string {
			key := ""
			if cur, err := b.rt.GetState(h.ctx, id); err == nil && cur.Waiting != nil && mode == 0 {
				key = cur.Waiting.WaitKey
			}
			if mode == 1 {
				key = "wrong"
			}
			return kdRun(b.rt.Resume(h.ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"text": "yes"}}))
		})
	case k < 60:
		sess := []string{"sess", "s2"}[r.IntN(2)]
		h.do("emit "+sess, func(b *kdBackend) string {
			ids, err := b.rt.EmitEvent(h.ctx, runtime.EmitParams{Name: "go", SessionID: sess, Payload: map[string]any{"x": 1}})
			if err != nil {
				return fmt.Sprintf("%v %s", ids, kdErr(err))
			}
			return fmt.Sprint(ids)
		})
	case k < 70:
		d := time.Duration(10+r.IntN(80)) * time.Second
		h.do(fmt.Sprintf("advance %s; poll", d), func(b *kdBackend) string {
			b.clk.Advance(d)
			n, err := b.sch.PollOnce(h.ctx)
			if err != nil {
				return fmt.Sprintf("%d %s", n, kdErr(err))
			}
			return fmt.Sprint(n)
		})
	case k < 76:
		id := h.pickRun(r)
		h.do("cancel "+id, func(b *kdBackend) string {
			return kdRun(b.rt.Cancel(h.ctx, id, ""))
		})
	case k < 84:
		id := h.pickRun(r)
		h.do("pause "+id, func(b *kdBackend) string {
			return kdRun(b.rt.Pause(h.ctx, id, "hold"))
		})
	case k < 92:
		id := h.pickRun(r)
		h.do("resume-run "+id, func(b *kdBackend) string {
			return kdRun(b.rt.ResumeRun(h.ctx, id))
		})
	case k < 95:
		h.reopenAll()
	case k < 97:
		h.do("recover", func(b *kdBackend) string {
			if err := b.sch.Recover(h.ctx); err != nil {
				return kdErr(err)
			}
			return "ok"
		})
	default:
		id := h.pickRun(r)
		n := int64(r.IntN(5000))
		h.do(fmt.Sprintf("limits %s %d", id, n), func(b *kdBackend) string {
			err := b.rt.UpdateLimits(h.ctx, id, map[string]any{"max_tokens": n})
			st, _ := b.rt.GetLimitStatus(h.ctx, id)
			if err != nil {
				return fmt.Sprintf("%s %v", kdErr(err), st)
			}
			return fmt.Sprint(st)
		})
	}
	// queries with filters
	q := r.IntN(6)
	switch q {
	case 0:
		p := &store.RunListParams{Status: durable.RunWaiting, WaitReason: []durable.WaitReason{durable.WaitEvent, durable.WaitUser, durable.WaitUntil, durable.WaitSubworkflow}[r.IntN(4)], Limit: 1 + r.IntN(3)}
		h.do(fmt.Sprintf("list %+v", *p), func(b *kdBackend) string { return kdIDs(b.st.RunList(h.ctx, p)) })
	case 1:
		p := &store.RunListParams{SessionID: "s2", WorkflowID: wfs[r.IntN(len(wfs))]}
		h.do(fmt.Sprintf("list %+v", *p), func(b *kdBackend) string { return kdIDs(b.st.RunList(h.ctx, p)) })
	case 2:
		id := h.pickRun(r)
		h.do("children "+id, func(b *kdBackend) string { return kdIDs(b.st.RunListChildren(h.ctx, id, "")) })
		p := &store.RunListParams{ParentID: id}
		h.do(fmt.Sprintf("list %+v", *p), func(b *kdBackend) string { return kdIDs(b.st.RunList(h.ctx, p)) })
	case 3:
		p := &store.RunIndexParams{RootOnly: true, SessionID: "sess", Limit: 1 + r.IntN(4)}
		h.do(fmt.Sprintf("index %+v", *p), func(b *kdBackend) string { return rowsText(b.st.RunIndex(h.ctx, p)) })
	case 4:
		id := h.pickRun(r)
		after, limit := int64(r.IntN(5)), r.IntN(3)
		h.do(fmt.Sprintf("ledger %s %d %d", id, after, limit), func(b *kdBackend) string {
			return kdRecs(b.st.LedgerList(h.ctx, &store.LedgerListParams{RunID: id, After: after, Limit: limit}))
		})
	default:
		h.do("waitkeys", func(b *kdBackend) string {
			return kdIDs(b.st.RunList(h.ctx, &store.RunListParams{WaitKeys: []string{"evt:session:sess:go", "evt:session:s2:go"}}))
		})
	}
}

// TestKernelBackendsAgree runs random kernel operations on every
// backend and decorated stack and compares all they show.
func TestKernelBackendsAgree(t *testing.T) { kdRandom(t, nil) }

// TestKernelOffloadAgree is TestKernelBackendsAgree on base
// stores each wrapped in an offloading decorator with a small threshold.
func TestKernelOffloadAgree(t *testing.T) {
	var mu sync.Mutex
	arts := map[string]artifact.Store{}
	kdRandom(t, func(name string, s store.Store) store.Store {
		mu.Lock()
		defer mu.Unlock()
		if arts[name] == nil {
			arts[name] = artifact.NewMemory()
		}
		return offload.Wrap(s, arts[name], offload.Config{MaxInlineBytes: 64})
	})
}

func kdRandom(t *testing.T, deco func(name string, s store.Store) store.Store) {
	first, seeds, ops := randomRunSize("KDIFF", 12, 60)
	for seed := first; seed < first+uint64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := &kdHarness{t: t, ctx: context.Background(), bs: kdOpen(t, deco)}
			r := rand.New(rand.NewPCG(seed, 99))
			for i := 0; i < ops && !h.failed; i++ {
				h.randomOp(r)
				if i%10 == 9 {
					h.snapshot(fmt.Sprintf("op%d", i))
				}
			}
			if !h.failed {
				h.snapshot("final")
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Store-level random differential (the harness of differential_test.go)
// over decorated stacks.

// sdStrip hides the hash chain's fields on reads, so that a hash-chained
// stack compares with the model.
type sdStrip struct{ store.Wrapper }

func sdStripRecs(recs []*durable.StepRecord) {
	for _, r := range recs {
		if r != nil {
			r.RecordHash, r.PrevHash = "", ""
		}
	}
}

func (s sdStrip) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	recs, err := s.Store.LedgerList(ctx, p)
	sdStripRecs(recs)
	return recs, err
}

func (s sdStrip) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	r, err := store.FindCompleted(ctx, s.Store, runID, key)
	sdStripRecs([]*durable.StepRecord{r})
	return r, err
}

// sdStripNoClaim is sdStrip for a store without claims (the decorators'
// Wrapper answers RunClaim with ErrUnsupported).
type sdStripNoClaim struct{ store.Store }

func (s sdStripNoClaim) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	recs, err := s.Store.LedgerList(ctx, p)
	sdStripRecs(recs)
	return recs, err
}

func (s sdStripNoClaim) LedgerFindCompleted(ctx context.Context, runID, key string) (*durable.StepRecord, error) {
	r, err := store.FindCompleted(ctx, s.Store, runID, key)
	sdStripRecs([]*durable.StepRecord{r})
	return r, err
}

func sdOpenBackends(t *testing.T) []*dBackend {
	t.Helper()
	ctx := context.Background()
	var bs []*dBackend
	add := func(name string, reopenable, versionsInMemory bool, open func(n int) (store.Store, error)) {
		st, err := open(0)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		b := &dBackend{name: name, st: st, versionsInMemory: versionsInMemory, off: map[string]int64{}}
		if reopenable {
			b.open = open
		}
		bs = append(bs, b)
		t.Cleanup(func() { _ = b.st.Close() })
	}
	deco := func(st store.Store) store.Store {
		return sdStrip{store.Wrapper{Store: observe.Wrap(offload.Wrap(hashchain.Wrap(st), artifact.NewMemory(), offload.Config{}))}}
	}
	add("memory", false, false, func(int) (store.Store, error) { return memory.New(), nil })
	add("observe(offload(memory))", false, false, func(int) (store.Store, error) {
		return observe.Wrap(offload.Wrap(memory.New(), artifact.NewMemory(), offload.Config{})), nil
	})
	add("strip(hashchain(memory))", false, false, func(int) (store.Store, error) {
		return sdStrip{store.Wrapper{Store: hashchain.Wrap(memory.New())}}, nil
	})
	jdir := t.TempDir()
	add("deco(jsonfile)", true, true, func(int) (store.Store, error) {
		st, err := jsonfile.New(jsonfile.Config{Dir: jdir, NoSync: true})
		if err != nil {
			return nil, err
		}
		return sdStripNoClaim{observe.Wrap(offload.Wrap(hashchain.Wrap(st), artifact.NewMemory(), offload.Config{}))}, nil
	})
	for _, m := range []struct {
		name string
		cfg  sqlite.Config
	}{{"deco(sqlite)", sqlite.Config{}}, {"deco(sqlite-shared)", sqlite.Config{Shared: true}}} {
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		add(m.name, true, false, func(n int) (store.Store, error) {
			cfg := m.cfg
			cfg.Path = path
			cfg.Synchronous = "OFF"
			st, err := sqlite.New(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return deco(st), nil
		})
	}
	if url := os.Getenv("TEST_POSTGRES_URL"); url != "" && os.Getenv("DIFF_NO_PG") == "" {
		schema := fmt.Sprintf("agw_zsdiff_%d_%d", os.Getpid(), diffSchemaN.Add(1))
		t.Cleanup(func() {
			if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
			}
		})
		add("deco(postgres)", true, false, func(int) (store.Store, error) {
			st, err := postgres.New(ctx, postgres.Config{URL: url, Schema: schema, MaxConns: 2})
			if err != nil {
				return nil, err
			}
			return deco(st), nil
		})
	}
	return bs
}

func sdRunSeed(t *testing.T, seed uint64, nOps int, f dFeatures) {
	h := &dHarness{t: t, ctx: context.Background(), bs: sdOpenBackends(t), m: newDModel(),
		g: &dGen{r: rand.New(rand.NewPCG(seed, 0x5eed)), f: f, seed: seed, pool: slices.Clone(dPool)}, counts: map[string]int{}}
	ops := []weightedOp{
		{14, h.opCreate}, {16, h.opUpdate}, {4, h.opStale}, {2, h.opUnknown}, {6, h.opGet}, {8, h.opList},
		{6, h.opIndex}, {6, h.opChildren}, {7, h.opDue}, {3, h.opDelete}, {5, h.opLedgerAppend}, {6, h.opLedgerRead},
		{1, h.opLedgerDelete}, {2, h.opBad}, {5, h.opCommandAppend}, {4, h.opCommandRead}, {2, h.opCommandDelete}, {3, h.opCursor},
		{3, h.opClaim}, {2, h.opReopen},
	}
	h.runOps(ops, nOps, true)
}

// TestDecoratedBackendsAgree runs the store-level random operations
// of TestBackendsAgree on decorated stacks.
func TestDecoratedBackendsAgree(t *testing.T) {
	seeds := 40
	first := uint64(1)
	if s := os.Getenv("SDIFF_SEED"); s != "" {
		fmt.Sscan(s, &first)
		seeds = 1
	}
	if s := os.Getenv("SDIFF_SEEDS"); s != "" {
		fmt.Sscan(s, &seeds)
	}
	f := featuresWithout(t, knownOff+","+os.Getenv("DIFF_OFF"))
	for seed := first; seed < first+uint64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { sdRunSeed(t, seed, 60, f) })
	}
}

// randomRunSize is the first seed, the number of seeds and the operations
// per seed of a random differential: the defaults given, unless
// <prefix>_SEED (one seed, to replay a failure), <prefix>_SEEDS or
// <prefix>_OPS say otherwise.
func randomRunSize(prefix string, seeds, ops int) (first uint64, n, perSeed int) {
	first = 1
	if s := os.Getenv(prefix + "_SEED"); s != "" {
		fmt.Sscan(s, &first)
		seeds = 1
	}
	if s := os.Getenv(prefix + "_SEEDS"); s != "" {
		fmt.Sscan(s, &seeds)
	}
	if s := os.Getenv(prefix + "_OPS"); s != "" {
		fmt.Sscan(s, &ops)
	}
	return first, seeds, ops
}
