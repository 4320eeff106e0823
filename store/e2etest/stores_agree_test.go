package e2etest_test

// Seeded randomized differential of the runtime on every backend (memory,
// JSON files, SQLite, SQLite shared, PostgreSQL when TEST_POSTGRES_URL is
// set): the same operations — starts under explicit run ids (new, repeated,
// conflicting), ticks with step caps, resumes with the right, a wrong, an
// empty and a stale wait key (strict or not), events emitted to several
// listeners (session and global scope, with and without deadlines),
// WAIT_UNTIL, START_SUBWORKFLOW sync / async / async+wait, node errors,
// failing effects, Pause / ResumeRun / Cancel, the scheduler's polls after
// the fake clock moved — and the store queries (RunList with each filter,
// RunListDue at several instants, RunNextDue, RunIndex with each filter,
// RunListChildren, LedgerList with after/limit, LedgerCount, the command
// inbox and its cursors) are applied in lockstep; every answer, error class
// (errors.Is / errors.As), final run state and ledger is compared with the
// in-memory store's, order included. Clock and ids are injected, so nothing
// needs normalising but handler durations.
//
// Complements kernel_differential_test.go (decorated stacks, reopens,
// limits) with the operations and filters listed above. The one documented
// difference met (docs/compatibility.md, "Command inbox": CommandLastSeq
// of the in-memory store stays the counter after deletes) is normalised by
// agreeLastSeq. AGREE_SEED / AGREE_SEEDS / AGREE_OPS widen or narrow a run;
// -v logs what the reference answered, by kind.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

var agreeT0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type agreeBackend struct {
	name string
	st   store.Store
	clk  *runtimetest.Clock
	rt   *runtime.Runtime
	sch  *scheduler.Scheduler
	idN  int
}

func agreeEff(t durable.EffectType, payload map[string]any, key, next string) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		p := map[string]any{}
		for k, v := range payload {
			p[k] = v
		}
		if t == durable.EffectWaitUntil {
			p["until"] = durable.FormatTime(rc.Now().Add(45 * time.Second))
		}
		return runtime.Request(&durable.Effect{Type: t, Payload: p, ResultKey: key}, next), nil
	}
}

func agreeDone(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
	out := map[string]any{}
	for _, k := range []string{"answer", "evt", "child", "woke", "sent", "steps"} {
		if v, ok := run.Vars[k]; ok {
			out[k] = v
		}
	}
	return runtime.Complete(out), nil
}

func agreeWorkflows() []*runtime.Workflow {
	step := func(next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n := int64(0)
			switch v := run.Vars["steps"].(type) {
			case int64:
				n = v
			case float64:
				n = int64(v)
			}
			run.Vars["steps"] = n + 1
			return runtime.Next(next), nil
		}
	}
	sub := func(wf string, async, wait bool) runtime.NodeFunc {
		p := map[string]any{"workflow_id": wf}
		if async {
			p["async"] = true
		}
		if wait {
			p["wait"] = true
		}
		return agreeEff(durable.EffectStartSubworkflow, p, "child", "done")
	}
	return []*runtime.Workflow{
		{ID: "chain", Entry: "a", Nodes: map[string]runtime.NodeFunc{"a": step("b"), "b": step("c"), "c": step("done"), "done": agreeDone}},
		{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask":  agreeEff(durable.EffectAskUser, map[string]any{"prompt": "Continue?", "choices": []any{"yes", "no"}}, "answer", "done"),
			"done": agreeDone}},
		{ID: "ask2", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask":  agreeEff(durable.EffectAskUser, map[string]any{"prompt": "first?"}, "first", "ask2"),
			"ask2": agreeEff(durable.EffectAskUser, map[string]any{"prompt": "second?"}, "answer", "done"),
			"done": agreeDone}},
		{ID: "listen", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": agreeEff(durable.EffectWaitEvent, map[string]any{"name": "ping"}, "evt", "done"), "done": agreeDone}},
		{ID: "listen_to", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": agreeEff(durable.EffectWaitEvent, map[string]any{"name": "ping", "timeout_s": 30}, "evt", "done"), "done": agreeDone}},
		{ID: "listen_glob", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": agreeEff(durable.EffectWaitEvent, map[string]any{"name": "ping", "scope": "global", "timeout_s": 90}, "evt", "done"), "done": agreeDone}},
		{ID: "emitter", Entry: "e", Nodes: map[string]runtime.NodeFunc{
			"e":    agreeEff(durable.EffectEmitEvent, map[string]any{"name": "ping", "payload": map[string]any{"n": 1}}, "sent", "g"),
			"g":    agreeEff(durable.EffectEmitEvent, map[string]any{"name": "ping", "scope": "global", "max_steps": 3}, "sent2", "done"),
			"done": agreeDone}},
		{ID: "sleep", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": agreeEff(durable.EffectWaitUntil, nil, "woke", "done"), "done": agreeDone}},
		{ID: "sync", Entry: "s", Nodes: map[string]runtime.NodeFunc{"s": sub("chain", false, false), "done": agreeDone}},
		{ID: "sync_ask", Entry: "s", Nodes: map[string]runtime.NodeFunc{"s": sub("ask", false, false), "done": agreeDone}},
		{ID: "async", Entry: "s", Nodes: map[string]runtime.NodeFunc{"s": sub("listen", true, false), "done": agreeDone}},
		{ID: "async_wait", Entry: "s", Nodes: map[string]runtime.NodeFunc{"s": sub("ask2", true, true), "done": agreeDone}},
		{ID: "nested", Entry: "s", Nodes: map[string]runtime.NodeFunc{"s": sub("async_wait", false, false), "done": agreeDone}},
		{ID: "nodeerr", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": step("b"),
			"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.StepPlan{}, errors.New("kaboom")
			}}},
		{ID: "fail", Entry: "f", Nodes: map[string]runtime.NodeFunc{"f": agreeEff("fail", map[string]any{"x": 1}, "r", "done"), "done": agreeDone}},
	}
}

var agreeWorkflowIDs = []string{"chain", "ask", "ask2", "listen", "listen_to", "listen_glob", "emitter", "sleep",
	"sync", "sync_ask", "async", "async_wait", "nested", "nodeerr", "fail", "unknown_wf"}

func agreeOpen(t *testing.T) []*agreeBackend {
	t.Helper()
	ctx := context.Background()
	type opener struct {
		name string
		open func() (store.Store, error)
	}
	openers := []opener{
		{"memory", func() (store.Store, error) { return memory.New(), nil }},
		{"jsonfile", func() (store.Store, error) {
			return jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
		}},
		{"sqlite", func() (store.Store, error) {
			return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite3"), Synchronous: "OFF"})
		}},
		{"sqlite-shared", func() (store.Store, error) {
			return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite3"), Synchronous: "OFF", Shared: true})
		}},
	}
	if url := os.Getenv("TEST_POSTGRES_URL"); url != "" {
		schema := fmt.Sprintf("agw_sagree_%d_%d", os.Getpid(), diffSchemaN.Add(1))
		t.Cleanup(func() {
			if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
			}
		})
		openers = append(openers, opener{"postgres", func() (store.Store, error) {
			return postgres.New(ctx, postgres.Config{URL: url, Schema: schema, MaxConns: 2})
		}})
	}
	var bs []*agreeBackend
	for _, o := range openers {
		st, err := o.open()
		if err != nil {
			t.Fatalf("open %s: %v", o.name, err)
		}
		b := &agreeBackend{name: o.name, st: st, clk: runtimetest.NewClock(agreeT0)}
		t.Cleanup(func() { _ = b.st.Close() })
		reg, err := runtime.NewRegistry(agreeWorkflows()...)
		if err != nil {
			t.Fatal(err)
		}
		b.rt, err = runtime.New(runtime.Config{Store: st, Registry: reg, Clock: b.clk.Now,
			NewID: func() string { b.idN++; return fmt.Sprintf("id-%04d", b.idN) },
			Handlers: map[durable.EffectType]runtime.Handler{
				"fail": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
					return runtime.Failed("boom"), nil
				}},
			}})
		if err != nil {
			t.Fatal(err)
		}
		b.sch, err = scheduler.New(scheduler.Config{Runtime: b.rt, Clock: b.clk.Now, PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return bs
}

// agreeErr names an error by its class (errors.Is / errors.As) and its text
// with backend names masked.
func agreeErr(err error) string {
	if err == nil {
		return "ok"
	}
	class := errClass(err)
	var stale *runtime.StaleResumeError
	var ident *runtime.IdentityConflictError
	var wnf *runtime.WorkflowNotFoundError
	switch {
	case errors.As(err, &stale):
		class = "StaleResume"
	case errors.As(err, &ident):
		class = "IdentityConflict"
	case errors.As(err, &wnf):
		class = "WorkflowNotFound"
	case errors.Is(err, runtime.ErrRunPaused):
		class = "RunPaused"
	case errors.Is(err, runtime.ErrRunClaimed):
		class = "RunClaimed"
	}
	return "err(" + class + "): " + kdStoreRE.ReplaceAllString(err.Error(), "STORE")
}

func agreeRun(r *durable.RunState, err error) string {
	if err != nil {
		return agreeErr(err)
	}
	return kdRun(r, nil)
}

func agreeRecs(recs []*durable.StepRecord, err error) string {
	if err != nil {
		return agreeErr(err)
	}
	return kdRecs(recs, nil)
}

func agreeIDs(runs []*durable.RunState, err error) string {
	if err != nil {
		return agreeErr(err)
	}
	return kdIDs(runs, nil)
}

func agreeCmds(cmds []*durable.CommandRecord, next int64, err error) string {
	if err != nil {
		return agreeErr(err)
	}
	parts := []string{}
	for _, c := range cmds {
		p, _ := pyjson.Marshal(c.Payload, pyjson.Line)
		parts = append(parts, fmt.Sprintf("{#%d %s run=%s type=%s ts=%s client=%s payload=%s}", c.Seq, c.CommandID, c.RunID, c.Type, fmtT(c.TS.Time), c.ClientID, p))
	}
	return fmt.Sprintf("next=%d [%s]", next, strings.Join(parts, " "))
}

// agreeLastSeq is CommandLastSeq, but the highest stored seq on the in-memory
// store too: there it stays the counter after deletes, as documented in
// docs/compatibility.md ("Command inbox").
func agreeLastSeq(ctx context.Context, b *agreeBackend) (int64, error) {
	last, err := b.st.CommandLastSeq(ctx)
	if err != nil || b.name != "memory" {
		return last, err
	}
	all, _, err := b.st.CommandListAfter(ctx, 0, 1<<30)
	if err != nil {
		return 0, err
	}
	if n := len(all); n > 0 {
		return all[n-1].Seq, nil
	}
	return 0, nil
}

type agreeHarness struct {
	t      *testing.T
	ctx    context.Context
	bs     []*agreeBackend
	r      *rand.Rand
	trace  []string
	failed bool
	ids    []string
	nextID int
	keys   map[string][]string // wait keys seen per run (reference), for stale resumes
	cmdN   int
	stats  map[string]int // what the reference answered, by kind (logged with -v)
}

func (h *agreeHarness) do(op string, f func(b *agreeBackend) string) string {
	h.t.Helper()
	h.trace = append(h.trace, op)
	var ref string
	for i, b := range h.bs {
		got := f(b)
		if i == 0 {
			ref = got
			kind, _, _ := strings.Cut(op, " ")
			if j := strings.Index(got, "err("); j >= 0 {
				kind += " " + strings.SplitN(got[j:], ")", 2)[0] + ")"
			} else if strings.HasPrefix(got, `{"run_id"`) {
				kind += " " + strings.SplitN(strings.SplitN(got, `"status": "`, 2)[1], `"`, 2)[0]
			}
			if !strings.Contains(op, " state ") && !strings.Contains(op, " ledger ") {
				h.stats[kind]++
			}
			continue
		}
		if got != ref && !h.failed {
			h.failed = true
			tr := h.trace
			if len(tr) > 60 {
				tr = tr[len(tr)-60:]
			}
			h.t.Errorf("%s differs on %s\n  %s: %s\n  memory: %s\ntrace (last %d):\n  %s", op, b.name, b.name, got, ref, len(tr), strings.Join(tr, "\n  "))
		}
	}
	return ref
}

func (h *agreeHarness) learn() {
	all, _ := h.bs[0].st.RunList(h.ctx, &store.RunListParams{Limit: 10000})
	for _, r := range all {
		found := false
		for _, id := range h.ids {
			if id == r.RunID {
				found = true
				break
			}
		}
		if !found {
			h.ids = append(h.ids, r.RunID)
		}
		if r.Waiting != nil && r.Waiting.WaitKey != "" {
			ks := h.keys[r.RunID]
			if len(ks) == 0 || ks[len(ks)-1] != r.Waiting.WaitKey {
				h.keys[r.RunID] = append(ks, r.Waiting.WaitKey)
			}
		}
	}
}

func (h *agreeHarness) pick() string {
	if len(h.ids) == 0 || h.r.IntN(20) == 0 {
		return "nope"
	}
	return h.ids[h.r.IntN(len(h.ids))]
}

func agreePick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func (h *agreeHarness) snapshot(tag string) {
	h.learn()
	for _, id := range h.ids {
		h.do(tag+" state "+id, func(b *agreeBackend) string { return agreeRun(b.rt.GetState(h.ctx, id)) })
		h.do(tag+" ledger "+id, func(b *agreeBackend) string {
			return agreeRecs(b.st.LedgerList(h.ctx, &store.LedgerListParams{RunID: id}))
		})
	}
	h.do(tag+" list", func(b *agreeBackend) string { return agreeIDs(b.st.RunList(h.ctx, &store.RunListParams{Limit: 10000})) })
	h.do(tag+" index", func(b *agreeBackend) string {
		return rowsText(b.st.RunIndex(h.ctx, &store.RunIndexParams{Limit: 10000}))
	})
	h.do(tag+" commands", func(b *agreeBackend) string {
		c, n, err := b.st.CommandListAfter(h.ctx, 0, 10000)
		return agreeCmds(c, n, err)
	})
}

func (h *agreeHarness) op() {
	r := h.r
	switch k := r.IntN(100); {
	case k < 18: // start
		p := runtime.StartParams{WorkflowID: agreePick(r, agreeWorkflowIDs...), SessionID: agreePick(r, "s1", "s2", " s1 "),
			Vars: map[string]any{"v": int64(r.IntN(3))}}
		if r.IntN(4) == 0 {
			p.ActorID = "actor"
		}
		if len(h.ids) > 0 && r.IntN(8) == 0 {
			p.ParentRunID = h.pick() // a host-given parent (possibly unknown)
		}
		if len(h.ids) > 0 && r.IntN(6) == 0 {
			p.RunID = h.ids[r.IntN(len(h.ids))] // existing: same identity or a conflict
		} else {
			h.nextID++
			p.RunID = fmt.Sprintf("r%03d", h.nextID)
		}
		tick := r.IntN(2) == 0
		h.do(fmt.Sprintf("start %+v tick=%v", p, tick), func(b *agreeBackend) string {
			id, err := b.rt.Start(h.ctx, p)
			if err != nil || !tick {
				return id + " " + agreeErr(err)
			}
			return id + " " + agreeRun(b.rt.Tick(h.ctx, id, runtime.TickOptions{}))
		})
	case k < 36: // tick
		id, steps := h.pick(), agreePick(r, 0, 1, 2, 5)
		h.do(fmt.Sprintf("tick %s %d", id, steps), func(b *agreeBackend) string {
			return agreeRun(b.rt.Tick(h.ctx, id, runtime.TickOptions{MaxSteps: steps}))
		})
	case k < 52: // resume
		id := h.pick()
		if w, _ := h.bs[0].st.RunList(h.ctx, &store.RunListParams{Status: durable.RunWaiting, Limit: 10000}); len(w) > 0 && r.IntN(4) > 0 {
			id = w[r.IntN(len(w))].RunID // mostly a waiting run
		}
		mode := max(0, r.IntN(6)-2) // 0 (the right key) half the time
		strict := r.IntN(2) == 0
		// the key is chosen on the reference and used everywhere
		key := ""
		switch mode {
		case 0:
			if cur, err := h.bs[0].rt.GetState(h.ctx, id); err == nil && cur.Waiting != nil {
				key = cur.Waiting.WaitKey
			}
		case 1:
			key = "wrong-key"
		case 3:
			if ks := h.keys[id]; len(ks) > 0 {
				key = ks[0] // the first key the run waited on: stale once it moved on
			}
		}
		steps := agreePick(r, 0, 0, 1, -1)
		h.do(fmt.Sprintf("resume %s key=%q strict=%v steps=%d", id, key, strict, steps), func(b *agreeBackend) string {
			return agreeRun(b.rt.Resume(h.ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Strict: strict, MaxSteps: steps,
				Payload: map[string]any{"text": "yes", "n": int64(mode)}}))
		})
	case k < 60: // emit
		p := runtime.EmitParams{Name: "ping", Payload: map[string]any{"from": "host"}}
		switch r.IntN(5) {
		case 0:
			p.SessionID = "s1"
		case 1:
			p.SessionID = "s2"
		case 2:
			p.Scope, p.WorkflowID = "workflow", agreePick(r, "listen", "listen_to")
		case 3:
			p.Scope, p.RunID = "run", h.pick()
		default:
			p.Scope = "global"
		}
		h.do(fmt.Sprintf("emit %+v", p), func(b *agreeBackend) string {
			ids, err := b.rt.EmitEvent(h.ctx, p)
			return fmt.Sprintf("%v %s", ids, agreeErr(err))
		})
	case k < 68: // time passes; the scheduler polls
		d := time.Duration(agreePick(r, 5, 20, 31, 46, 91)) * time.Second
		h.do(fmt.Sprintf("advance %s; poll", d), func(b *agreeBackend) string {
			b.clk.Advance(d)
			n, err := b.sch.PollOnce(h.ctx)
			return fmt.Sprintf("%d %s", n, agreeErr(err))
		})
	case k < 72:
		id, reason := h.pick(), agreePick(r, "", "stop")
		h.do("cancel "+id+" "+reason, func(b *agreeBackend) string { return agreeRun(b.rt.Cancel(h.ctx, id, reason)) })
	case k < 77:
		id := h.pick()
		h.do("pause "+id, func(b *agreeBackend) string { return agreeRun(b.rt.Pause(h.ctx, id, "hold")) })
	case k < 82:
		id := h.pick()
		h.do("resume-run "+id, func(b *agreeBackend) string { return agreeRun(b.rt.ResumeRun(h.ctx, id)) })
	case k < 90: // command inbox
		switch r.IntN(5) {
		case 0, 1:
			h.cmdN++
			cid := fmt.Sprintf("cmd-%03d", h.cmdN)
			if h.cmdN > 1 && r.IntN(4) == 0 {
				cid = fmt.Sprintf("cmd-%03d", 1+r.IntN(h.cmdN-1)) // duplicate
			}
			run := h.pick()
			typ := agreePick(r, "pause", "resume", "cancel", "emit_event")
			client := agreePick(r, "", "cli")
			h.do(fmt.Sprintf("command-append %s %s %s", cid, run, typ), func(b *agreeBackend) string {
				res, err := b.st.CommandAppend(h.ctx, &durable.CommandRecord{CommandID: cid, RunID: run, Type: typ,
					Payload: map[string]any{"k": typ}, TS: durable.Time{Time: b.clk.Now()}, ClientID: client})
				return fmt.Sprintf("%+v %s", res, agreeErr(err))
			})
		case 2:
			after, limit := int64(r.IntN(8)), agreePick(r, 0, 1, 2, 5, -1)
			h.do(fmt.Sprintf("command-list %d %d", after, limit), func(b *agreeBackend) string {
				c, n, err := b.st.CommandListAfter(h.ctx, after, limit)
				last, err2 := agreeLastSeq(h.ctx, b)
				return agreeCmds(c, n, err) + fmt.Sprintf(" last=%d %s", last, agreeErr(err2))
			})
		case 3:
			cons := agreePick(r, store.DefaultConsumer, "other")
			cur := int64(r.IntN(10))
			save := r.IntN(2) == 0
			h.do(fmt.Sprintf("cursor %s save=%v %d", cons, save, cur), func(b *agreeBackend) string {
				var err error
				if save {
					err = b.st.CursorSave(h.ctx, cons, cur)
				}
				got, err2 := b.st.CursorLoad(h.ctx, cons)
				return fmt.Sprintf("%s %d %s", agreeErr(err), got, agreeErr(err2))
			})
		default:
			run := h.pick()
			h.do("command-delete "+run, func(b *agreeBackend) string {
				n, err := b.st.CommandDeleteByRun(h.ctx, run)
				return fmt.Sprintf("%d %s", n, agreeErr(err))
			})
		}
	default: // store queries
		h.query()
	}
	h.learn()
}

func (h *agreeHarness) query() {
	r := h.r
	limit := agreePick(r, 0, 1, 2, 3, -1, 1000)
	switch r.IntN(8) {
	case 0:
		p := &store.RunListParams{Limit: limit}
		switch r.IntN(6) {
		case 0:
			p.Status = agreePick(r, durable.RunRunning, durable.RunWaiting, durable.RunCompleted, durable.RunFailed, durable.RunCancelled)
		case 1:
			p.WaitReason = agreePick(r, durable.WaitUser, durable.WaitEvent, durable.WaitUntil, durable.WaitSubworkflow)
			if r.IntN(2) == 0 {
				p.Status = durable.RunWaiting
			}
		case 2:
			p.WorkflowID = agreePick(r, agreeWorkflowIDs...)
		case 3:
			p.SessionID = agreePick(r, "s1", "s2", " s1 ")
		case 4:
			p.ParentID = h.pick()
		default:
			p.WaitKeys = []string{"evt:session:s1:ping", "evt:session:s2:ping", "evt:global:global:ping"}
			if ks := h.keys[h.pick()]; len(ks) > 0 {
				p.WaitKeys = append(p.WaitKeys, ks[len(ks)-1])
			}
		}
		if r.IntN(3) == 0 { // and a second filter
			p.SessionID = agreePick(r, "s1", "s2")
			p.WorkflowID = agreePick(r, "ask", "ask2", "listen", "listen_to", "chain")
		}
		h.do(fmt.Sprintf("list %+v", *p), func(b *agreeBackend) string { return agreeIDs(b.st.RunList(h.ctx, p)) })
	case 1:
		d := time.Duration(agreePick(r, 0, 29, 30, 31, 45, 46, 90, 3600)) * time.Second
		lim := agreePick(r, 0, 1, 2, 1000)
		h.do(fmt.Sprintf("due +%s %d", d, lim), func(b *agreeBackend) string {
			due, err := b.st.RunListDue(h.ctx, &store.RunListDueParams{Now: b.clk.Now().Add(d), Limit: lim})
			next, err2 := b.st.RunNextDue(h.ctx)
			return fmt.Sprintf("%s %s | %s %s", dueText(due, err), agreeErr(err), fmtT(next.Time), agreeErr(err2))
		})
	case 2:
		p := &store.RunIndexParams{Limit: limit}
		switch r.IntN(4) {
		case 0:
			p.Status = agreePick(r, durable.RunRunning, durable.RunWaiting, durable.RunCompleted, durable.RunFailed, durable.RunCancelled)
		case 1:
			p.WorkflowID = agreePick(r, agreeWorkflowIDs...)
		case 2:
			p.SessionID = agreePick(r, "s1", "s2", " s2")
		default:
			p.RootOnly = true
		}
		if r.IntN(3) == 0 {
			p.Status = agreePick(r, durable.RunWaiting, durable.RunCompleted)
			p.SessionID = agreePick(r, "s1", "s2")
		}
		h.do(fmt.Sprintf("index %+v", *p), func(b *agreeBackend) string { return rowsText(b.st.RunIndex(h.ctx, p)) })
	case 3:
		id := h.pick()
		st := agreePick(r, durable.RunStatus(""), durable.RunWaiting, durable.RunCompleted, durable.RunRunning)
		h.do(fmt.Sprintf("children %s %q", id, st), func(b *agreeBackend) string { return agreeIDs(b.st.RunListChildren(h.ctx, id, st)) })
	case 4, 5:
		id := h.pick()
		after, lim := int64(r.IntN(6)), agreePick(r, 0, 1, 2, 4)
		h.do(fmt.Sprintf("ledger %s after=%d limit=%d", id, after, lim), func(b *agreeBackend) string {
			recs, err := b.st.LedgerList(h.ctx, &store.LedgerListParams{RunID: id, After: after, Limit: lim})
			n, err2 := b.st.LedgerCount(h.ctx, id)
			return agreeRecs(recs, err) + fmt.Sprintf(" count=%d %s", n, agreeErr(err2))
		})
	case 6:
		id := h.pick()
		h.do("get "+id, func(b *agreeBackend) string {
			r, err := b.st.RunGet(h.ctx, id)
			return agreeRun(r, err)
		})
	default:
		id := h.pick()
		h.do("runtime-ledger "+id, func(b *agreeBackend) string { return agreeRecs(b.rt.GetLedger(h.ctx, id)) })
	}
}

func TestStoresAgreeOnRandomOperations(t *testing.T) {
	seeds, ops := 6, 90
	if raceEnabled {
		seeds = 2 // the race detector slows the runtime several times
	}
	first, seeds, ops := randomRunSize("AGREE", seeds, ops)
	for seed := first; seed < first+uint64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := &agreeHarness{t: t, ctx: context.Background(), bs: agreeOpen(t), r: rand.New(rand.NewPCG(seed, 7)), keys: map[string][]string{}, stats: map[string]int{}}
			for i := 0; i < ops && !h.failed; i++ {
				h.op()
				if i%15 == 14 && !h.failed {
					h.snapshot(fmt.Sprintf("op%d", i))
				}
			}
			if !h.failed {
				h.snapshot("final")
			}
			for _, id := range h.ids {
				if st, err := h.bs[0].st.RunGet(h.ctx, id); err == nil {
					h.stats["=final "+string(st.Status)]++
				}
			}
			t.Logf("runs %d, answers by kind %v", len(h.ids), h.stats)
		})
	}
}
